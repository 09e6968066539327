package query

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
	"github.com/rowttl/rowttl/internal/rawscan"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/ttlcol"
	"github.com/rowttl/rowttl/vfs"
)

// scanTable is the table of testdata/scan: id BIGINT (the key), v BIGINT,
// and a direct-mode __TTL__ (each row's expiration, in µs).
var scanTable = &schema.Schema{KeyCount: 1, Columns: []schema.Column{
	{ID: 1, Name: "id", Type: schema.BigIntType},
	{ID: 2, Name: "v", Type: schema.BigIntType, Nullable: true},
}}

func scanPhysical() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		scanTable.Columns[0].Field(), scanTable.Columns[1].Field(),
		{Name: schema.TTLColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
}

// writeRowset writes rec (of the physical schema phys, its __TTL__ at
// ttlIndex) as the one rowset of an in-memory file system and opens it; the
// caller still owns rec.
func writeRowset(t *testing.T, phys *arrow.Schema, ttlIndex int, seg segment.WriterOptions, rec arrow.RecordBatch) *rowset.Handle {
	t.Helper()
	fsys := vfs.NewMemFS()
	fsys.MkdirAll("/t")
	w := rowset.NewWriter(rowset.WriterOptions{
		FS: fsys, Dir: "/t", Schema: phys, TTLIndex: ttlIndex, Segment: seg,
		NewFileNum: func() uint64 { return 1 },
	})
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	m, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	m.ID = 1
	h, err := rowset.Open(fsys, "/t", m, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestScanGolden runs testdata/scan. Regenerate with
// `go test ./query -run TestScanGolden -rewrite`.
//
//	rowset [page-rows=N] [model=mor] [delete=(ordinal, ...)]
//	<one row per line: id v ttl, null for NULL>
//
// adds a rowset (newest last) and prints its pages' __TTL__ zone maps;
//
//	scan now=T [cols=(c, ...)] [filter=(col op value)] [expired]
//
// scans every rowset at now T (µs) and prints the counters and the rows;
// expired makes it compaction's stored scan (rawscan.Options.IncludeExpired).
// model=mor on any rowset makes the table merge-on-read UNIQUE, so newer
// rowsets hide older versions of their keys.
func TestScanGolden(t *testing.T) {
	datadriven.Walk(t, "testdata/scan", func(t *testing.T, path string) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		fsys := vfs.NewMemFS()
		fsys.MkdirAll("/t")
		var handles []*rowset.Handle
		defer func() {
			for _, h := range handles {
				h.Unref()
			}
		}()
		deleted := map[uint64]*roaring.Bitmap{}
		model := schema.Duplicate
		var fileNum uint64
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "rowset":
				pageRows := 1024
				d.MaybeScanArgs(t, "page-rows", &pageRows)
				if d.HasArg("model") {
					model = schema.UniqueMOR
				}
				w := rowset.NewWriter(rowset.WriterOptions{
					FS: fsys, Dir: "/t", Schema: scanPhysical(), TTLIndex: 2,
					Segment:    segment.WriterOptions{PageRows: pageRows},
					NewFileNum: func() uint64 { fileNum++; return fileNum },
				})
				rec := scanRows(t, mem, d.Input)
				if err := w.Write(rec); err != nil {
					t.Fatal(err)
				}
				rec.Release()
				m, err := w.Finish()
				if err != nil {
					t.Fatal(err)
				}
				m.ID = uint64(len(handles) + 1)
				m.Lo, m.Hi = int64(len(handles)), int64(len(handles))
				h, err := rowset.Open(fsys, "/t", m, nil)
				if err != nil {
					t.Fatal(err)
				}
				handles = append(handles, h)
				if d.HasArg("delete") {
					b := roaring.New()
					for _, a := range d.CmdArgs {
						if a.Key == "delete" {
							for _, v := range a.Vals {
								n, _ := strconv.Atoi(v)
								b.Add(uint32(n))
							}
						}
					}
					deleted[m.ID] = b
				}
				var out strings.Builder
				fmt.Fprintf(&out, "rowset %d: %d rows, ttl %+v\n", m.ID, m.Rows, m.TTL)
				r := h.Segments[0]
				for p := 0; p < r.NumPages(); p++ {
					first, n := r.Page(p)
					z := r.PageStats(2, p)
					fmt.Fprintf(&out, "  page %d rows [%d, %d): ttl min=%s max=%s nulls=%d\n",
						p, first, first+int64(n), z.Min, z.Max, z.NullCount)
				}
				return out.String()
			case "scan":
				var now int64
				d.ScanArgs(t, "now", &now)
				req := Request{Now: time.UnixMicro(now), Parallelism: 1}
				raw := rawscan.Options{IncludeExpired: d.HasArg("expired")}
				if d.HasArg("cols") {
					req.Columns = []string{}
					for _, a := range d.CmdArgs {
						if a.Key == "cols" {
							for _, v := range a.Vals {
								if v != "" {
									req.Columns = append(req.Columns, v)
								}
							}
						}
					}
				}
				if d.HasArg("filter") {
					var col, op, val string
					d.ScanArgs(t, "filter", &col, &op, &val)
					n, _ := strconv.ParseInt(val, 10, 64)
					ops := map[string]Op{"=": Eq, "<": Lt, ">": Gt, "<=": Le, ">=": Ge}
					req.Filter = Compare(col, ops[op], n)
				}
				for _, h := range handles {
					h.Ref()
				}
				snap := &Snapshot{Schema: scanTable, Policy: ttlcol.Policy{Mode: ttlcol.DirectMode}, Model: model,
					Rowsets: append([]*rowset.Handle(nil), handles...), Deleted: deleted,
					Release: func() {
						for _, h := range handles {
							h.Unref()
						}
					}}
				s, err := NewStoredScan(context.Background(), mem, snap, req, raw)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				var rows []string
				for s.Next() {
					rec := s.RecordBatch()
					if rec.NumCols() == 0 {
						rows = append(rows, fmt.Sprintf("(%d rows, no columns)", rec.NumRows()))
						continue
					}
					for i := 0; i < int(rec.NumRows()); i++ {
						var f []string
						for _, c := range rec.Columns() {
							f = append(f, c.ValueStr(i))
						}
						rows = append(rows, strings.Join(f, " "))
					}
				}
				err = s.Err()
				c := s.Counters
				s.Release()
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				var out strings.Builder
				fmt.Fprintf(&out, "pages: %d expired, %d live, %d pruned, %d read\n", c.PagesExpired, c.PagesLive, c.PagesPruned, c.PagesRead)
				for _, r := range rows {
					out.WriteString(r + "\n")
				}
				return out.String()
			}
			d.Fatalf(t, "unknown command %s", d.Cmd)
			return ""
		})
	})
}

func scanRows(t *testing.T, mem memory.Allocator, input string) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(mem, scanPhysical())
	defer b.Release()
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("row %q: want id v ttl", line)
		}
		for c, s := range f {
			fb := b.Field(c).(*array.Int64Builder)
			if s == "null" {
				fb.AppendNull()
				continue
			}
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			fb.Append(n)
		}
	}
	return b.NewRecordBatch()
}

// TestDefaultWorkers: a scan's own parallelism wins, then the context's,
// then GOMAXPROCS.
func TestDefaultWorkers(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	bg := context.Background()
	for _, c := range []struct {
		ctx       context.Context
		requested int
		want      int
	}{
		{bg, 0, procs},
		{bg, 3, 3},
		{WithParallelism(bg, 1), 0, 1},
		{WithParallelism(bg, 1), 4, 4},
		{WithParallelism(bg, 0), 0, procs},
	} {
		if got := defaultWorkers(c.ctx, c.requested); got != c.want {
			t.Errorf("requested %d under %v: %d workers, want %d", c.requested, c.ctx, got, c.want)
		}
	}
}
