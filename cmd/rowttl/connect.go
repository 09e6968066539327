package main

import (
	"bufio"
	"context"
	dsql "database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/sql/parser"
	"golang.org/x/term"
)

// remote runs scripts on a `rowttl serve` (or any MySQL-protocol server)
// over one connection, printing what RunScript prints for the same script
// run locally.
type remote struct {
	db   *dsql.DB
	conn *dsql.Conn
}

func connect(ctx context.Context, addr, user, password string) (*remote, error) {
	cfg := gomysql.NewConfig()
	cfg.Net, cfg.Addr, cfg.User, cfg.Passwd = "tcp", addr, user, password
	return connectConfig(ctx, cfg)
}

// connectConfig opens one connection of cfg.
func connectConfig(ctx context.Context, cfg *gomysql.Config) (*remote, error) {
	addr := cfg.Addr
	// Results come as text, formatted by the server as the shell formats
	// them; statements go one by one, so that each failure is reported.
	cfg.InterpolateParams = false
	connector, err := gomysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := dsql.OpenDB(connector)
	conn, err := db.Conn(ctx)
	if err == nil {
		err = conn.PingContext(ctx)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	return &remote{db: db, conn: conn}, nil
}

func (r *remote) Close() error {
	r.conn.Close()
	return r.db.Close()
}

// RunScript has the contract of sql.Session.RunScript.
func (r *remote) RunScript(ctx context.Context, src string, o sql.ScriptOptions, w io.Writer) (failed []*sql.ScriptError, werr error) {
	for _, p := range parser.SplitStatements(src) {
		if err := ctx.Err(); err != nil {
			failed = append(failed, &sql.ScriptError{Piece: p, Err: err})
			break
		}
		err := r.runPiece(ctx, p, o, w)
		if err == nil {
			continue
		}
		var we *remoteWriteError
		if errors.As(err, &we) {
			return failed, we.err
		}
		failed = append(failed, &sql.ScriptError{Piece: p, Err: err})
		if _, werr := fmt.Fprintf(w, "ERROR: %s\n", strings.ReplaceAll(remoteMessage(err), "\n", " ")); werr != nil {
			return failed, werr
		}
		if o.Bail {
			break
		}
	}
	return failed, nil
}

type remoteWriteError struct{ err error }

func (e *remoteWriteError) Error() string { return e.err.Error() }

// remoteMessage is the server's message without its MySQL code, as the
// local shell prints it.
func remoteMessage(err error) string {
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		return me.Message
	}
	return err.Error()
}

func (r *remote) runPiece(ctx context.Context, p parser.Piece, o sql.ScriptOptions, w io.Writer) error {
	// Results of SELECT and EXPLAIN are escaped as `mysql -B` escapes
	// them; SHOW and DESC print their text as it is (SHOW CREATE TABLE
	// keeps its lines), as the local shell does.
	escape := true
	if stmt, err := parser.Parse(p.Text); err == nil {
		switch stmt.(type) {
		case *parser.Select, *parser.Explain:
		default:
			escape = false
		}
	}
	rows, err := r.conn.QueryContext(ctx, p.Text)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if len(cols) == 0 {
		// A statement without a result set.
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if o.Summary {
			fmt.Fprintln(bw, "Query OK")
		}
		if err := bw.Flush(); err != nil {
			return &remoteWriteError{err}
		}
		return nil
	}
	header := strings.Join(cols, "\t") + "\n"
	vals := make([]dsql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var line []byte
	n := 0
	for rows.Next() {
		if n == 0 {
			if _, err := bw.WriteString(header); err != nil {
				return &remoteWriteError{err}
			}
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		line = line[:0]
		for i, v := range vals {
			if i > 0 {
				line = append(line, '\t')
			}
			switch {
			case v == nil:
				line = append(line, "NULL"...)
			case escape:
				line = exec.AppendEscaped(line, string(v))
			default:
				line = append(line, v...)
			}
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return &remoteWriteError{err}
		}
		n++
		if n%4096 == 0 {
			if err := bw.Flush(); err != nil {
				return &remoteWriteError{err}
			}
		}
	}
	rerr := rows.Err()
	if n == 0 && rerr == nil {
		bw.WriteString(header)
	}
	if rerr == nil && o.Summary {
		fmt.Fprintf(bw, "%d row(s) in set\n", n)
	}
	if err := bw.Flush(); err != nil {
		return &remoteWriteError{err}
	}
	return rerr
}

// readPassword asks for a password on the terminal, without echo.
func readPassword(stderr io.Writer) (string, error) {
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return "", errors.New("-p needs a terminal to ask for the password (or set ROWTTL_PASSWORD)")
	}
	defer tty.Close()
	fmt.Fprint(stderr, "Enter password: ")
	b, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(stderr)
	return string(b), err
}
