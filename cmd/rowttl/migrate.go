package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	gomysql "github.com/go-sql-driver/mysql"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/fileformat"
	"github.com/rowttl/rowttl/load"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
	"github.com/rowttl/rowttl/ttlcol"
	"github.com/spf13/cobra"
)

type migrateFlags struct {
	dir          string
	tables       string
	to           string
	httpAddr     string
	user         string
	passwordFile string
	state        string
	chunkRows    int64
	noProgress   bool
	// stopAfter ends the run with an error after that many chunks were
	// sent (tests: a migration killed halfway).
	stopAfter int
}

func migrateCommand() *cobra.Command {
	var f migrateFlags
	cmd := &cobra.Command{
		Use:   "migrate --to HOST:9030 --http HOST:8030 --user U [--password-file F] [--tables DB.T,...]",
		Short: "Copy tables and their live rows to an Apache Doris cluster",
		Long: `migrate copies tables of a data directory to an Apache Doris cluster (or
anything speaking its two protocols, rowttl serve included): each table is
created on the target over the MySQL protocol (--to, the FE's query port)
with the DDL SHOW CREATE TABLE prints (its keys, model, buckets and TTL
properties), then its rows alive at the migration's now are sent through
Stream Load (--http, the FE's HTTP port) as Parquet chunks of --chunk-rows
rows, each with a label of its own; direct-mode expirations travel in
__DORIS_TTL_COL__, source-mode ones with their source column. It ends by
comparing each table's row count on both sides at that now, then their
contents: an order-independent checksum of every column of every row
(direct-mode expirations included), computed over the source's scan and
over a SELECT of the same columns on the target, reported in the
Checksum column; a difference fails the run.

The migration's now and its progress are kept in --state (default
DIR.migrate.json next to the data directory): a migration that was
interrupted runs again with the same now, and the target skips every chunk
whose label it already has, so a rerun ends with the same rows. The data
directory is opened read-only, beside the process that owns it.

The password is read from --password-file, else $ROWTTL_PASSWORD.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
			defer stop()
			password := os.Getenv(passwordEnv)
			if f.passwordFile != "" {
				b, err := os.ReadFile(f.passwordFile)
				if err != nil {
					return rowttl.Errorf(rowttl.ErrInvalidArgument, "--password-file: %w", err)
				}
				password = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
			}
			return runMigrate(ctx, f, password, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", defaultDir, "data directory")
	fl.StringVar(&f.tables, "tables", "", "tables to migrate, as DB.TABLE,... (default: every table)")
	fl.StringVar(&f.to, "to", "", "the target's MySQL-protocol address, HOST:PORT (required)")
	fl.StringVar(&f.httpAddr, "http", "", "the target's Stream Load address, HOST:PORT (required)")
	fl.StringVar(&f.user, "user", "root", "user on the target")
	fl.StringVar(&f.passwordFile, "password-file", "", "file holding the target user's password on one line")
	fl.StringVar(&f.state, "state", "", "file keeping the migration's now and progress (default DIR.migrate.json)")
	fl.Int64Var(&f.chunkRows, "chunk-rows", 1_000_000, "rows per Stream Load")
	fl.BoolVar(&f.noProgress, "no-progress", false, "never print progress on standard error")
	fl.IntVar(&f.stopAfter, "stop-after-chunks", 0, "stop with an error after sending this many chunks")
	_ = fl.MarkHidden("stop-after-chunks")
	cmd.MarkFlagRequired("to")
	cmd.MarkFlagRequired("http")
	return cmd
}

// migrateState is what a rerun needs to carry on: the now every table's
// rows are judged at, which fixes the chunks and so their labels.
type migrateState struct {
	Now  time.Time       `json:"now"`
	Done map[string]bool `json:"done"` // tables whose counts matched
}

func loadMigrateState(path string) (*migrateState, error) {
	st := &migrateState{}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		st.Now = time.Now().UTC().Truncate(time.Microsecond)
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(b, st); err != nil {
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "--state %s: %w", path, err)
		}
	}
	if st.Done == nil {
		st.Done = map[string]bool{}
	}
	return st, nil
}

func (st *migrateState) save(path string) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	f, err := fileformat.CreateAtomic(nil, path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(append(b, '\n')); err != nil {
		return err
	}
	return f.Commit()
}

var errStopped = errors.New("migration stopped after --stop-after-chunks chunks")

func runMigrate(ctx context.Context, f migrateFlags, password string, stdout, stderr io.Writer) error {
	if f.chunkRows <= 0 {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "--chunk-rows must be positive")
	}
	if f.state == "" {
		f.state = filepath.Clean(f.dir) + ".migrate.json"
	}
	st, err := loadMigrateState(f.state)
	if err != nil {
		return err
	}
	if err := st.save(f.state); err != nil {
		return fmt.Errorf("--state: %w", err)
	}
	src, err := table.OpenDB(f.dir, &table.Options{ReadOnly: true, DisableAutoCompaction: true})
	if err != nil {
		return err
	}
	defer src.Close()
	names, err := migrateTables(src, f.tables)
	if err != nil {
		return err
	}
	cfg := gomysql.NewConfig()
	cfg.Net, cfg.Addr, cfg.User, cfg.Passwd = "tcp", f.to, f.user, password
	target, err := connectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer target.Close()
	m := &migration{f: f, password: password, st: st, src: src, target: target, stderr: stderr}
	fmt.Fprintf(stdout, "Table\tRows\tChunks\tSkipped\tTargetRows\tChecksum\n")
	for _, t := range names {
		r, err := m.table(ctx, t[0], t[1])
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t[0], t[1], err)
		}
		fmt.Fprintf(stdout, "%s.%s\t%d\t%d\t%d\t%d\t%s\n", t[0], t[1], r.rows, r.chunks, r.skipped, r.targetRows, r.digest)
		st.Done[t[0]+"."+t[1]] = true
		if err := st.save(f.state); err != nil {
			return err
		}
	}
	return src.Close()
}

// migrateTables lists the tables to migrate as (db, table) pairs.
func migrateTables(db *table.DB, list string) ([][2]string, error) {
	var out [][2]string
	if list != "" {
		for _, s := range strings.Split(list, ",") {
			d, t, err := tableArg(s)
			if err != nil {
				return nil, fmt.Errorf("--tables: %w", err)
			}
			out = append(out, [2]string{d, t})
		}
		return out, nil
	}
	dbs, err := db.Databases()
	if err != nil {
		return nil, err
	}
	for _, d := range dbs {
		ts, err := db.Tables(d)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			out = append(out, [2]string{d, t})
		}
	}
	return out, nil
}

type migration struct {
	f        migrateFlags
	password string
	st       *migrateState
	src      *table.DB
	target   *remote
	stderr   io.Writer
	sent     int
}

type tableResult struct {
	rows, targetRows int64
	chunks, skipped  int
	// digest is the source's rows' (see rowDigest), cols what it covers.
	digest *rowDigest
	cols   digestColumns
}

func (m *migration) exec(ctx context.Context, q string) error {
	_, err := m.target.conn.ExecContext(ctx, q)
	return err
}

func (m *migration) table(ctx context.Context, dbName, name string) (tableResult, error) {
	var res tableResult
	tbl, err := m.src.Table(dbName, name)
	if err != nil {
		return res, err
	}
	sess := sql.NewSession(m.src)
	defer sess.Close()
	sess.FreezeNow(m.st.Now)
	ddl, err := sess.Exec(ctx, fmt.Sprintf("SHOW CREATE TABLE %s.%s", parser.QuoteIdent(dbName), parser.QuoteIdent(name)))
	if err != nil {
		return res, err
	}
	if err := m.exec(ctx, "CREATE DATABASE IF NOT EXISTS "+parser.QuoteIdent(dbName)); err != nil {
		return res, err
	}
	if err := m.exec(ctx, "USE "+parser.QuoteIdent(dbName)); err != nil {
		return res, err
	}
	// A rerun finds the table made by the run before.
	var me *gomysql.MySQLError
	if err := m.exec(ctx, ddl.Rows[0][1]); err != nil && !(errors.As(err, &me) && me.Number == 1050) {
		return res, fmt.Errorf("create on the target: %w", err)
	}
	res, err = m.rows(ctx, tbl, dbName, name)
	if err != nil {
		return res, err
	}
	// Both sides count at the migration's now where the target can be
	// told it (rowttl's session_now); a Doris cluster counts at its own
	// clock, and rows that expired since are missing there.
	frozen := m.exec(ctx, "SET session_now = '"+schema.FormatDatetime(schema.DatetimeFromTime(m.st.Now), 6)+"'") == nil
	if frozen {
		defer m.exec(ctx, "SET session_now = DEFAULT")
	}
	q := fmt.Sprintf("SELECT count(*) FROM %s.%s", parser.QuoteIdent(dbName), parser.QuoteIdent(name))
	if err := m.target.conn.QueryRowContext(ctx, q).Scan(&res.targetRows); err != nil {
		return res, err
	}
	if res.targetRows != res.rows {
		note := ""
		if !frozen && res.targetRows < res.rows {
			note = " (the target counts at its own clock: rows that expired since the migration's now are gone there)"
		}
		return res, rowttl.Errorf(rowttl.ErrCorruption, "the target has %d rows, the source %d at %s%s", res.targetRows, res.rows, m.st.Now.Format(time.RFC3339Nano), note)
	}
	dst, err := m.targetDigest(ctx, dbName, name, res.cols, frozen)
	if err != nil {
		return res, fmt.Errorf("verify the rows on the target: %w", err)
	}
	return res, checkDigests(res.digest, dst, res.cols)
}

var labelUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// rows streams a table's live rows to the target in labelled chunks.
func (m *migration) rows(ctx context.Context, tbl *table.Table, dbName, name string) (tableResult, error) {
	var res tableResult
	def, pol := tbl.Definition(), tbl.Policy()
	cols := def.Schema.Columns
	direct := pol.Mode == ttlcol.DirectMode
	fields := make([]arrow.Field, 0, len(cols)+1)
	for _, c := range cols {
		fields = append(fields, fileformat.Field(c))
	}
	if direct {
		ttl := fileformat.TTLField()
		ttl.Name = schema.TTLAlias
		fields = append(fields, ttl)
	}
	sc := arrow.NewSchema(fields, nil)
	res.digest = &rowDigest{}
	for _, c := range cols {
		res.cols.names = append(res.cols.names, c.Name)
		res.cols.types = append(res.cols.types, c.Type)
	}
	if direct {
		res.cols.names = append(res.cols.names, schema.TTLAlias)
		res.cols.types = append(res.cols.types, schema.BigIntType)
	}
	rr, err := tbl.Scan(ctx, query.Request{Now: m.st.Now, ShowHidden: direct})
	if err != nil {
		return res, err
	}
	defer rr.Release()
	var progress atomic.Int64
	stop := func() {}
	if !m.f.noProgress {
		stop = progressLoop(m.stderr, func(el time.Duration) string {
			return fmt.Sprintf("migrate %s.%s: %d rows sent, %s", dbName, name, progress.Load(), humanDuration(el))
		})
	}
	defer stop()
	labelBase := fmt.Sprintf("rowttl_migrate_%s_%s_%d", labelUnsafe.ReplaceAllString(dbName, "_"), labelUnsafe.ReplaceAllString(name, "_"), m.st.Now.UnixMicro())
	var buf bytes.Buffer
	var w *fileformat.ParquetWriter
	var pending int64
	flush := func() error {
		if w == nil {
			return nil
		}
		if err := w.Close(); err != nil {
			return err
		}
		label := fmt.Sprintf("%s_%d", labelBase, res.chunks)
		skipped, err := m.streamLoad(ctx, dbName, name, label, buf.Bytes(), pending)
		if err != nil {
			return fmt.Errorf("chunk %d (label %s): %w", res.chunks, label, err)
		}
		res.chunks++
		if skipped {
			res.skipped++
		}
		progress.Add(pending)
		w, pending = nil, 0
		buf.Reset()
		m.sent++
		if m.f.stopAfter > 0 && m.sent >= m.f.stopAfter {
			return errStopped
		}
		return nil
	}
	for rr.Next() {
		rec := rr.RecordBatch()
		n := rec.NumRows()
		res.rows += n
		if int(rec.NumCols()) != len(res.cols.types) {
			return res, fmt.Errorf("the scan has %d columns, the table %d", rec.NumCols(), len(res.cols.types))
		}
		res.digest.addBatch(rec, res.cols.types)
		for off := int64(0); off < n; {
			if w == nil {
				if w, err = fileformat.NewParquetWriter(&buf, sc, fileformat.ParquetOptions{}, memory.DefaultAllocator); err != nil {
					return res, err
				}
			}
			k := min(n-off, m.f.chunkRows-pending)
			part := rec.NewSlice(off, off+k)
			out := array.NewRecordBatch(sc, part.Columns(), k)
			err := w.Write(out)
			out.Release()
			part.Release()
			if err != nil {
				return res, err
			}
			off += k
			if pending += k; pending == m.f.chunkRows {
				if err := flush(); err != nil {
					return res, err
				}
			}
		}
	}
	if err := rr.Err(); err != nil {
		return res, err
	}
	return res, flush()
}

// streamLoad sends one chunk; skipped reports a label the target already
// has (a chunk an earlier run sent).
func (m *migration) streamLoad(ctx context.Context, dbName, name, label string, body []byte, rows int64) (skipped bool, err error) {
	url := fmt.Sprintf("http://%s/api/%s/%s/_stream_load", m.f.httpAddr, dbName, name)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.SetBasicAuth(m.f.user, m.password)
	req.Header.Set(load.HeaderLabel, label)
	req.Header.Set(load.HeaderFormat, load.FormatParquet)
	req.Header.Set("Expect", "100-continue")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	var r load.Result
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&r); err != nil {
		return false, fmt.Errorf("stream load answered %s: %w", resp.Status, err)
	}
	switch r.Status {
	case load.StatusSuccess:
		if r.NumberLoadedRows != rows {
			return false, rowttl.Errorf(rowttl.ErrCorruption, "stream load loaded %d rows of %d (%d filtered: %s)", r.NumberLoadedRows, rows, r.NumberFilteredRows, r.FirstErrorMsg)
		}
		return false, nil
	case load.StatusLabelExists:
		return true, nil
	}
	return false, fmt.Errorf("stream load %s: %s", r.Status, r.Message)
}
