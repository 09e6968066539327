package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/fileformat"
	"github.com/rowttl/rowttl/load"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/table"
	"github.com/rowttl/rowttl/ttlcol"
	"github.com/rowttl/rowttl/vfs"
	"github.com/spf13/cobra"
)

type exportFlags struct {
	dir         string
	table       string
	format      string
	out         string
	withTTL     bool
	now         string
	separator   string
	delimiter   string
	enclose     string
	compression string
	noProgress  bool
	// rowGroupRows is for tests that need several row groups.
	rowGroupRows int64
}

func exportCommand() *cobra.Command {
	var f exportFlags
	cmd := &cobra.Command{
		Use:   "export --table [DB.]TABLE --format parquet|csv --out PATH",
		Short: "Write a table's live rows to a Parquet or CSV file",
		Long: `export writes the rows of a table alive at one now (--now, read like
rowttl sql --now; default the wall clock) to PATH, streaming them from a
scan with bounded memory. The file is written under a temporary name in
PATH's directory, synced and renamed, so PATH never holds half a file; the
directory must exist.

--format parquet writes the table's column types as Parquet types (see the
README), zstd-compressed for numbers, dates and times and snappy for the
other columns, a column that its codec does not shrink being left
uncompressed (--compression snappy for every column, zstd or none), in
row groups of
up to 1M rows. --format csv writes the Stream Load dialect that rowttl load
reads back: TAB-separated (--column-separator), \N for NULL; a string
holding the separator or a line break is refused unless --enclose gives a
quote byte. csv_with_names adds a first line of column names.

--with-ttl adds a column __TTL__ with each row's expiration in epoch
microseconds (NULL: never expires): the stored value in a direct-mode
table, the source column's instant plus the retention in a source-mode one.
Loading the file into a direct-mode table with __TTL__ in the column list
keeps every row's expiration.

The answer is one line with FileNumber, TotalRows, FileSize and URL, as
Doris's SELECT ... INTO OUTFILE reports; progress goes to standard error
for exports that run more than a few seconds.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
			defer stop()
			return runExport(ctx, f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", defaultDir, "data directory")
	fl.StringVar(&f.table, "table", "", "table to export, as [DB.]TABLE (required)")
	fl.StringVar(&f.format, "format", "parquet", "parquet, csv or csv_with_names")
	fl.StringVar(&f.out, "out", "", "file to write (required); its directory must exist")
	fl.BoolVar(&f.withTTL, "with-ttl", false, "add __TTL__, each row's expiration in epoch microseconds")
	fl.StringVar(&f.now, "now", "", "judge expiry at this time (read in UTC unless it names a zone), like rowttl sql --now")
	fl.StringVar(&f.separator, "column-separator", "", `CSV field separator (default "\t")`)
	fl.StringVar(&f.delimiter, "line-delimiter", "", `CSV record delimiter (default "\n")`)
	fl.StringVar(&f.enclose, "enclose", "", `CSV quote byte for strings that hold the separator or a line break (default: none)`)
	fl.StringVar(&f.compression, "compression", "", "Parquet compression: snappy, zstd or none (default: zstd for numbers, dates and times, snappy for the rest)")
	fl.BoolVar(&f.noProgress, "no-progress", false, "never print progress on standard error")
	fl.Int64Var(&f.rowGroupRows, "row-group-rows", 0, "Parquet rows per row group (default 1048576)")
	fl.MarkHidden("row-group-rows")
	cmd.MarkFlagRequired("table")
	cmd.MarkFlagRequired("out")
	return cmd
}

// exportResult is what an export reports, as Doris's OUTFILE does.
type exportResult struct {
	FileNumber int
	TotalRows  int64
	FileSize   int64
	URL        string
}

func runExport(ctx context.Context, f exportFlags, stdout, stderr io.Writer) error {
	format, err := fileformat.ParseFormat(f.format)
	if err != nil {
		return fmt.Errorf("--format: %w", err)
	}
	wo := fileformat.WriterOptions{Parquet: fileformat.ParquetOptions{Compression: f.compression, RowGroupRows: f.rowGroupRows}}
	if _, err := fileformat.ParseCompression(f.compression); err != nil {
		return fmt.Errorf("--compression: %w", err)
	}
	if wo.CSV, err = csvOptions(f.separator, f.delimiter, f.enclose); err != nil {
		return err
	}
	// Read-only: an export changes nothing and runs beside the process that
	// owns the directory (rowttl serve).
	db, err := table.OpenDB(f.dir, &table.Options{ReadOnly: true, DisableAutoCompaction: true})
	if err != nil {
		return err
	}
	defer db.Close()
	now := time.Now()
	if f.now != "" {
		if now, err = sql.NewSession(db).ParseSessionNow(f.now); err != nil {
			return fmt.Errorf("--now: %w", err)
		}
	}
	dbName, name, err := tableArg(f.table)
	if err != nil {
		return err
	}
	tbl, err := db.Table(dbName, name)
	if err != nil {
		return err
	}
	out, err := fileformat.CreateAtomic(vfs.Default, f.out)
	if err != nil {
		return err
	}
	defer out.Abort()
	var rows atomic.Int64
	stop := func() {}
	if !f.noProgress {
		// The total is counted when the first line is due, not before the
		// export: counting reads every page's expirations (some 4% of the
		// CPU of a 10M-row export), and an export that ends within
		// progressDelay never shows a line.
		var once sync.Once
		var total int64
		var countErr error
		stop = progressLoop(stderr, func(el time.Duration) string {
			once.Do(func() { total, countErr = tbl.Count(ctx, now, nil) })
			n := rows.Load()
			if countErr != nil {
				return fmt.Sprintf("export: %d rows, %.1f MB, %.0f rows/s, %s", n,
					float64(out.Size())/1e6, float64(n)/el.Seconds(), humanDuration(el))
			}
			return fmt.Sprintf("export: %d of %d rows (%.0f%%), %.1f MB, %.0f rows/s, %s", n, total,
				100*float64(n)/float64(max(total, 1)), float64(out.Size())/1e6, float64(n)/el.Seconds(), humanDuration(el))
		})
	}
	err = exportTable(ctx, tbl, now, f.withTTL, format, wo, out, &rows, memory.DefaultAllocator)
	stop()
	if err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	res := exportResult{FileNumber: 1, TotalRows: rows.Load(), FileSize: out.Size(), URL: "file://" + absPath(out.Path())}
	fmt.Fprintf(stdout, "FileNumber\tTotalRows\tFileSize\tURL\n%d\t%d\t%d\t%s\n", res.FileNumber, res.TotalRows, res.FileSize, res.URL)
	return db.Close()
}

// exportTable streams the rows of tbl alive at now into w in format f.
func exportTable(ctx context.Context, tbl *table.Table, now time.Time, withTTL bool, f fileformat.Format,
	o fileformat.WriterOptions, w io.Writer, rows *atomic.Int64, mem memory.Allocator) error {
	def, pol := tbl.Definition(), tbl.Policy()
	cols := def.Schema.Columns
	sc := fileformat.FileSchema(cols, withTTL)
	fw, err := fileformat.NewWriter(f, w, sc, o, mem)
	if err != nil {
		return err
	}
	hasTTL := withTTL && pol.Mode != ttlcol.NoTTL
	var shown schema.Type
	if pol.Mode == ttlcol.SourceMode {
		c, ok := def.Schema.Column(pol.SourceColumn)
		if !ok {
			return rowttl.Errorf(rowttl.ErrCorruption, "table %s: row ttl column %s is missing", tbl.Name(), pol.SourceColumn)
		}
		shown = c.Type
	}
	rr, err := tbl.Scan(ctx, query.Request{Now: now, ShowHidden: hasTTL})
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		n := rec.NumRows()
		arrs := make([]arrow.Array, 0, len(cols)+1)
		for i := range cols {
			arrs = append(arrs, rec.Column(i))
		}
		var exp arrow.Array
		switch {
		case hasTTL:
			if exp, err = query.Expirations(mem, pol, shown, rec.Column(len(cols))); err != nil {
				return err
			}
		case withTTL:
			// A table without row TTL: no row ever expires.
			exp = schema.ConstArray(mem, arrow.PrimitiveTypes.Int64, schema.Null, int(n))
		}
		if exp != nil {
			arrs = append(arrs, exp)
		}
		out := array.NewRecordBatch(sc, arrs, n)
		if exp != nil {
			exp.Release()
		}
		err = fw.Write(out)
		out.Release()
		if err != nil {
			return err
		}
		rows.Add(n)
	}
	if err := rr.Err(); err != nil {
		return err
	}
	return fw.Close()
}

// csvOptions reads the CSV flags, in the notation of Stream Load headers.
func csvOptions(sep, delim, enclose string) (fileformat.CSVOptions, error) {
	var o fileformat.CSVOptions
	var err error
	if o.ColumnSeparator, err = load.Unescape("column_separator", sep); err != nil {
		return o, err
	}
	if o.LineDelimiter, err = load.Unescape("line_delimiter", delim); err != nil {
		return o, err
	}
	if enclose != "" {
		b, err := load.Unescape("enclose", enclose)
		if err != nil {
			return o, err
		}
		if len(b) != 1 {
			return o, rowttl.Errorf(rowttl.ErrInvalidArgument, "enclose %q must be one byte", enclose)
		}
		o.Enclose = b[0]
	}
	return o, nil
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
