package mysql

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/load"
	"github.com/rowttl/rowttl/query"
	rsql "github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
	vtmysql "vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/mysql/replication"
	"vitess.io/vitess/go/mysql/sqlerror"
	"vitess.io/vitess/go/sqltypes"
	vtlog "vitess.io/vitess/go/vt/log"
	querypb "vitess.io/vitess/go/vt/proto/query"
	"vitess.io/vitess/go/vt/vtenv"
)

// Options configure a Server. Zero values take the defaults below.
type Options struct {
	// User and Password are the one account; with User empty any user
	// and password are accepted.
	User, Password string
	// Log receives a line per connection, per failed login and per
	// refused connection; nil discards them.
	Log *log.Logger
	// MaxConnections is the number of connections served at once
	// (default 1024, Doris's qe_max_connection); past it clients get
	// error 1040.
	MaxConnections int
	// IdleTimeout closes a connection that sends no command for that long
	// (default 8h, MySQL's wait_timeout).
	IdleTimeout time.Duration
	// ReadTimeout bounds the handshake and each read inside a command
	// (default 30s); WriteTimeout each write of a result (default 60s).
	ReadTimeout, WriteTimeout time.Duration
	// MaxAllowedPacket is the largest command accepted (default 64 MiB,
	// MySQL's max_allowed_packet); a larger one ends its connection with
	// error 1153.
	MaxAllowedPacket int64
	// Registerer receives the metrics (nil: a private registry).
	Registerer prometheus.Registerer
	// NewSession makes each connection's session (default sql.NewSession).
	NewSession func(*table.DB) *rsql.Session
	// LocalFiles is the directory whose files the table function local()
	// may read (file_path is relative to it); empty refuses local().
	LocalFiles string
	// LoadWorkers is the pool of the loads that run beside the server's
	// statements (default load.SharedWorkers(), the one a load.Server
	// uses): its busy slots count as statements running when a scan's
	// parallelism is chosen, since a load computing keeps a processor
	// busy as a statement does.
	LoadWorkers *load.Workers
}

func (o *Options) defaults() {
	if o.MaxConnections <= 0 {
		o.MaxConnections = 1024
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = 8 * time.Hour
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = 30 * time.Second
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = time.Minute
	}
	if o.MaxAllowedPacket <= 0 {
		o.MaxAllowedPacket = 64 << 20
	}
	if o.NewSession == nil {
		o.NewSession = rsql.NewSession
	}
	if o.LoadWorkers == nil {
		o.LoadWorkers = load.SharedWorkers()
	}
}

// Server serves the MySQL protocol on a data directory.
type Server struct {
	db      *table.DB
	o       Options
	env     *vtenv.Environment
	metrics *metrics
	open    atomic.Int64 // admitted connections
	running atomic.Int64 // statements running
	// greetSha2 greets with caching_sha2_password (tests: it makes
	// go-sql-driver use it).
	greetSha2 atomic.Bool

	mu struct {
		sync.Mutex
		conns map[uint32]*connState // logged in, by id
		raw   map[*conn]struct{}    // admitted, logged in or not
	}
	wg     sync.WaitGroup // admitted connections not yet closed
	sessMu sync.Mutex     // makes connections' sessions one at a time
}

var quietLibrary sync.Once

// New returns a server on db.
func New(db *table.DB, o Options) (*Server, error) {
	o.defaults()
	// The library logs through its own logger; this package logs what an
	// operator needs itself.
	quietLibrary.Do(func() { vtlog.SwapLogger(slog.New(slog.DiscardHandler)) })
	env, err := vtenv.New(vtenv.Options{MySQLServerVersion: "8.0.40"})
	if err != nil {
		return nil, err
	}
	s := &Server{db: db, o: o, env: env, metrics: newMetrics(o.Registerer)}
	s.mu.conns = map[uint32]*connState{}
	s.mu.raw = map[*conn]struct{}{}
	return s, nil
}

func (s *Server) logf(format string, args ...any) {
	if s.o.Log != nil {
		s.o.Log.Printf(format, args...)
	}
}

