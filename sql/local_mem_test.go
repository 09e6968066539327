package sql

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/fileformat"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
)

// writeEventsParquet writes n rows (id, ts, msg of 20 bytes) into one row
// group of a Parquet file, as rowttl export writes them.
func writeEventsParquet(t *testing.T, path string, n int) {
	t.Helper()
	cols := []schema.Column{
		{Name: "id", Type: schema.BigIntType},
		{Name: "ts", Type: schema.DatetimeType(6), Nullable: true},
		{Name: "msg", Type: schema.StringType, Nullable: true},
	}
	sc := fileformat.FileSchema(cols, false)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := fileformat.NewParquetWriter(f, sc, fileformat.ParquetOptions{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	const chunk = 8192
	msg := []byte("message ")
	for from := 0; from < n; from += chunk {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		ids, tss, msgs := b.Field(0).(*array.Int64Builder), b.Field(1).(*array.TimestampBuilder), b.Field(2).(*array.StringBuilder)
		for i := from; i < min(n, from+chunk); i++ {
			ids.Append(int64(i))
			tss.Append(arrow.Timestamp(1_767_225_600_000_000 + int64(i)*1000))
			msgs.BinaryBuilder.Append(strconv.AppendInt(msg[:8], int64(i)*7919, 10))
		}
		rec := b.NewRecordBatch()
		b.Release()
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// arrowPeak counts the Arrow bytes allocated at once, and their peak.
type arrowPeak struct {
	memory.Allocator
	mu        sync.Mutex
	cur, peak int
}

func (p *arrowPeak) add(n int) {
	p.mu.Lock()
	p.cur += n
	p.peak = max(p.peak, p.cur)
	p.mu.Unlock()
}

func (p *arrowPeak) Allocate(n int) []byte {
	b := p.Allocator.Allocate(n)
	p.add(cap(b))
	return b
}

func (p *arrowPeak) Reallocate(n int, b []byte) []byte {
	old := cap(b)
	b = p.Allocator.Reallocate(n, b)
	p.add(cap(b) - old)
	return b
}

func (p *arrowPeak) Free(b []byte) {
	p.add(-cap(b))
	p.Allocator.Free(b)
}

// measure runs f and returns the most Arrow bytes allocated at once
// meanwhile, beyond those allocated before.
func (p *arrowPeak) measure(f func()) int {
	p.mu.Lock()
	base := p.cur
	p.peak = base
	p.mu.Unlock()
	f()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak - base
}

// INSERT ... SELECT FROM local() streams the file into the table: the
// Arrow memory it holds at once is a few batches and the table writer's
// buffers, the same for a file four times as big (it once held every
// row: 1.1 GB for 500K). Batches of 8192 rows make a batch small beside
// the file; the smaller file is big enough for the reader's buffers to
// have reached their size (a file of 50K rows needs less of them).
func TestLocalInsertBounded(t *testing.T) {
	defer func(n int) { localParquetBatchRows = n }(localParquetBatchRows)
	localParquetBatchRows = 8192
	rows := 400_000
	if n, err := strconv.Atoi(os.Getenv("ROWTTL_LOCAL_ROWS")); err == nil {
		rows = n // measuring larger files
	}
	dir := t.TempDir()
	small, big := filepath.Join(dir, "small.parquet"), filepath.Join(dir, "big.parquet")
	writeEventsParquet(t, small, rows/4)
	writeEventsParquet(t, big, rows)
	// A UNIQUE load gathers up to the table's run size before it spills
	// (table.LoadWriter): DUPLICATE's writer holds a page.
	for _, keys := range []string{"DUPLICATE KEY(id)"} {
		t.Run(keys, func(t *testing.T) {
			mem := &arrowPeak{Allocator: memory.NewCheckedAllocator(memory.NewGoAllocator())}
			defer mem.Allocator.(*memory.CheckedAllocator).AssertSize(t, 0)
			db, err := table.OpenDB(t.TempDir(), &table.Options{Allocator: mem, DisableAutoCompaction: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			s := NewSession(db)
			s.SetAllocator(mem)
			ctx := context.Background()
			if _, err := s.Exec(ctx, "CREATE TABLE t (id BIGINT, ts DATETIME(6), msg STRING) "+keys); err != nil {
				t.Fatal(err)
			}
			insert := func(path string, n int) int {
				t.Helper()
				if _, err := s.Exec(ctx, "TRUNCATE TABLE t"); err != nil {
					t.Fatal(err)
				}
				q := `INSERT INTO t SELECT * FROM local("file_path" = ` + parser.QuoteString(path) + `, "format" = "parquet")`
				var res *Result
				peak := mem.measure(func() { res, err = s.Exec(ctx, q) })
				if err != nil {
					t.Fatal(err)
				}
				if res.RowsAffected != int64(n) {
					t.Fatalf("%d rows affected, want %d", res.RowsAffected, n)
				}
				c, err := s.Exec(ctx, "SELECT count(*), count(DISTINCT msg), max(ts) FROM t")
				if err != nil {
					t.Fatal(err)
				}
				last := time.UnixMicro(1_767_225_600_000_000 + int64(n-1)*1000).UTC().Format("2006-01-02 15:04:05.000000")
				if want := fmt.Sprint([][]string{{strconv.Itoa(n), strconv.Itoa(n), last}}); fmt.Sprint(c.Rows) != want {
					t.Fatalf("count: %v, want %s", c.Rows, want)
				}
				t.Logf("%s: %d rows from local(): at most %d Arrow bytes at once", keys, n, peak)
				return peak
			}
			smallPeak := insert(small, rows/4)
			peak := insert(big, rows)
			// Holding the rows would take some 40 bytes a row, 12 MB more
			// for the bigger file; what may grow is the reader's page
			// buffer of each column (1 MiB), which the smaller file's
			// column chunks do not fill.
			t.Logf("%s: %d Arrow bytes more for %d more rows", keys, peak-smallPeak, rows-rows/4)
			if peak-smallPeak > 4<<20 {
				t.Errorf("the Arrow memory held at once grows by %d bytes for %d more rows", peak-smallPeak, rows-rows/4)
			}
		})
	}
}
