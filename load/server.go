package load

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/table"
)

// ServerOptions configure a Server.
type ServerOptions struct {
	// User and Password, when User is set, are required of every request
	// but GET /api/health as HTTP basic authentication; others get 401.
	User     string
	Password string
	// Allocator is used for the loads' Arrow buffers; nil means Go's.
	Allocator memory.Allocator
	// Log, when set, gets one line per load.
	Log *log.Logger
	// ShutdownTimeout bounds how long Serve waits for running loads when
	// its context ends; 0 means one minute. Loads still running then are
	// cut off (their clients see the connection close) and abort.
	ShutdownTimeout time.Duration
	// BodyTimeout fails a load whose request body sends nothing for that
	// long; it writes nothing. 0 means DefaultBodyTimeout, a negative value
	// no limit.
	BodyTimeout time.Duration
	// Workers bounds the loads that compute at once (see Workers); nil
	// means SharedWorkers().
	Workers *Workers
}

// DefaultBodyTimeout is how long a load's body may send nothing.
const DefaultBodyTimeout = 3 * time.Minute

// Server answers Stream Load requests and metrics over HTTP:
//
//	PUT /api/{db}/{table}/_stream_load   a load; options in headers (see
//	                                     OptionsFromHeader), the CSV as the
//	                                     body, the Result as JSON (HTTP 200
//	                                     whatever the Status, as Doris does)
//	GET /metrics                         Prometheus text format (Metrics)
//	GET /api/health                      {"status": "OK"}, without
//	                                     credentials
//
// The body is streamed, never held whole. `Expect: 100-continue` is
// answered when the handler first reads the body, so a request refused
// before that (bad credentials, a used label) is answered without its body
// being sent.
type Server struct {
	db      *table.DB
	o       ServerOptions
	metrics *Metrics
	handler http.Handler
	// bodies are the request bodies being read; stopping says Serve is
	// shutting down, when a body may be silent only shutdownIdle.
	bodies struct {
		sync.Mutex
		active   map[*idleReader]bool
		stopping bool
	}
}

// shutdownIdle is how long a load's body may be silent once the server
// shuts down: a stalled client must not hold the shutdown for its whole
// timeout, while a load that is receiving data finishes.
const shutdownIdle = time.Second

// NewServer returns a server of db's tables.
func NewServer(db *table.DB, o ServerOptions) *Server {
	if o.Workers == nil {
		o.Workers = SharedWorkers()
	}
	s := &Server{db: db, o: o, metrics: NewMetrics(db)}
	s.metrics.watchWorkers(o.Workers)
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /api/{db}/{table}/_stream_load", s.streamLoad)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.Registry(), promhttp.HandlerOpts{}))
	// Health checks (load balancers, orchestrators) carry no credentials;
	// the answer is a constant, so it tells a stranger nothing but that the
	// server is up. Every other path goes through authentication.
	outer := http.NewServeMux()
	outer.HandleFunc("GET /api/health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"status": "OK"}`)
	})
	outer.Handle("/", s.authenticate(mux))
	s.handler = outer
	return s
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Metrics returns the server's metrics.
func (s *Server) Metrics() *Metrics { return s.metrics }