// Serve answers connections on ln until ctx is done, then stops accepting,
// cancels the running statements, closes every connection and returns
// once none is served any more: every statement has returned and
// released its batches by then.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	l, err := vtmysql.NewListenerWithConfig(vtmysql.ListenerConfig{
		Listener:           &limitListener{Listener: ln, s: s},
		AuthServer:         &authServer{s: s},
		Handler:            &handler{s: s},
		ConnReadBufferSize: 16 << 10,
		MultiQuery:         true,
		FlushDelay:         0,
	})
	if err != nil {
		return err
	}
	// The handshake's version is the one version() and @@version
	// return: Doris FE's 5.7.99, which clients and BI tools know, then
	// rowttl's.
	l.ServerVersion = rsql.VersionString()
	done := make(chan struct{})
	go func() {
		l.Accept()
		close(done)
	}()
	<-ctx.Done()
	l.Shutdown()
	<-done
	// Every admitted connection ends: running statements are cancelled,
	// and connections still in their handshake are closed too, so that
	// none waits out its read timeout.
	s.mu.Lock()
	for _, st := range s.mu.conns {
		st.stop()
	}
	raw := make([]*conn, 0, len(s.mu.raw))
	for c := range s.mu.raw {
		raw = append(raw, c)
	}
	s.mu.Unlock()
	for _, c := range raw {
		c.cut()
	}
	s.wg.Wait()
	return nil
}

// track adds an admitted connection or removes a closed one. The library
// closes a connection last, after its command loop and ConnectionClosed
// have returned, so a removed connection runs no statement any more.
func (s *Server) track(c *conn, add bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		s.mu.raw[c] = struct{}{}
		s.wg.Add(1)
		return
	}
	delete(s.mu.raw, c)
	s.wg.Done()
}

// connState is one connection: its session and what SHOW PROCESSLIST
// shows of it.
type connState struct {
	id    uint32
	user  string
	host  string
	conn  *conn
	vc    *vtmysql.Conn
	since time.Time
	ctx   context.Context
	stop  context.CancelFunc

	sess *rsql.Session // used by the connection's goroutine only
	// rowsText and rows remember whether the connection's last statement
	// text yields a result set (see returnsRows); the connection's
	// goroutine alone uses them.
	rowsText string
	rows     bool

	mu struct {
		sync.Mutex
		cancel context.CancelFunc // the running statement's
	}
	queries int
}

func (st *connState) begin(cancel context.CancelFunc) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.mu.cancel = cancel
}

func (st *connState) end() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.mu.cancel = nil
}

// cancelQuery cancels the running statement, if any.
func (st *connState) cancelQuery() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.mu.cancel != nil {
		st.mu.cancel()
	}
}

// kill cancels the running statement and closes the connection.
func (st *connState) kill() {
	st.stop()
	if st.conn != nil {
		st.conn.cut()
	}
}

// handler is the library's Handler: the commands of every connection.
type handler struct {
	vtmysql.UnimplementedHandler
	s *Server
}

func (h *handler) Env() *vtenv.Environment { return h.s.env }

func (h *handler) NewConnection(c *vtmysql.Conn) {
	c.StatusFlags |= vtmysql.ServerStatusAutocommit
}

// ConnectionReady starts serving commands. The library may already have
// run the handshake's database (USE) through ComQuery, which made the
// connection's state.
func (h *handler) ConnectionReady(c *vtmysql.Conn) {
	st := h.s.ensureState(c)
	if st.conn != nil {
		st.conn.ready.Store(true)
	}
	h.s.logf("mysql connection %d from %s: user '%s'", st.id, st.host, st.user)
}

// ensureState returns the connection's state, made at its first use.
func (s *Server) ensureState(c *vtmysql.Conn) *connState {
	if st, ok := c.ClientData.(*connState); ok {
		return st
	}
	ctx, stop := context.WithCancel(context.Background())
	st := &connState{id: c.ConnectionID, user: c.User, host: c.RemoteAddr().String(), vc: c, since: time.Now(),
		ctx: ctx, stop: stop}
	st.sess = s.newSession(st)
	if cn, ok := c.GetRawConn().(*conn); ok {
		st.conn = cn
		cn.state = st
	}
	c.ClientData = st
	s.mu.Lock()
	s.mu.conns[st.id] = st
	s.mu.Unlock()
	s.metrics.connections.Inc()
	s.metrics.open.Inc()
	return st
}

// newSession makes a connection's session: its process in SHOW
// PROCESSLIST has the id the handshake announced, its user and host are
// the connection's, its server variables the server's.
func (s *Server) newSession(st *connState) *rsql.Session {
	// One at a time, so that one session's provisional id never takes
	// the id another connection announced.
	s.sessMu.Lock()
	sess := s.o.NewSession(s.db)
	if err := sess.Process().SetID(int64(st.id)); err != nil {
		s.logf("mysql connection %d: %v; SHOW PROCESSLIST shows it as %d", st.id, err, sess.Process().ID())
	}
	s.sessMu.Unlock()
	sess.SetClient(st.user, clientHost(st.host))
	sess.SetServerVariables(s.serverVariables())
	sess.RestrictLocalFiles(s.o.LocalFiles)
	return sess
}

