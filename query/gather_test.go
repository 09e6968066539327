package query

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/ttlcol"
)

// dirtyAllocator hands out memory filled with garbage, as a page pool may:
// a gather that leaves a byte unwritten shows in the rows it returns.
type dirtyAllocator struct{ memory.Allocator }

func (d dirtyAllocator) Allocate(n int) []byte {
	b := d.Allocator.Allocate(n)
	for i := range b {
		b[i] = 0xA5
	}
	return b
}

// TestScanGathersEveryType checks the rows of scans of pages that are all
// live, all expired or live in part (at every density), of every
// fixed-width type, booleans and strings, with NULLs and values that take
// each encoding (constant, frame of reference, delta, scaled, plain,
// dictionary), against the rows written: without a filter (each column
// gathered right after it is decoded), with one (its column decoded before
// the others), with __TTL__ shown, on one worker and on two. Page memory is
// handed out dirty and every buffer is returned to a checked allocator.
// The seed is printed.
func TestScanGathersEveryType(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	tbl := &schema.Schema{KeyCount: 1, Columns: []schema.Column{
		{ID: 1, Name: "id", Type: schema.BigIntType},
		{ID: 2, Name: "ti", Type: schema.TinyIntType, Nullable: true},
		{ID: 3, Name: "si", Type: schema.SmallIntType, Nullable: true},
		{ID: 4, Name: "i", Type: schema.IntType, Nullable: true},
		{ID: 5, Name: "bi", Type: schema.BigIntType, Nullable: true},
		{ID: 6, Name: "f", Type: schema.FloatType, Nullable: true},
		{ID: 7, Name: "d", Type: schema.DoubleType, Nullable: true},
		{ID: 8, Name: "dec", Type: schema.DecimalType(12, 3), Nullable: true},
		{ID: 9, Name: "b", Type: schema.BooleanType, Nullable: true},
		{ID: 10, Name: "dt", Type: schema.DateType, Nullable: true},
		{ID: 11, Name: "ts", Type: schema.DatetimeType(6), Nullable: true},
		{ID: 12, Name: "s", Type: schema.StringType, Nullable: true},
	}}
	fields := make([]arrow.Field, 0, len(tbl.Columns)+1)
	for _, c := range tbl.Columns {
		fields = append(fields, c.Field())
	}
	fields = append(fields, arrow.Field{Name: schema.TTLColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	phys := arrow.NewSchema(fields, nil)
	const pageRows, pages, now = 128, 40, int64(1_000_000)
	const rows = pageRows * pages

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	pageMem := memory.NewCheckedAllocator(dirtyAllocator{memory.NewGoAllocator()})
	b := array.NewRecordBuilder(mem, phys)
	// want[id] is the row as the scan must return it, every column and
	// __TTL__; live[id] whether it is alive at now.
	want := make([]string, rows)
	live := make([]bool, rows)
	for p := range pages {
		// Per page: how many rows live, how many NULLs, and the shape of
		// the values (one value, small, sequential or anything).
		density := []float64{0, 1, rng.Float64(), 1 - 1.0/pageRows, 1.0 / pageRows}[rng.IntN(5)]
		nulls := []float64{0, 0.2, 1}[rng.IntN(3)]
		shape := rng.IntN(4)
		for k := range pageRows {
			id := int64(p*pageRows + k)
			b.Field(0).(*array.Int64Builder).Append(id)
			v := func() int64 {
				switch shape {
				case 0:
					return 7
				case 1:
					return rng.Int64N(100)
				case 2:
					return id * 3
				}
				return int64(rng.Uint64())
			}
			for c := 1; c < len(tbl.Columns); c++ {
				fb := b.Field(c)
				if rng.Float64() < nulls {
					fb.AppendNull()
					continue
				}
				x := v()
				switch fb := fb.(type) {
				case *array.Int8Builder:
					fb.Append(int8(x))
				case *array.Int16Builder:
					fb.Append(int16(x))
				case *array.Int32Builder:
					fb.Append(int32(x))
				case *array.Int64Builder:
					fb.Append(x)
				case *array.Float32Builder:
					fb.Append(float32(x%100000) / 8)
				case *array.Float64Builder:
					if shape == 3 {
						fb.Append(math.Float64frombits(uint64(x) &^ (0x7ff << 52))) // finite, any bits
					} else {
						fb.Append(float64(x%1000000) / 100) // cents: scaled
					}
				case *array.Decimal128Builder:
					fb.Append(decimal128.FromI64(x % 1e12))
				case *array.BooleanBuilder:
					fb.Append(x%2 == 0)
				case *array.Date32Builder:
					fb.Append(arrow.Date32(x % 100000))
				case *array.TimestampBuilder:
					fb.Append(arrow.Timestamp(x % 1e15))
				case *array.StringBuilder:
					if shape == 3 {
						fb.Append(fmt.Sprintf("message %d %x", id, x))
					} else {
						fb.Append(fmt.Sprintf("tag%d", x%5))
					}
				default:
					t.Fatalf("no value for %T", fb)
				}
			}
			tb := b.Field(len(tbl.Columns)).(*array.Int64Builder)
			switch {
			case rng.Float64() >= density:
				tb.Append(now - 1 - rng.Int64N(1000))
			case rng.IntN(8) == 0:
				tb.AppendNull() // never expires
				live[id] = true
			default:
				tb.Append(now + 1 + rng.Int64N(1000))
				live[id] = true
			}
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	for id := range rows {
		var sb strings.Builder
		for c := range rec.NumCols() {
			sb.WriteString(rec.Column(int(c)).ValueStr(id))
			sb.WriteByte('|')
		}
		want[id] = sb.String()
	}
	h := writeRowset(t, phys, len(tbl.Columns), segment.WriterOptions{PageRows: pageRows}, rec)
	rec.Release()

	for _, par := range []int{1, 2} {
		for _, tc := range []struct {
			name   string
			filter Expr
			keep   func(id int64) bool
		}{
			{"no filter", nil, func(int64) bool { return true }},
			{"id >= 1000", Compare("id", Ge, int64(1000)), func(id int64) bool { return id >= 1000 }},
		} {
			h.Ref()
			snap := &Snapshot{Schema: tbl, Policy: ttlcol.Policy{Mode: ttlcol.DirectMode}, Model: schema.Duplicate,
				Rowsets: []*rowset.Handle{h}, Release: h.Unref, PageMem: pageMem}
			s, err := NewScan(context.Background(), mem, snap, Request{Now: time.UnixMicro(now), Parallelism: par,
				Filter: tc.filter, ShowHidden: true})
			if err != nil {
				t.Fatal(err)
			}
			seen := 0
			for s.Next() {
				rb := s.RecordBatch()
				if rb.NumCols() != int64(len(fields)) {
					t.Fatalf("%d columns, want %d", rb.NumCols(), len(fields))
				}
				ids := rb.Column(0).(*array.Int64)
				for i := range int(rb.NumRows()) {
					id := ids.Value(i)
					var sb strings.Builder
					for c := range rb.NumCols() {
						sb.WriteString(rb.Column(int(c)).ValueStr(i))
						sb.WriteByte('|')
					}
					if !live[id] || !tc.keep(id) {
						t.Fatalf("parallelism %d, %s: row %d returned, expired or filtered out", par, tc.name, id)
					}
					if got := sb.String(); got != want[id] {
						t.Fatalf("parallelism %d, %s: row %d is\n%s\nwant\n%s", par, tc.name, id, got, want[id])
					}
					seen++
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			s.Release()
			n := 0
			for id := range int64(rows) {
				if live[id] && tc.keep(id) {
					n++
				}
			}
			if seen != n {
				t.Fatalf("parallelism %d, %s: %d rows, want %d", par, tc.name, seen, n)
			}
		}
	}
	h.Unref()
	mem.AssertSize(t, 0)
	pageMem.AssertSize(t, 0)
}
