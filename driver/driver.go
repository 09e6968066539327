// Package driver is the database/sql driver "rowttl": it opens a data
// directory in the process, the way SQLite's and DuckDB's drivers do, and
// runs the SQL dialect of package sql on it.
//
//	db, err := sql.Open("rowttl", "file:./data?time_zone=%2B08:00")
//
// The DSN is file:PATH (or a bare path) with optional parameters, each a
// session variable every connection starts with (time_zone, session_now,
// show_hidden_columns, exec_mem_limit, ...) except read_only=true, which
// opens the directory read-only (alongside a process that owns it). Every
// connection of every sql.DB on the same directory shares one table.DB,
// opened with the first connection and closed with the last sql.DB.
//
// Each connection is one sql.Session: SET and USE last as long as the
// connection. Arguments are `?` placeholders bound as literals of their Go
// type (int64, float64, bool, string, []byte, time.Time in the session
// time zone, nil). Values come back as int64 (integers), float64, bool,
// string (strings and DECIMAL, exactly), and time.Time (DATE, DATETIME,
// TIMESTAMPTZ, in the session time zone); ColumnTypes reports the SQL type
// names (BIGINT, DECIMAL, DATETIME, ...), precision, scale and length.
// QueryContext's context cancels the statement. conn.Raw reaches *Conn,
// whose QueryArrow returns the statement's Arrow RecordReader itself.
//
// It must never open a data directory twice in one process (the directory
// lock would refuse it), and never convert a value in a way that loses
// what the shell would show: DECIMAL stays text, DATETIME keeps its
// microseconds. Transactions are refused: every statement commits on its
// own.
package driver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	rsql "github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/table"
)

func init() { sql.Register("rowttl", &Driver{}) }

// Driver is the "rowttl" database/sql driver.
type Driver struct{}

// Open opens a connection on the data directory of dsn.
func (d *Driver) Open(dsn string) (driver.Conn, error) {
	c, err := d.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	return c.Connect(context.Background())
}

// OpenConnector parses dsn; the data directory opens with the first
// connection.
func (d *Driver) OpenConnector(dsn string) (driver.Connector, error) {
	cfg, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return &connector{drv: d, cfg: cfg}, nil
}

type config struct {
	dir      string
	readOnly bool
	// set are the SET statements each session starts with, in name order.
	set []string
}

func parseDSN(dsn string) (config, error) {
	var cfg config
	path, query, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
	if path == "" {
		return cfg, rowttl.Errorf(rowttl.ErrInvalidArgument, "rowttl DSN %q names no data directory", dsn)
	}
	cfg.dir = filepath.Clean(path)
	vals, err := url.ParseQuery(query)
	if err != nil {
		return cfg, rowttl.Errorf(rowttl.ErrInvalidArgument, "rowttl DSN %q: %w", dsn, err)
	}
	names := make([]string, 0, len(vals))
	for k := range vals {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := vals.Get(k)
		if k == "read_only" {
			switch v {
			case "true", "1":
				cfg.readOnly = true
			case "false", "0", "":
			default:
				return cfg, rowttl.Errorf(rowttl.ErrInvalidArgument, "rowttl DSN: read_only takes true or false, not %q", v)
			}
			continue
		}
		for _, r := range k {
			if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return cfg, rowttl.Errorf(rowttl.ErrInvalidArgument, "rowttl DSN: %q is no variable name", k)
			}
		}
		lit, _ := rsql.BindParams("?", []any{v}, nil)
		cfg.set = append(cfg.set, fmt.Sprintf("SET %s = %s", k, lit))
	}
	return cfg, nil
}

// shared holds the data directories open in this process, by path.
var shared struct {
	sync.Mutex
	dbs map[string]*sharedDB
}

type sharedDB struct {
	db       *table.DB
	readOnly bool
	refs     int
}

func acquire(cfg config) (*sharedDB, error) {
	abs, err := filepath.Abs(cfg.dir)
	if err != nil {
		return nil, err
	}
	shared.Lock()
	defer shared.Unlock()
	if s, ok := shared.dbs[abs]; ok {
		if s.readOnly && !cfg.readOnly {
			return nil, rowttl.Errorf(rowttl.ErrNotSupported, "data directory %s is open read-only in this process", cfg.dir)
		}
		s.refs++
		return s, nil
	}
	db, err := table.OpenDB(cfg.dir, &table.Options{ReadOnly: cfg.readOnly})
	if err != nil {
		return nil, err
	}
	if shared.dbs == nil {
		shared.dbs = map[string]*sharedDB{}
	}
	s := &sharedDB{db: db, readOnly: cfg.readOnly, refs: 1}
	shared.dbs[abs] = s
	return s, nil
}

func release(s *sharedDB) error {
	shared.Lock()
	defer shared.Unlock()
	s.refs--
	if s.refs > 0 {
		return nil
	}
	for k, v := range shared.dbs {
		if v == s {
			delete(shared.dbs, k)
		}
	}
	return s.db.Close()
}

// connector is one sql.DB's access to a data directory: it holds the
// shared table.DB from its first connection until sql.DB.Close.
type connector struct {
	drv *Driver
	cfg config

	mu     sync.Mutex
	db     *sharedDB
	closed bool
}

