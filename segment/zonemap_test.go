package segment

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
)

func valueEqual(a, b schema.Value) bool {
	return a.Kind == b.Kind && a.Int == b.Int && a.Float == b.Float && bytes.Equal(a.Bytes, b.Bytes)
}

func zoneEqual(a, b ZoneMap) bool {
	return a.Rows == b.Rows && a.NullCount == b.NullCount && valueEqual(a.Min, b.Min) && valueEqual(a.Max, b.Max)
}

// expectZone computes the zone map of arr the slow, obvious way.
func expectZone(arr arrow.Array) ZoneMap {
	z := ZoneMap{Rows: int64(arr.Len()), NullCount: int64(arr.NullN())}
	var vals []schema.Value
	for i := 0; i < arr.Len(); i++ {
		if arr.IsNull(i) {
			continue
		}
		switch a := arr.(type) {
		case *array.Boolean:
			v := int64(0)
			if a.Value(i) {
				v = 1
			}
			vals = append(vals, schema.IntVal(v))
		case *array.Int8:
			vals = append(vals, schema.IntVal(int64(a.Value(i))))
		case *array.Int16:
			vals = append(vals, schema.IntVal(int64(a.Value(i))))
		case *array.Int32:
			vals = append(vals, schema.IntVal(int64(a.Value(i))))
		case *array.Int64:
			vals = append(vals, schema.IntVal(a.Value(i)))
		case *array.Date32:
			vals = append(vals, schema.IntVal(int64(a.Value(i))))
		case *array.Timestamp:
			vals = append(vals, schema.IntVal(int64(a.Value(i))))
		case *array.Float32:
			if f := float64(a.Value(i)); !math.IsNaN(f) {
				vals = append(vals, schema.FloatVal(f))
			}
		case *array.Float64:
			if f := a.Value(i); !math.IsNaN(f) {
				vals = append(vals, schema.FloatVal(f))
			}
		case *array.String:
			vals = append(vals, schema.BytesVal([]byte(a.Value(i))))
		case *array.Binary:
			vals = append(vals, schema.BytesVal(append([]byte{}, a.Value(i)...)))
		}
	}
	if len(vals) == 0 {
		return z
	}
	lo, hi := vals[0], vals[0]
	for _, v := range vals[1:] {
		if v.Compare(lo) < 0 {
			lo = v
		}
		if v.Compare(hi) > 0 {
			hi = v
		}
	}
	if lo.Kind == schema.BytesValue && (len(lo.Bytes) > MaxBoundLen || len(hi.Bytes) > MaxBoundLen) {
		return z
	}
	z.Min, z.Max = lo, hi
	return z
}

