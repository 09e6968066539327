package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/fileformat"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/table"
)

// ImportFile is the name of the Parquet file the import workload reads,
// in the data set's directory.
const ImportFile = "import.parquet"

// WriteImportFile writes the generated rows alive at Now, with their
// expirations as __TTL__, to a Parquet file at path, laid out as
// `rowttl export --with-ttl` writes it (the export workload's file), and
// returns the rows written. The rows are regenerated rather than scanned,
// so that the DuckDB side writes the same file byte for byte without a
// rowttl table: both engines then import the same bytes.
func WriteImportFile(ctx context.Context, path string, rows int64, layout Layout, seed uint64, mem memory.Allocator) (int64, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	sc := fileformat.FileSchema(EventsDefinition(schema.Duplicate).Schema.Columns, true)
	out, err := fileformat.CreateAtomic(nil, path)
	if err != nil {
		return 0, err
	}
	defer out.Abort()
	w, err := fileformat.NewParquetWriter(out, sc, fileformat.ParquetOptions{}, mem)
	if err != nil {
		return 0, err
	}
	// One batch at a time: the whole generated table would hold more
	// memory than either engine's import of it, and the peak RSS the
	// import workloads report would be this file's.
	g := Events(rows, layout, seed)
	for i := range g.NumBatches() {
		b := g.Batch(mem, i)
		lb, err := LiveRows(ctx, mem, b)
		b.Release()
		if err != nil {
			return 0, err
		}
		fb := array.NewRecordBatch(sc, lb.Columns(), lb.NumRows())
		err = w.Write(fb)
		fb.Release()
		lb.Release()
		if err != nil {
			return 0, err
		}
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return w.Rows(), out.Commit()
}

// ImportStatement is the statement rowttl's import workload times: the
// file into a table of the events schema through SQL, as a user loads a
// Parquet file with `rowttl sql` (the hidden __TTL__ is written only when
// named).
func ImportStatement(tableName, path string) string {
	return fmt.Sprintf(`INSERT INTO %s (%s, %s, %s, %s, %s, %s) SELECT * FROM local("file_path" = "%s", "format" = "parquet")`,
		tableName, ColID, ColEventTime, ColUserID, ColAmount, ColMessage, schema.TTLColumn, strings.ReplaceAll(path, `"`, `\"`))
}

// importFile writes the file of the import workloads into the data set's
// directory.
func importFile(ctx context.Context, o *Options) (string, int64, error) {
	if err := os.MkdirAll(o.BaseDir(), 0o755); err != nil {
		return "", 0, err
	}
	path := filepath.Join(o.BaseDir(), ImportFile)
	n, err := WriteImportFile(ctx, path, o.Rows, o.Layout, o.Seed, o.Mem)
	if err != nil {
		return "", 0, fmt.Errorf("write the file to import: %w", err)
	}
	o.logf("import: %d rows in %s", n, path)
	return path, n, nil
}

// runImportLoad times Options.Load of the import file into a fresh
// events table, as `rowttl load --format parquet` loads it: the result
// import_load, compared with DuckDB's import. Its answer is the rows
// alive at Now afterwards (every row of the file), counted untimed.
func runImportLoad(ctx context.Context, o *Options) (Result, error) {
	res := Result{Engine: Engine, Workload: "import_load", Layout: string(o.Layout), Rows: o.Rows}
	path, n, err := importFile(ctx, o)
	if err != nil {
		return res, err
	}
	// The peaks of writing the file and of import, run before in this
	// process, are not this one's.
	ResetPeakRSS()
	defer os.Remove(path)
	dir := filepath.Join(o.Dir, "rowttl-import-load")
	defer os.RemoveAll(dir)
	var tbl *table.Table
	var untimed Untimed
	t := Trial{
		Untimed: &untimed,
		Setup: func() error {
			var err error
			tbl, err = freshEvents(dir, schema.Duplicate, o)
			return err
		},
		Run: func() (string, error) {
			loaded, err := o.Load(ctx, tbl, path)
			if err != nil {
				return "", err
			}
			if loaded != n {
				return "", fmt.Errorf("loaded %d rows of %d", loaded, n)
			}
			var live int64
			untimed.Do(func() { live, err = tbl.Count(ctx, Now, nil) })
			return strconv.FormatInt(live, 10), err
		},
		Teardown: func() error {
			if err := tbl.Close(); err != nil {
				return err
			}
			var err error
			res.BytesOnDisk, err = bytesOnDisk(dir)
			return err
		},
	}
	res.OpRows = n
	o.logf("import_load: %d warm-up + %d runs", o.Warmup, o.Runs)
	res.Seconds, res.Runs, res.Answer, err = Measure(o.Warmup, o.Runs, &res.CPUSeconds, t)
	if err == nil {
		res.PeakRSSBytes = PeakRSS()
	}
	return res, err
}

// runImport times ImportStatement into a fresh events table; the answer
// is the rows the table holds afterwards (counted untimed), the result's
// BytesOnDisk the table's size.
func runImport(ctx context.Context, o *Options, res *Result) error {
	if o.SQL == nil {
		return fmt.Errorf("import needs a SQL session (Options.SQL)")
	}
	path, n, err := importFile(ctx, o)
	if err != nil {
		return err
	}
	defer os.Remove(path)
	ResetPeakRSS() // writing the file is not the import
	dir := filepath.Join(o.Dir, "rowttl-import")
	defer os.RemoveAll(dir)
	var sess SQLSession
	var sqlDB *table.DB
	var untimed Untimed
	t := Trial{
		Untimed: &untimed,
		Setup: func() error {
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
			db, err := table.OpenDB(dir, o.tableOptions())
			if err != nil {
				return err
			}
			if _, err := db.CreateTable(table.DefaultDatabase, "events", EventsDefinition(schema.Duplicate), false); err != nil {
				db.Close()
				return err
			}
			if err := db.Close(); err != nil {
				return err
			}
			if sqlDB, err = table.OpenDB(dir, &table.Options{DisableAutoCompaction: true}); err != nil {
				return err
			}
			if sess, err = o.SQL(ctx, sqlDB); err != nil {
				sqlDB.Close()
			}
			return err
		},
		Run: func() (string, error) {
			if _, err := sess.Run(ctx, ImportStatement("events", path)); err != nil {
				return "", err
			}
			var rows [][]string
			var err error
			untimed.Do(func() { rows, err = sess.Run(ctx, "SELECT count(*) FROM events") })
			if err != nil {
				return "", err
			}
			if len(rows) != 1 || len(rows[0]) != 1 {
				return "", fmt.Errorf("count: %d rows", len(rows))
			}
			return rows[0][0], nil
		},
		Teardown: func() error {
			err := sess.Close()
			if cerr := sqlDB.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			res.BytesOnDisk, err = bytesOnDisk(filepath.Join(dir, table.DefaultDatabase, "events"))
			return err
		},
	}
	res.OpRows = n
	o.logf("import: %d warm-up + %d runs", o.Warmup, o.Runs)
	res.Seconds, res.Runs, res.Answer, err = Measure(o.Warmup, o.Runs, &res.CPUSeconds, t)
	if err == nil && res.Answer != strconv.FormatInt(n, 10) {
		err = fmt.Errorf("the table holds %s rows after importing %d", res.Answer, n)
	}
	return err
}