func (c *connector) Driver() driver.Driver { return c.drv }

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, rowttl.Errorf(rowttl.ErrClosed, "sql.DB is closed")
	}
	if c.db == nil {
		s, err := acquire(c.cfg)
		if err != nil {
			c.mu.Unlock()
			return nil, err
		}
		c.db = s
	}
	db := c.db.db
	c.mu.Unlock()
	sess := rsql.NewSession(db)
	for _, st := range c.cfg.set {
		if _, err := sess.Exec(ctx, st); err != nil {
			return nil, fmt.Errorf("rowttl DSN: %w", err)
		}
	}
	return &Conn{sess: sess}, nil
}

// Close lets go of the data directory (database/sql calls it from
// sql.DB.Close).
func (c *connector) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.db == nil {
		return nil
	}
	s := c.db
	c.db = nil
	return release(s)
}

var _ io.Closer = (*connector)(nil)

// Conn is one connection: one sql.Session. database/sql gives it to
// conn.Raw.
type Conn struct {
	sess   *rsql.Session
	closed bool
}

// Session returns the connection's session.
func (c *Conn) Session() *rsql.Session { return c.sess }

// QueryArrow runs a statement that yields a result set and returns its
// Arrow record batches as the session streams them (see
// sql.Session.Query); the caller releases the reader.
func (c *Conn) QueryArrow(ctx context.Context, query string, args ...any) (array.RecordReader, error) {
	text, err := rsql.BindParams(query, args, c.sess.Location())
	if err != nil {
		return nil, err
	}
	return c.sess.Query(ctx, text)
}

func (c *Conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *Conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return &stmt{c: c, query: query}, nil
}

func (c *Conn) Close() error {
	c.closed = true
	return nil
}

func (c *Conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx refuses: every statement commits on its own.
func (c *Conn) BeginTx(context.Context, driver.TxOptions) (driver.Tx, error) {
	return nil, rowttl.Errorf(rowttl.ErrNotSupported, "transactions are not supported: every statement commits on its own")
}

func (c *Conn) Ping(ctx context.Context) error {
	if c.closed {
		return driver.ErrBadConn
	}
	return ctx.Err()
}

// ResetSession keeps the session as it is: SET and USE last as long as
// the connection, as with a MySQL connection.
func (c *Conn) ResetSession(context.Context) error {
	if c.closed {
		return driver.ErrBadConn
	}
	return nil
}

func (c *Conn) bind(query string, args []driver.NamedValue) (string, error) {
	vals := make([]any, len(args))
	for i, a := range args {
		if a.Name != "" {
			return "", rowttl.Errorf(rowttl.ErrNotSupported, "named arguments (%s) are not supported; use ?", a.Name)
		}
		vals[i] = a.Value
	}
	return rsql.BindParams(query, vals, c.sess.Location())
}

func (c *Conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	text, err := c.bind(query, args)
	if err != nil {
		return nil, err
	}
	rows, err := rsql.TextReturnsRows(text)
	if err != nil {
		return nil, err
	}
	if !rows {
		if _, err := c.sess.Exec(ctx, text); err != nil {
			return nil, err
		}
		return &emptyRows{}, nil
	}
	r, err := c.sess.Query(ctx, text)
	if err != nil {
		return nil, err
	}
	return newRows(ctx, r), nil
}

func (c *Conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	text, err := c.bind(query, args)
	if err != nil {
		return nil, err
	}
	res, err := c.sess.Exec(ctx, text)
	if err != nil {
		return nil, err
	}
	return result(res.RowsAffected), nil
}

// CheckNamedValue accepts the values BindParams writes, beyond the
// driver.Value set (int, int32, ... as they are).
func (c *Conn) CheckNamedValue(nv *driver.NamedValue) error {
	switch nv.Value.(type) {
	case int, int8, int16, int32, uint32, float32:
		return nil
	}
	v, err := driver.DefaultParameterConverter.ConvertValue(nv.Value)
	if err != nil {
		return err
	}
	nv.Value = v
	return nil
}

type result int64

func (r result) LastInsertId() (int64, error) {
	return 0, rowttl.Errorf(rowttl.ErrNotSupported, "tables have no auto-increment ids")
}
func (r result) RowsAffected() (int64, error) { return int64(r), nil }

// stmt is a prepared statement: its text, bound at each run.
type stmt struct {
	c     *Conn
	query string
}

func (s *stmt) Close() error  { return nil }
func (s *stmt) NumInput() int { return rsql.CountParams(s.query) }

func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.c.ExecContext(ctx, s.query, args)
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.c.QueryContext(ctx, s.query, args)
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}

type emptyRows struct{}

func (emptyRows) Columns() []string         { return nil }
func (emptyRows) Close() error              { return nil }
func (emptyRows) Next([]driver.Value) error { return io.EOF }

var (
	_ driver.ConnPrepareContext = (*Conn)(nil)
	_ driver.QueryerContext     = (*Conn)(nil)
	_ driver.ExecerContext      = (*Conn)(nil)
	_ driver.Pinger             = (*Conn)(nil)
	_ driver.SessionResetter    = (*Conn)(nil)
	_ driver.NamedValueChecker  = (*Conn)(nil)
	_ driver.ConnBeginTx        = (*Conn)(nil)
	_                           = errors.New
)
