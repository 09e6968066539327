package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/load"
	mysqlserver "github.com/rowttl/rowttl/server/mysql"
	"github.com/rowttl/rowttl/table"
	"github.com/spf13/cobra"
)

type serveFlags struct {
	dir                string
	listen             string
	user               string
	password           string
	passwordFile       string
	allowEmptyPassword bool
	shutdownTimeout    time.Duration
	bodyTimeout        time.Duration
	mysqlListen        string
	mysql              mysqlserver.Options
	gc                 gcSettings
	gcNote             string // what applyGC set, for the log
}

// passwordEnv names the variable serve reads the password from, so that it
// shows neither in ps nor in the shell's history.
const passwordEnv = "ROWTTL_PASSWORD"

// resolvePassword settles f.password from --password, --password-file or
// $ROWTTL_PASSWORD (getenv), in that order, and refuses what would leave the
// server open by mistake: a user whose password is empty (unless
// --allow-empty-password), two sources at once, a password without a user.
func resolvePassword(f *serveFlags, passwordSet bool, getenv func(string) string) error {
	if f.user == "" {
		// The variable may be set for other tools: only flags are mistakes.
		if passwordSet || f.passwordFile != "" {
			return rowttl.Errorf(rowttl.ErrInvalidArgument, "a password needs --user")
		}
		return nil
	}
	if passwordSet && f.passwordFile != "" {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "give --password or --password-file, not both")
	}
	switch {
	case passwordSet:
	case f.passwordFile != "":
		b, err := os.ReadFile(f.passwordFile)
		if err != nil {
			return rowttl.Errorf(rowttl.ErrInvalidArgument, "--password-file: %w", err)
		}
		// One line, as echo and editors write it.
		f.password = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		if strings.ContainsAny(f.password, "\r\n") {
			return rowttl.Errorf(rowttl.ErrInvalidArgument, "--password-file %s: the password must be one line", f.passwordFile)
		}
	default:
		f.password = getenv(passwordEnv)
	}
	if f.password == "" && !f.allowEmptyPassword {
		return rowttl.Errorf(rowttl.ErrInvalidArgument,
			"--user %s has no password: give it in $%s or --password-file (or --password), or pass --allow-empty-password to accept an empty one", f.user, passwordEnv)
	}
	return nil
}

func serveCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve Stream Load and metrics over HTTP, and SQL over the MySQL protocol",
		Long: `serve owns the data directory and speaks Doris's two client protocols.

The MySQL protocol (--mysql-listen, default 127.0.0.1:9030) runs the SQL
dialect, one session per connection, as a Doris FE does:
  mysql -h 127.0.0.1 -P 9030 -u user -p
  rowttl sql --connect 127.0.0.1:9030 -u user -p
and any MySQL driver (go-sql-driver/mysql, JDBC). It authenticates the
--user with mysql_native_password or caching_sha2_password (error 1045 on a
wrong password), refuses connections past --mysql-max-connections (error
1040), closes connections idle for --mysql-idle-timeout, and answers SHOW
PROCESSLIST and KILL [QUERY] id (the mysql client's Ctrl-C). An empty
--mysql-listen turns it off. The table function local() reads no file
unless --local-files names the directory it may read, as Doris's BE
reads under its user_files_secure_path.

HTTP (--listen) answers:

  PUT /api/{db}/{table}/_stream_load   a CSV load; the options of "rowttl
                                       load" as Stream Load headers (label,
                                       column_separator, line_delimiter,
                                       columns, timezone, max_filter_ratio,
                                       enclose, escape, format, skip_lines,
                                       strict_mode, partial_columns); the
                                       answer is Stream Load's JSON
  GET  /metrics                        Prometheus text format: table
                                       statistics, loads, compactions
  GET  /api/health                     {"status": "OK"}

so that a Doris user's
  curl --location-trusted -u user:pass -H 'label:x' -H 'column_separator:,' \
       -T file http://127.0.0.1:8030/api/db/t/_stream_load
works unchanged. With --user, every request but /api/health needs HTTP
basic authentication with that user and password; others get 401. The
password comes from --password, --password-file (its one line) or
$ROWTTL_PASSWORD, in that order; the last two keep it out of ps. A user
without a password is refused unless --allow-empty-password. It listens on loopback unless
--listen says otherwise. A load reads and encodes its body without
holding up other loads into the table; one whose body sends nothing for
--body-timeout fails and writes nothing. SIGINT or SIGTERM stops it
gracefully: no new request is taken, running loads get --shutdown-timeout
to finish (one whose body is silent for a second then fails), and the data
directory is closed.

The Go collector runs when the heap has grown by --gogc percent over the
live heap (400 by default, GOGC=100 for other Go programs: a server
under loads spent as much processor collecting as loading, and each
collection's assists land on the latency of short statements), and
sooner to keep the heap under --memory-limit, a soft limit (auto by
default: half of the cgroup's memory limit, else of the machine's). A
flag not given leaves what $GOGC or $GOMEMLIMIT set.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if err := resolvePassword(&f, cmd.Flags().Changed("password"), os.Getenv); err != nil {
				return err
			}
			note, err := applyGC(f.gc, cmd.Flags().Changed("gogc"), cmd.Flags().Changed("memory-limit"), os.Getenv, "/proc/meminfo", "/sys/fs/cgroup/memory.max")
			if err != nil {
				return err
			}
			f.gcNote = note
			return runServe(ctx, f, cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", defaultDir, "data directory")
	fl.StringVar(&f.listen, "listen", "127.0.0.1:8030", "address of HTTP (Stream Load, /metrics)")
	fl.StringVar(&f.mysqlListen, "mysql-listen", "127.0.0.1:9030", "address of the MySQL protocol (empty: none)")
	fl.IntVar(&f.mysql.MaxConnections, "mysql-max-connections", 1024, "MySQL-protocol connections served at once")
	fl.DurationVar(&f.mysql.IdleTimeout, "mysql-idle-timeout", 8*time.Hour, "close MySQL-protocol connections idle for this long")
	fl.DurationVar(&f.mysql.ReadTimeout, "mysql-read-timeout", 30*time.Second, "bound on the handshake and on each read within a command")
	fl.DurationVar(&f.mysql.WriteTimeout, "mysql-write-timeout", time.Minute, "bound on each write of a result to a client")
	fl.StringVar(&f.mysql.LocalFiles, "local-files", "", "directory whose files SQL's local() may read (file_path relative to it); none by default")
	fl.StringVar(&f.user, "user", "", "user of HTTP basic authentication (default: no authentication)")
	fl.StringVar(&f.password, "password", "", "password of --user; visible in ps: prefer --password-file or $"+passwordEnv)
	fl.StringVar(&f.passwordFile, "password-file", "", "file holding the password of --user on one line")
	fl.BoolVar(&f.allowEmptyPassword, "allow-empty-password", false, "accept --user with an empty password")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", time.Minute, "how long running loads may finish after SIGINT/SIGTERM")
	fl.DurationVar(&f.bodyTimeout, "body-timeout", load.DefaultBodyTimeout, "fail a load whose request body sends nothing for this long (0: no limit)")
	fl.IntVar(&f.gc.percent, "gogc", defaultGOGC, "heap growth in percent of the live heap between collections, as GOGC (-1: collect only near --memory-limit)")
	fl.StringVar(&f.gc.limit, "memory-limit", "auto", "soft limit of the Go heap (512MiB, 4GiB; 0: none; auto: half of the cgroup's or machine's memory)")
	return cmd
}

func runServe(ctx context.Context, f serveFlags, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	db, err := table.OpenDB(f.dir, &table.Options{Holder: serveHolder})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		db.Close()
		return err
	}
	var mln net.Listener
	if f.mysqlListen != "" {
		if mln, err = net.Listen("tcp", f.mysqlListen); err != nil {
			ln.Close()
			db.Close()
			return err
		}
	}
	logger := log.New(stderr, "rowttl serve: ", log.LstdFlags)
	if f.gcNote != "" {
		logger.Printf("collector: %s", f.gcNote)
	}
	if f.user == "" {
		for _, l := range []net.Listener{ln, mln} {
			if l == nil {
				continue
			}
			if tcp, ok := l.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
				logger.Printf("warning: listening on %s without authentication (give --user)", l.Addr())
			}
		}
	}
	bodyTimeout := f.bodyTimeout
	if bodyTimeout <= 0 {
		bodyTimeout = -1 // no limit
	}
	srv := load.NewServer(db, load.ServerOptions{User: f.user, Password: f.password, Log: logger,
		ShutdownTimeout: f.shutdownTimeout, BodyTimeout: bodyTimeout})
	stopMySQL := func() error { return nil }
	if mln != nil {
		o := f.mysql
		o.User, o.Password, o.Log, o.Registerer = f.user, f.password, logger, srv.Metrics().Registry()
		msrv, err := mysqlserver.New(db, o)
		if err != nil {
			ln.Close()
			mln.Close()
			db.Close()
			return err
		}
		// The MySQL side stops with the HTTP side (on a signal, or when
		// HTTP fails), before the data directory is closed: its running
		// statements are cancelled.
		mctx, mstop := context.WithCancel(ctx)
		mysqlErr := make(chan error, 1)
		go func() { mysqlErr <- msrv.Serve(mctx, mln) }()
		stopMySQL = func() error {
			mstop()
			return <-mysqlErr
		}
		logger.Printf("serving %s on http://%s and mysql://%s", f.dir, ln.Addr(), mln.Addr())
	} else {
		logger.Printf("serving %s on http://%s", f.dir, ln.Addr())
	}
	err = srv.Serve(ctx, ln)
	if merr := stopMySQL(); err == nil {
		err = merr
	}
	logger.Printf("stopped")
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
