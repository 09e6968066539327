package table

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
)

// TestPublicScansNeverReturnExpiredRows sets, one at a time and all
// together, every boolean knob of query.Request and checks that Scan,
// Aggregate and Count still see only the rows alive at now: the options
// that let compaction read rows as stored must be out of their reach.
func TestPublicScansNeverReturnExpiredRows(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opts := quiet()
	opts.Allocator, opts.PageRows = mem, 128
	tbl := mustCreate(t, filepath.Join(t.TempDir(), "t"), directDef(), opts)
	defer checkClose(t, tbl)
	rows := genEvents(rand.New(rand.NewPCG(15, 1)), 0, 1000)
	rec := eventBatch(mem, rows, true)
	mustWrite(t, tbl, rec)
	rec.Release()
	live := map[int64]bool{}
	for _, r := range rows {
		if r.ttl == nil || *r.ttl > base.UnixMicro() {
			live[r.id] = true
		}
	}
	if len(live) == 0 || len(live) == len(rows) {
		t.Fatalf("%d live rows of %d: the data must mix live and expired rows", len(live), len(rows))
	}

	var knobs []string
	rt := reflect.TypeFor[query.Request]()
	for i := range rt.NumField() {
		if rt.Field(i).Type.Kind() == reflect.Bool {
			knobs = append(knobs, rt.Field(i).Name)
		}
	}
	set := func(names ...string) query.Request {
		req := query.Request{Now: base}
		v := reflect.ValueOf(&req).Elem()
		for _, n := range names {
			v.FieldByName(n).SetBool(true)
		}
		return req
	}
	cases := [][]string{nil, knobs}
	for _, k := range knobs {
		cases = append(cases, []string{k})
	}
	for _, c := range cases {
		req := set(c...)
		r, err := tbl.Scan(ctx, req)
		if err != nil {
			t.Fatalf("scan with %v: %v", c, err)
		}
		n := 0
		for r.Next() {
			b := r.RecordBatch()
			ids := b.Column(b.Schema().FieldIndices("id")[0]).(*array.Int64)
			for i := range ids.Len() {
				if !live[ids.Value(i)] {
					t.Errorf("scan with %v returned expired row %d", c, ids.Value(i))
				}
				n++
			}
		}
		if err := r.Err(); err != nil {
			t.Fatalf("scan with %v: %v", c, err)
		}
		r.Release()
		if n != len(live) {
			t.Errorf("scan with %v: %d rows, want the %d live ones", c, n, len(live))
		}

		req.Columns = []string{"amount"}
		if tot, err := tbl.Aggregate(ctx, req); err == nil && tot.Rows != int64(len(live)) {
			t.Errorf("aggregate with %v: %d rows, want %d", c, tot.Rows, len(live))
		}
	}
	if n := mustCount(t, tbl, base, nil); n != int64(len(live)) {
		t.Errorf("count: %d, want %d", n, len(live))
	}
}