func (s *Server) authenticate(next http.Handler) http.Handler {
	if s.o.User == "" {
		return next
	}
	user, pass := []byte(s.o.User), []byte(s.o.Password)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		// Both comparisons always run, so timing tells nothing.
		okUser := subtle.ConstantTimeCompare([]byte(u), user)
		okPass := subtle.ConstantTimeCompare([]byte(p), pass)
		if !ok || okUser&okPass != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="rowttl"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintln(w, `{"status": "FAILED", "msg": "Access denied: wrong user or password"}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) streamLoad(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	dbName, tblName := r.PathValue("db"), r.PathValue("table")
	var res *Result
	o, err := OptionsFromHeader(r.Header)
	if err == nil {
		var tbl *table.Table
		if tbl, err = s.db.Table(dbName, tblName); err == nil {
			body := io.Reader(r.Body)
			if d := s.bodyTimeout(); d > 0 {
				ir := &idleReader{srv: s, r: r.Body, rc: http.NewResponseController(w), timeout: d}
				s.track(ir, true)
				defer s.track(ir, false)
				body = ir
			}
			o.Workers = s.o.Workers
			res = Run(r.Context(), tbl, body, o, s.o.Allocator)
			s.metrics.Observe(dbName, tblName, res, time.Since(start))
		} else {
			err = fmt.Errorf("table %s.%s: %w", dbName, tblName, err)
		}
	}
	if res == nil {
		label := o.Label
		if label == "" {
			label = NewLabel()
		}
		res = &Result{Label: label, TwoPhaseCommit: "false", Status: StatusFail, Message: err.Error(), Err: err,
			LoadTimeMs: time.Since(start).Milliseconds()}
	}
	if s.o.Log != nil {
		s.o.Log.Printf("load %s.%s label=%s status=%q rows=%d filtered=%d bytes=%d ms=%d%s",
			dbName, tblName, res.Label, res.Status, res.NumberLoadedRows, res.NumberFilteredRows, res.LoadBytes, res.LoadTimeMs, failNote(res))
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(res.JSON())
}

func (s *Server) bodyTimeout() time.Duration {
	if s.o.BodyTimeout == 0 {
		return DefaultBodyTimeout
	}
	return s.o.BodyTimeout
}

// idleReader reads a request body, failing when no byte has come for
// timeout: a client that stops sending must not keep a load, its files and
// its connection forever. Each read pushes the connection's read deadline
// forward.
type idleReader struct {
	srv     *Server
	r       io.Reader
	rc      *http.ResponseController
	timeout time.Duration
}

// track adds a body being read (on) or removes it; the handler removes it
// before it returns, after which its ResponseController may not be used.
func (s *Server) track(b *idleReader, on bool) {
	s.bodies.Lock()
	defer s.bodies.Unlock()
	if s.bodies.active == nil {
		s.bodies.active = map[*idleReader]bool{}
	}
	if on {
		s.bodies.active[b] = true
	} else {
		delete(s.bodies.active, b)
	}
}

// stopBodies shortens the wait of every body being read to shutdownIdle.
func (s *Server) stopBodies() {
	s.bodies.Lock()
	defer s.bodies.Unlock()
	s.bodies.stopping = true
	for b := range s.bodies.active {
		_ = b.rc.SetReadDeadline(time.Now().Add(b.idle(true)))
	}
}

// idle is how long the body may be silent.
func (b *idleReader) idle(stopping bool) time.Duration {
	if stopping {
		return min(b.timeout, shutdownIdle)
	}
	return b.timeout
}

func (b *idleReader) Read(p []byte) (int, error) {
	b.srv.bodies.Lock()
	stopping := b.srv.bodies.stopping
	d := b.idle(stopping)
	// A connection without deadlines (not a net.Conn) just has no limit.
	_ = b.rc.SetReadDeadline(time.Now().Add(d))
	b.srv.bodies.Unlock()
	n, err := b.r.Read(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		b.srv.bodies.Lock()
		stopping = b.srv.bodies.stopping
		b.srv.bodies.Unlock()
		if stopping {
			err = rowttl.Errorf(rowttl.ErrInvalidArgument, "the request body sent nothing for %v while the server shut down", b.idle(true))
		} else {
			err = rowttl.Errorf(rowttl.ErrInvalidArgument, "the request body sent nothing for %v (serve --body-timeout)", d)
		}
	}
	return n, err
}

func failNote(r *Result) string {
	if r.Status == StatusSuccess {
		return ""
	}
	return " message=" + fmt.Sprintf("%q", r.Message)
}

// JSON renders the result as Stream Load prints it: indented, one field a
// line, with a final newline.
func (r *Result) JSON() []byte {
	b, err := json.MarshalIndent(r, "", "    ")
	if err != nil {
		// A Result holds only strings and numbers.
		panic(err)
	}
	return append(b, '\n')
}

// Serve answers requests on ln until ctx ends, then shuts down: it stops
// accepting, waits up to ShutdownTimeout for running requests, and cuts
// the rest off. It does not close the DB.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	timeout := s.o.ShutdownTimeout
	if timeout == 0 {
		timeout = time.Minute
	}
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s.stopBodies()
	err := hs.Shutdown(sctx)
	if err != nil {
		hs.Close()
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