// checkZones compares every page and column zone map of r with src.
func checkZones(t *testing.T, name string, r *Reader, src arrow.Array, pageRows int) {
	t.Helper()
	if want, got := expectZone(src), r.ColumnStats(0); !zoneEqual(got, want) {
		t.Fatalf("%s: column zone %v, want %v", name, got, want)
	}
	for p := 0; p < r.NumPages(); p++ {
		first, n := r.Page(p)
		s := array.NewSlice(src, first, first+int64(n))
		want := expectZone(s)
		s.Release()
		if got := r.PageStats(0, p); !zoneEqual(got, want) {
			t.Fatalf("%s: page %d zone %v, want %v", name, p, got, want)
		}
		s = array.NewSlice(src, first, first+int64(n))
		err := expectSum(r, p, s)
		s.Release()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

func zm(rows, nulls int64, lo, hi schema.Value) ZoneMap {
	return ZoneMap{Rows: rows, NullCount: nulls, Min: lo, Max: hi}
}

// expectSum checks the sum field of the zone map of page p, column 0, of r
// against arr, the page's values.
func expectSum(r *Reader, p int, arr arrow.Array) error {
	z := r.PageStats(0, p)
	enc, _ := r.PageEncoding(0, p)
	var want Int128
	for i := 0; i < arr.Len(); i++ {
		if arr.IsNull(i) {
			continue
		}
		switch a := arr.(type) {
		case *array.Int8:
			want.Add(int64(a.Value(i)))
		case *array.Int16:
			want.Add(int64(a.Value(i)))
		case *array.Int32:
			want.Add(int64(a.Value(i)))
		case *array.Int64:
			want.Add(a.Value(i))
		case *array.Date32:
			want.Add(int64(a.Value(i)))
		case *array.Timestamp:
			want.Add(int64(a.Value(i)))
		case *array.Float64:
			if enc == "scaled" {
				want.Add(int64(math.Round(a.Value(i) * pow10[z.SumScale])))
			}
		}
	}
	kind := r.f.cols[0].kind
	shouldHave := kind == kindInt || enc == "scaled"
	if z.HasSum != shouldHave || (z.HasSum && z.Sum != want) {
		return fmt.Errorf("page %d (%s): sum %v (has %t), want %v (has %t)", p, enc, z.Sum, z.HasSum, want, shouldHave)
	}
	if !z.HasSum && (z.Sum != Int128{} || z.SumScale != 0) {
		return fmt.Errorf("page %d: no sum, but fields set: %+v", p, z)
	}
	return nil
}

func TestZoneMap(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	long := string(bytes.Repeat([]byte("x"), MaxBoundLen+1))
	edge := string(bytes.Repeat([]byte("y"), MaxBoundLen))
	middle := string(bytes.Repeat([]byte("a"), MaxBoundLen+1))
	i := schema.IntVal
	f := schema.FloatVal
	s := func(v string) schema.Value { return schema.BytesVal([]byte(v)) }
	null := schema.Null
	nan := math.NaN()
	tests := []struct {
		dt   arrow.DataType
		vals []any // nil is NULL
		want ZoneMap
	}{
		{arrow.PrimitiveTypes.Int64, []any{int64(3), nil, int64(-7), int64(5)}, zm(4, 1, i(-7), i(5))},
		{arrow.PrimitiveTypes.Int64, []any{nil, nil}, zm(2, 2, null, null)},
		{arrow.PrimitiveTypes.Int64, []any{int64(math.MinInt64), int64(math.MaxInt64)}, zm(2, 0, i(math.MinInt64), i(math.MaxInt64))},
		{arrow.PrimitiveTypes.Int8, []any{int8(-128), int8(127), nil}, zm(3, 1, i(-128), i(127))},
		{arrow.PrimitiveTypes.Int16, []any{int16(9)}, zm(1, 0, i(9), i(9))},
		{arrow.PrimitiveTypes.Int32, []any{int32(-1), int32(1)}, zm(2, 0, i(-1), i(1))},
		{arrow.FixedWidthTypes.Boolean, []any{true, nil, true}, zm(3, 1, i(1), i(1))},
		{arrow.FixedWidthTypes.Boolean, []any{true, false}, zm(2, 0, i(0), i(1))},
		{arrow.FixedWidthTypes.Date32, []any{arrow.Date32(20000), arrow.Date32(-5)}, zm(2, 0, i(-5), i(20000))},
		{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, []any{arrow.Timestamp(1700000000000000), nil}, zm(2, 1, i(1700000000000000), i(1700000000000000))},
		{arrow.PrimitiveTypes.Float64, []any{1.5, nan, -2.0, nil}, zm(4, 1, f(-2), f(1.5))},
		{arrow.PrimitiveTypes.Float64, []any{nan, nan}, zm(2, 0, null, null)},
		{arrow.PrimitiveTypes.Float64, []any{math.Inf(-1), math.Inf(1)}, zm(2, 0, f(math.Inf(-1)), f(math.Inf(1)))},
		{arrow.PrimitiveTypes.Float32, []any{float32(0.5), float32(-0.25)}, zm(2, 0, f(-0.25), f(0.5))},
		{arrow.BinaryTypes.String, []any{"b", "a", nil, "c"}, zm(4, 1, s("a"), s("c"))},
		{arrow.BinaryTypes.String, []any{"", "a"}, zm(2, 0, s(""), s("a"))},
		{arrow.BinaryTypes.String, []any{"a", long}, zm(2, 0, null, null)},
		{arrow.BinaryTypes.String, []any{long, "zz"}, zm(2, 0, null, null)},
		{arrow.BinaryTypes.String, []any{"a", edge, "b"}, zm(3, 0, s("a"), s(edge))},
		{arrow.BinaryTypes.String, []any{"a", middle, "b"}, zm(3, 0, s("a"), s("b"))}, // middle is neither bound
		{arrow.BinaryTypes.Binary, []any{[]byte{0xff}, []byte{0}}, zm(2, 0, s("\x00"), s("\xff"))},
		{&arrow.Decimal128Type{Precision: 5, Scale: 1}, []any{int64(5), nil}, zm(2, 1, null, null)},
	}
	for ti, tc := range tests {
		t.Run(fmt.Sprintf("%d-%s", ti, tc.dt), func(t *testing.T) {
			arr := buildArray(t, mem, tc.dt, tc.vals)
			defer arr.Release()
			rec := newRecord(arr)
			defer rec.Release()
			for _, pageRows := range []int{0, 1, 2} {
				b, sum := writeBatches(t, rec, WriterOptions{PageRows: pageRows}, 1)
				r := openBytes(t, b, "zone")
				if got := r.ColumnStats(0); !zoneEqual(got, tc.want) || !zoneEqual(sum.Columns[0], tc.want) {
					t.Fatalf("page rows %d: column zone %v (summary %v), want %v", pageRows, got, sum.Columns[0], tc.want)
				}
				if pageRows == 0 && !zoneEqual(r.PageStats(0, 0), tc.want) {
					t.Fatalf("page zone %v, want %v", r.PageStats(0, 0), tc.want)
				}
				checkZones(t, "zone", r, arr, pageRows)
			}
		})
	}
}

// buildArray builds an array of dt from Go values (nil is NULL).
func buildArray(t testing.TB, mem memory.Allocator, dt arrow.DataType, vals []any) arrow.Array {
	t.Helper()
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.BooleanBuilder:
			bb.Append(v.(bool))
		case *array.Int8Builder:
			bb.Append(int8(asInt(v)))
		case *array.Int16Builder:
			bb.Append(int16(asInt(v)))
		case *array.Int32Builder:
			bb.Append(int32(asInt(v)))
		case *array.Int64Builder:
			bb.Append(v.(int64))
		case *array.Float32Builder:
			bb.Append(v.(float32))
		case *array.Float64Builder:
			bb.Append(v.(float64))
		case *array.StringBuilder:
			bb.Append(v.(string))
		case *array.BinaryBuilder:
			bb.Append(v.([]byte))
		case *array.Date32Builder:
			bb.Append(v.(arrow.Date32))
		case *array.TimestampBuilder:
			bb.Append(v.(arrow.Timestamp))
		case *array.Decimal128Builder:
			bb.Append(decimal128FromInt(v.(int64)))
		default:
			t.Fatalf("buildArray: %T", b)
		}
	}
	return b.NewArray()
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	}
	return v.(int64)
}