func (h *handler) ConnectionClosed(c *vtmysql.Conn) {
	st, ok := c.ClientData.(*connState)
	if !ok {
		return
	}
	st.stop()
	st.sess.Close()
	h.s.mu.Lock()
	delete(h.s.mu.conns, st.id)
	h.s.mu.Unlock()
	h.s.metrics.open.Dec()
	h.s.logf("mysql connection %d from %s closed after %s, %d statement(s)", st.id, st.host, time.Since(st.since).Round(time.Millisecond), st.queries)
}

func (h *handler) ComResetConnection(c *vtmysql.Conn) {
	if st, ok := c.ClientData.(*connState); ok {
		st.sess.Close()
		st.sess = h.s.newSession(st)
		st.end()
	}
}

func (h *handler) WarningCount(*vtmysql.Conn) uint16 { return 0 }

// ComQuery runs one statement (the library sends COM_INIT_DB here as USE).
func (h *handler) ComQuery(c *vtmysql.Conn, query string, callback func(*sqltypes.Result) error) error {
	st := h.s.ensureState(c)
	if err := h.s.run(st, query, rowWriterOf(st), callback); err != nil {
		return sqlError(err)
	}
	return nil
}

// ComQueryMulti runs the statements of one COM_QUERY in order, each with
// its own result, and stops at the first that fails.
func (h *handler) ComQueryMulti(c *vtmysql.Conn, text string, callback func(qr sqltypes.QueryResponse, more bool, firstPacket bool) error) error {
	st := h.s.ensureState(c)
	var pieces []string
	if c.Capabilities&vtmysql.CapabilityClientMultiStatements != 0 {
		for _, p := range parser.SplitStatements(text) {
			pieces = append(pieces, p.Text)
		}
	} else if p := parser.SplitStatements(text); len(p) > 0 {
		pieces = []string{text}
	}
	if len(pieces) == 0 {
		return callback(sqltypes.QueryResponse{QueryError: sqlerror.NewSQLError(sqlerror.EREmptyQuery, sqlerror.SSClientError, "Query was empty")}, false, true)
	}
	for i, p := range pieces {
		more := i < len(pieces)-1
		first := true
		var cbErr error
		err := h.s.run(st, p, rowWriterOf(st), func(r *sqltypes.Result) error {
			cbErr = callback(sqltypes.QueryResponse{QueryResult: r}, more, first)
			first = false
			return cbErr
		})
		if cbErr != nil {
			return cbErr
		}
		if err != nil {
			return callback(sqltypes.QueryResponse{QueryError: sqlError(err)}, false, first)
		}
	}
	return nil
}

// ComPrepare prepares a statement with `?` placeholders; it is bound and
// run at each COM_STMT_EXECUTE, so its columns are sent then.
func (h *handler) ComPrepare(c *vtmysql.Conn, query string) ([]*querypb.Field, uint16, error) {
	n := rsql.CountParams(query)
	if n > 65535 {
		return nil, 0, sqlerror.NewSQLError(sqlerror.ERUnknownError, sqlerror.SSUnknownSQLState, "too many placeholders")
	}
	return nil, uint16(n), nil
}

func (h *handler) ComStmtExecute(c *vtmysql.Conn, prepare *vtmysql.PrepareData, callback func(*sqltypes.Result) error) error {
	st := h.s.ensureState(c)
	var err error
	args := make([]any, prepare.ParamsCount)
	for i := range args {
		bv := prepare.BindVars[fmt.Sprintf("v%d", i+1)]
		if bv == nil {
			return sqlerror.NewSQLError(sqlerror.ERWrongArguments, sqlerror.SSUnknownSQLState, fmt.Sprintf("missing argument %d", i+1))
		}
		if args[i], err = bindValue(bv); err != nil {
			return sqlError(err)
		}
	}
	text, err := rsql.BindParams(prepare.PrepareStmt, args, st.sess.Location())
	if err != nil {
		return sqlError(err)
	}
	if err := h.s.run(st, text, nil, callback); err != nil {
		return sqlError(err)
	}
	return nil
}

