package query

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/ttlcol"
)

// TestPointLookupStrings checks the rows of scans that select one row of a
// page (a point lookup: its string columns are gathered from the selected
// rows alone) and many (the page is decoded whole, then filtered) against a
// reference, for string columns of distinct values (plain pages), of few
// (dictionary pages) and with NULLs, under both codecs of strings. Every
// buffer is returned to a checked allocator. The seed is printed.
func TestPointLookupStrings(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	tbl := &schema.Schema{KeyCount: 1, Columns: []schema.Column{
		{ID: 1, Name: "id", Type: schema.BigIntType},
		{ID: 2, Name: "msg", Type: schema.StringType, Nullable: true},
		{ID: 3, Name: "tag", Type: schema.StringType, Nullable: true},
	}}
	phys := arrow.NewSchema([]arrow.Field{
		tbl.Columns[0].Field(), tbl.Columns[1].Field(), tbl.Columns[2].Field(),
		{Name: schema.TTLColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	const rows, now = 2000, int64(1_000_000)
	type row struct {
		msg, tag string
		msgNull  bool
		live     bool
	}
	ref := make([]row, rows)
	for _, codec := range []segment.Codec{segment.CodecDefault, segment.CodecZstd} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		b := array.NewRecordBuilder(mem, phys)
		for i := range rows {
			r := row{msg: fmt.Sprintf("verb #%010d", rng.Uint64()%1e10), tag: []string{"a", "bb", "ccc"}[rng.IntN(3)],
				msgNull: rng.IntN(5) == 0, live: rng.IntN(4) != 0}
			ref[i] = r
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			if r.msgNull {
				b.Field(1).(*array.StringBuilder).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append(r.msg)
			}
			b.Field(2).(*array.StringBuilder).Append(r.tag)
			ttl := now + 1 + int64(i)
			if !r.live {
				ttl = now - int64(i)
			}
			b.Field(3).(*array.Int64Builder).Append(ttl)
		}
		rec := b.NewRecordBatch()
		b.Release()
		h := writeRowset(t, phys, 3, segment.WriterOptions{PageRows: 256, Codec: codec}, rec)
		rec.Release()
		if _, comp := h.Segments[0].PageEncoding(1, 0); codec == segment.CodecDefault && comp != "lz4" || codec == segment.CodecZstd && comp != "zstd" {
			t.Fatalf("codec %s: messages stored %s", codec, comp)
		}
		if enc, _ := h.Segments[0].PageEncoding(2, 0); enc != "dict" {
			t.Fatalf("tags stored %s, want dict", enc)
		}
		scan := func(filter Expr) map[int64]string {
			h.Ref()
			snap := &Snapshot{Schema: tbl, Policy: ttlcol.Policy{Mode: ttlcol.DirectMode}, Model: schema.Duplicate,
				Rowsets: []*rowset.Handle{h}, Release: h.Unref, PageMem: mem}
			s, err := NewScan(context.Background(), mem, snap, Request{Now: time.UnixMicro(now), Parallelism: 1, Filter: filter})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Release()
			got := map[int64]string{}
			for s.Next() {
				rb := s.RecordBatch()
				ids := rb.Column(0).(*array.Int64)
				for i := 0; i < int(rb.NumRows()); i++ {
					got[ids.Value(i)] = rb.Column(1).ValueStr(i) + "|" + rb.Column(2).ValueStr(i)
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			return got
		}
		want := func(lo, hi int64) map[int64]string {
			out := map[int64]string{}
			for i := lo; i < hi; i++ {
				if r := ref[i]; r.live {
					m := r.msg
					if r.msgNull {
						m = array.NullValueStr
					}
					out[i] = m + "|" + r.tag
				}
			}
			return out
		}
		check := func(name string, got, want map[int64]string) {
			t.Helper()
			if len(got) != len(want) {
				t.Fatalf("codec %s, %s: %d rows, want %d", codec, name, len(got), len(want))
			}
			for id, v := range want {
				if got[id] != v {
					t.Fatalf("codec %s, %s: row %d is %q, want %q", codec, name, id, got[id], v)
				}
			}
		}
		for range 100 {
			id := rng.Int64N(rows)
			check(fmt.Sprintf("id = %d", id), scan(Compare("id", Eq, id)), want(id, id+1))
		}
		lo := rng.Int64N(rows / 2)
		check(fmt.Sprintf("id >= %d", lo), scan(Compare("id", Ge, lo)), want(lo, rows))
		h.Unref()
		mem.AssertSize(t, 0)
	}
}
