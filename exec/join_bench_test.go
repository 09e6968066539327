package exec

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
)

// benchInt64Batches returns n rows of (k BIGINT, v BIGINT) in batches of
// BatchRows, k = i*step mod mod.
func benchInt64Batches(mem memory.Allocator, n int, step, mod int64, str bool) (Schema, []arrow.RecordBatch) {
	s := Schema{{Name: "k", Type: schema.BigIntType}, {Name: "v", Type: schema.BigIntType}}
	if str {
		s[0].Type = schema.StringType
	}
	var out []arrow.RecordBatch
	for start := 0; start < n; start += BatchRows {
		b := array.NewRecordBuilder(mem, s.Arrow())
		for i := start; i < min(n, start+BatchRows); i++ {
			k := int64(i) * step % mod
			if str {
				b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("key-%d", k))
			} else {
				b.Field(0).(*array.Int64Builder).Append(k)
			}
			b.Field(1).(*array.Int64Builder).Append(int64(i))
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return s, out
}

// reusableSource streams batches that outlive it, for benchmarks.
func reusableSource(s Schema, bs []arrow.RecordBatch) Operator {
	for _, b := range bs {
		b.Retain()
	}
	return NewSliceSource(s, append([]arrow.RecordBatch(nil), bs...))
}

// BenchmarkHashJoin: a 1M-row probe side against a 100K-row build side,
// every probe row matching one build row.
func BenchmarkHashJoin(b *testing.B) {
	for _, str := range []bool{false, true} {
		name := "int64"
		if str {
			name = "string"
		}
		b.Run(name, func(b *testing.B) {
			mem := memory.NewGoAllocator()
			ps, probe := benchInt64Batches(mem, 1_000_000, 7, 100_000, str)
			bs, build := benchInt64Batches(mem, 100_000, 1, 100_000, str)
			env := &Env{Mem: mem, Budget: NewBudget(0)}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				op, err := NewHashJoin(env, reusableSource(ps, probe), reusableSource(bs, build), InnerJoin, []int{0}, []int{0}, nil)
				if err != nil {
					b.Fatal(err)
				}
				rows := 0
				for {
					r, err := op.Next(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					if r == nil {
						break
					}
					rows += int(r.NumRows())
					r.Release()
				}
				op.Close()
				if rows != 1_000_000 {
					b.Fatalf("%d rows", rows)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ns/probe-row")
		})
	}
}

// BenchmarkJoinGroupBy: GROUP BY a string column of a 100K-row build side
// over a 1M-row probe side, every probe row matching, the way the planner
// runs it with the build rows' group ids (grouped) and without (gathered:
// the strings gathered per pair and hashed per row).
func BenchmarkJoinGroupBy(b *testing.B) {
	mem := memory.NewGoAllocator()
	ps, probe := benchInt64Batches(mem, 1_000_000, 7, 100_000, false)
	bs := Schema{{Name: "k", Type: schema.BigIntType}, {Name: "country", Type: schema.StringType}}
	var build []arrow.RecordBatch
	for start := 0; start < 100_000; start += BatchRows {
		rb := array.NewRecordBuilder(mem, bs.Arrow())
		for i := start; i < min(100_000, start+BatchRows); i++ {
			rb.Field(0).(*array.Int64Builder).Append(int64(i))
			rb.Field(1).(*array.StringBuilder).Append([]string{"BR", "CN", "DE", "IN", "JP", "US"}[i*7%6])
		}
		build = append(build, rb.NewRecordBatch())
		rb.Release()
	}
	for _, grouped := range []bool{false, true} {
		name := "gathered"
		if grouped {
			name = "grouped"
		}
		b.Run(name, func(b *testing.B) {
			env := &Env{Mem: mem, Budget: NewBudget(0)}
			for b.Loop() {
				var dict *GroupDict
				out := []int{3, 1} // country, v
				if grouped {
					dict = NewGroupDict([]int{1})
					out = []int{4, 1} // group id, v
				}
				j, err := NewHashJoinGrouped(env, reusableSource(ps, probe), reusableSource(bs, build), InnerJoin,
					[]int{0}, []int{0}, nil, out, dict)
				if err != nil {
					b.Fatal(err)
				}
				op, err := NewHashAggregate(env, j, []int{0}, []Aggregate{{Func: CountStar, Name: "n"}, {Func: Sum, Arg: 1, Name: "s"}})
				if err != nil {
					b.Fatal(err)
				}
				groups := 0
				for {
					r, err := op.Next(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					if r == nil {
						break
					}
					if grouped {
						gv := &GroupValue{Dict: dict, X: &ColumnRef{Index: 0, Typ: schema.IntType}, Typ: schema.StringType}
						v, err := gv.Eval(env, r)
						if err != nil {
							b.Fatal(err)
						}
						v.Release()
					}
					groups += int(r.NumRows())
					r.Release()
				}
				op.Close()
				if dict != nil {
					dict.Release()
				}
				if groups != 6 {
					b.Fatalf("%d groups", groups)
				}
			}
		})
	}
}
