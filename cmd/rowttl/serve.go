package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rowttl/rowttl/load"
	"github.com/rowttl/rowttl/table"
	"github.com/spf13/cobra"
)

type serveFlags struct {
	dir             string
	listen          string
	user            string
	password        string
	shutdownTimeout time.Duration
}

func serveCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve Stream Load (PUT /api/{db}/{table}/_stream_load) and metrics over HTTP",
		Long: `serve answers HTTP requests on the data directory:

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
works unchanged. With --user, every request needs HTTP basic
authentication with that user and password (ROWTTL_PASSWORD is read when
--password is not given); others get 401. It listens on loopback unless
--listen says otherwise. SIGINT or SIGTERM stops it gracefully: no new
request is taken, running loads get --shutdown-timeout to finish, and the
data directory is closed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if f.password == "" {
				f.password = os.Getenv("ROWTTL_PASSWORD")
			}
			return runServe(ctx, f, cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", defaultDir, "data directory")
	fl.StringVar(&f.listen, "listen", "127.0.0.1:8030", "address to listen on")
	fl.StringVar(&f.user, "user", "", "user of HTTP basic authentication (default: no authentication)")
	fl.StringVar(&f.password, "password", "", "password of --user (default: $ROWTTL_PASSWORD)")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", time.Minute, "how long running loads may finish after SIGINT/SIGTERM")
	return cmd
}

func runServe(ctx context.Context, f serveFlags, stderr io.Writer) error {
	if f.user == "" && f.password != "" {
		return errors.New("--password needs --user")
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	db, err := table.OpenDB(f.dir, nil)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		db.Close()
		return err
	}
	logger := log.New(stderr, "rowttl serve: ", log.LstdFlags)
	if f.user == "" {
		if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
			logger.Printf("warning: listening on %s without authentication (give --user)", ln.Addr())
		}
	}
	srv := load.NewServer(db, load.ServerOptions{User: f.user, Password: f.password, Log: logger, ShutdownTimeout: f.shutdownTimeout})
	logger.Printf("serving %s on http://%s", f.dir, ln.Addr())
	err = srv.Serve(ctx, ln)
	logger.Printf("stopped")
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