// bindValue is a prepared statement's argument as a Go value BindParams
// writes as a literal of its type.
func bindValue(bv *querypb.BindVariable) (any, error) {
	v, err := sqltypes.BindVariableToValue(bv)
	if err != nil {
		return nil, err
	}
	switch {
	case v.IsNull():
		return nil, nil
	case v.IsSigned():
		return v.ToInt64()
	case v.IsUnsigned():
		return v.ToUint64()
	case v.IsFloat():
		return v.ToFloat64()
	}
	return v.ToString(), nil
}

func (h *handler) ComRegisterReplica(*vtmysql.Conn, string, uint16, string, string) error {
	return notSupported("replication")
}

func (h *handler) ComBinlogDump(*vtmysql.Conn, string, uint32) error {
	return notSupported("binlog dump")
}

func (h *handler) ComBinlogDumpGTID(*vtmysql.Conn, string, uint64, replication.GTIDSet, uint16) error {
	return notSupported("binlog dump")
}

func notSupported(what string) error {
	return sqlError(rowttl.Errorf(rowttl.ErrNotSupported, "%s is not supported", what))
}

// run runs one statement of a connection: the client statements this
// package answers itself, or the session's.
func (s *Server) run(st *connState, text string, w *rowWriter, callback func(*sqltypes.Result) error) error {
	start := time.Now()
	ctx, cancel := context.WithCancel(st.ctx)
	running := s.running.Add(1)
	defer s.running.Add(-1)
	if n := s.scanWorkers(int(running)); n > 0 {
		ctx = query.WithParallelism(ctx, n)
	}
	st.begin(cancel)
	st.queries++
	err := s.exec(ctx, st, text, w, callback)
	outcome := "ok"
	switch {
	case err != nil && ctx.Err() != nil:
		outcome = "cancelled"
	case err != nil:
		outcome = "error"
	}
	cancel()
	st.end()
	s.metrics.queries.WithLabelValues(outcome).Inc()
	s.metrics.duration.Observe(time.Since(start).Seconds())
	return err
}

func (s *Server) exec(ctx context.Context, st *connState, text string, w *rowWriter, callback func(*sqltypes.Result) error) error {
	if handled, err := s.compat(ctx, st, text, callback); handled {
		return err
	}
	rows, err := st.returnsRows(text)
	if err != nil {
		return err
	}
	if rows {
		r, err := st.sess.Query(ctx, text)
		if err != nil {
			return err
		}
		return stream(ctx, r, w, callback)
	}
	res, err := st.sess.Exec(ctx, text)
	if err != nil {
		return err
	}
	return callback(&sqltypes.Result{RowsAffected: uint64(max(res.RowsAffected, 0))})
}

// returnsRows reports whether text yields a result set (so that the
// session's Query, not Exec, runs it). The answer depends on the text
// alone, so the connection keeps it for its last statement: a client that
// repeats one statement (a dashboard polling a count) has it parsed once
// a run, by the session, rather than twice.
func (st *connState) returnsRows(text string) (bool, error) {
	if text == st.rowsText && text != "" {
		return st.rows, nil
	}
	rows, err := rsql.TextReturnsRows(text)
	if err != nil {
		return false, err
	}
	// A long text (a big INSERT) is not worth keeping alive; the copy
	// keeps a statement of a multi-statement packet from holding the
	// whole packet.
	if len(text) <= maxRememberedText {
		st.rowsText, st.rows = strings.Clone(text), rows
	}
	return rows, nil
}

// maxRememberedText bounds the statement text returnsRows keeps.
const maxRememberedText = 4 << 10

// scanWorkers is scanParallelism for running statements of the server,
// the loads of its pool computing counted with them.
func (s *Server) scanWorkers(running int) int {
	return scanParallelism(running+s.o.LoadWorkers.Busy(), runtime.GOMAXPROCS(0))
}

// scanParallelism is the number of goroutines a statement's scans use
// when running statements (and computing loads) are running at once on
// procs processors: one when they are more than the processors (each
// keeps one busy; more goroutines per scan only wait for a processor, and
// add their handoffs to every statement's latency), else the scan's
// default (0).
func scanParallelism(running, procs int) int {
	if running > procs {
		return 1
	}
	return 0
}

// processes returns the connections in id order.
func (s *Server) processes() []*connState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*connState, 0, len(s.mu.conns))
	for _, st := range s.mu.conns {
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func (s *Server) process(id uint64) *connState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id > uint64(^uint32(0)) {
		return nil
	}
	return s.mu.conns[uint32(id)]
}

var _ io.Closer = (*conn)(nil)
