package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/fileformat"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/table"
)

// ExportLive writes the events rows alive at Now, with their expirations
// as the column __TTL__ (the events table is in direct mode, so the stored
// value is the expiration), to a Parquet file at path with the default
// options (snappy, zstd for the amount column), as `rowttl export
// --with-ttl` does, and returns the
// rows written.
func ExportLive(ctx context.Context, tbl *table.Table, path string) (int64, error) {
	sc := fileformat.FileSchema(tbl.Definition().Schema.Columns, true)
	out, err := fileformat.CreateAtomic(nil, path)
	if err != nil {
		return 0, err
	}
	defer out.Abort()
	w, err := fileformat.NewParquetWriter(out, sc, fileformat.ParquetOptions{}, memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	rr, err := tbl.Scan(ctx, query.Request{Now: Now, ShowHidden: true})
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		if int(rec.NumCols()) != sc.NumFields() {
			return 0, fmt.Errorf("export: the scan has %d columns, the file %d", rec.NumCols(), sc.NumFields())
		}
		b := array.NewRecordBatch(sc, rec.Columns(), rec.NumRows())
		err := w.Write(b)
		b.Release()
		if err != nil {
			return 0, err
		}
	}
	if err := rr.Err(); err != nil {
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return w.Rows(), out.Commit()
}

// runExport times ExportLive into a file of o.Dir; the result's
// BytesOnDisk is the Parquet file's size.
func runExport(ctx context.Context, o *Options, res *Result) error {
	tbl, err := table.Open(o.EventsDir(), o.tableOptions())
	if err != nil {
		return fmt.Errorf("open prepared table (run Prepare first): %w", err)
	}
	defer tbl.Close()
	path := filepath.Join(o.BaseDir(), "export.parquet")
	defer os.Remove(path)
	res.OpRows = o.Rows
	o.logf("%s: %d warm-up + %d runs", res.Workload, o.Warmup, o.Runs)
	res.Seconds, res.Runs, res.Answer, err = Measure(o.Warmup, o.Runs, &res.CPUSeconds, Trial{
		// Each run writes a new file, as an export to a fresh path does:
		// replacing the run before's would charge its unlink (some 27 ms
		// for 122 MiB here, the rename freeing its blocks) to the export.
		Setup: func() error { return removeFile(path) },
		Run: func() (string, error) {
			n, err := ExportLive(ctx, tbl, path)
			return strconv.FormatInt(n, 10), err
		},
	})
	if err == nil {
		if st, serr := os.Stat(path); serr == nil {
			res.BytesOnDisk = st.Size()
		}
	}
	return err
}

// removeFile removes path; a path that does not exist is no error.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}
