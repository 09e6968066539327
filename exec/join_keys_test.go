package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
)

// keyCellsEqual is the equality row keys must implement: NULL equal to
// NULL (nullsEqual) or to nothing, -0 equal to 0, NaN equal to NaN.
func keyCellsEqual(a, b any, nullsEqual bool) bool {
	if a == nil || b == nil {
		return nullsEqual && a == nil && b == nil
	}
	if x, ok := a.(float64); ok {
		y := b.(float64)
		return x == y || x != x && y != y
	}
	return relCompare(a, b) == 0
}

// fuzzCell reads one value of t from data.
func fuzzCell(t schema.Type, data []byte) (any, []byte) {
	if len(data) == 0 {
		return nil, data
	}
	tag, data := data[0], data[1:]
	if tag%5 == 0 {
		return nil, data
	}
	word := func(n int) uint64 {
		var b [8]byte
		k := copy(b[:n], data)
		data = data[k:]
		return binary.LittleEndian.Uint64(b[:])
	}
	switch t.Kind {
	case schema.Boolean:
		return tag%2 == 0, data
	case schema.TinyInt:
		return int64(int8(word(1))), data
	case schema.Int:
		return int64(int32(word(4))), data
	case schema.BigInt, schema.Datetime:
		return int64(word(8)), data
	case schema.Date:
		return int64(int32(word(4))), data
	case schema.Double:
		f := math.Float64frombits(word(8))
		switch tag % 7 {
		case 1:
			f = 0
		case 2:
			f = math.Copysign(0, -1)
		case 3:
			f = math.NaN()
		}
		return f, data
	case schema.Decimal:
		return decimal128.New(int64(word(1))-128, word(8)), data
	default:
		n := min(int(tag%9), len(data))
		s := string(data[:n])
		return s, data[n:]
	}
}

// FuzzJoinKeys checks the row keys of joins (joinTable) and set operations
// (groupMap): two rows match exactly when every column is equal, NULLs
// equal to each other for set operations and to nothing for joins.
func FuzzJoinKeys(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add([]byte{7, 1, 0, 1, 0, 7, 2, 0, 2, 0})                         // DOUBLE 0 and -0
	f.Add([]byte{9, 3, 3, 3, 3, 9, 4, 'a', 'b', 'c', 4, 'a', 'b', 'c'}) // strings
	f.Add([]byte{9, 0, 0, 9, 2, 'a', 0, 1, 'a'})                        // NULL against a value
	f.Add([]byte{12, 6, 0, 1, 2, 3, 4, 5, 6, 7, 8, 6, 0, 1, 2, 3, 4, 5, 6, 7, 8})
	types := []schema.Type{schema.BooleanType, schema.TinyIntType, schema.IntType, schema.BigIntType,
		schema.DoubleType, schema.StringType, {Kind: schema.Decimal, Precision: 38, Scale: 2}, schema.DateType,
		schema.DatetimeType(6)}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		ncols := 1 + int(data[0]%4)
		data = data[1:]
		var s Schema
		for c := 0; c < ncols && len(data) > 0; c++ {
			s = append(s, Column{Name: fmt.Sprint("c", c), Type: types[int(data[0])%len(types)], Nullable: true})
			data = data[1:]
		}
		if len(s) == 0 {
			return
		}
		r := rel{schema: s}
		for k := 0; k < 2; k++ {
			row := make([]any, len(s))
			for c := range s {
				row[c], data = fuzzCell(s[c].Type, data)
			}
			r.rows = append(r.rows, row)
		}
		// Two rows, sometimes one the copy of the other.
		if len(data)%3 == 0 {
			r.rows[1] = r.rows[0]
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		bs := relBatches(mem, r, nil)
		defer bs[0].Release()
		types := make([]schema.Type, len(s))
		for c := range s {
			types[c] = s[c].Type
		}
		form := keyFormOf(types)
		cols := bs[0].Columns()
		for _, nullsEqual := range []bool{true, false} {
			want := true
			for c := range s {
				want = want && keyCellsEqual(r.rows[0][c], r.rows[1][c], nullsEqual)
			}
			var got bool
			if nullsEqual {
				// Set operations: both rows go into one groupMap.
				keys := rowKeys{form: form}
				keys.fill(cols)
				m := newGroupMap(form)
				gids := make([]uint32, 2)
				m.find(&keys, []int32{0, 1}, gids)
				got = gids[0] == gids[1]
			} else {
				// Joins: row 0 builds, row 1 probes; a NULL matches nothing.
				jt := newJoinTable(form, false)
				build := sliceCols(cols, 0, 1)
				jt.build(build)
				releaseCols(build)
				probe := sliceCols(cols, 1, 2)
				first := jt.probe(nil, probe, &probeScratch{})
				releaseCols(probe)
				got = first[0] == 0
				if jt.anyNull != hasNil(r.rows[0]) {
					t.Fatalf("row %v: anyNull %v", r.rows[0], jt.anyNull)
				}
			}
			if got != want {
				t.Fatalf("nullsEqual %v: rows %s and %s: keys equal %v, want %v", nullsEqual,
					relRowString(s, r.rows[0]), relRowString(s, r.rows[1]), got, want)
			}
		}
	})
}

func hasNil(row []any) bool {
	for _, v := range row {
		if v == nil {
			return true
		}
	}
	return false
}

// TestJoinTableDirect: a dense integer key is addressed directly, a sparse
// one hashed, and probes outside the build keys' range (the extremes of
// int64 included, where key-min overflows) match nothing.
func TestJoinTableDirect(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ints := func(vs ...any) arrow.Array {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for _, v := range vs {
			if v == nil {
				b.AppendNull()
			} else {
				b.Append(v.(int64))
			}
		}
		return b.NewArray()
	}
	probe := ints(int64(math.MinInt64), int64(-6), int64(-5), int64(0), nil, int64(5), int64(6), int64(math.MaxInt64), int64(3))
	defer probe.Release()
	for _, c := range []struct {
		build  arrow.Array
		direct bool
		want   []int32
	}{
		{ints(int64(5), int64(-5), nil, int64(0), int64(-5)), true, []int32{-1, -1, 1, 3, -1, 0, -1, -1, -1}},
		{ints(int64(math.MaxInt64), int64(math.MinInt64), int64(3)), false, []int32{1, -1, -1, -1, -1, -1, -1, 0, 2}},
	} {
		for _, exists := range []bool{false, true} {
			jt := newJoinTable(keyInt, exists)
			jt.build([]arrow.Array{c.build})
			got := jt.probe(nil, []arrow.Array{probe}, &probeScratch{})
			want := c.want
			if exists {
				// A match is any row: compare matched or not.
				want = slices.Clone(want)
				for i := range want {
					if want[i] >= 0 && got[i] >= 0 {
						want[i] = got[i]
					}
				}
			}
			if jt.direct != c.direct || !slices.Equal(got, want) || slices.Min(got) < -1 {
				t.Errorf("build %v exists %v: direct %v, first %v; want %v, %v", c.build, exists, jt.direct, got, c.direct, want)
			}
		}
		c.build.Release()
	}
}

// TestGatherIndexed: gathering by row index gives what gatherColumn gives
// by rowRef, for every column type, NULL indices and NULL values, and a
// sliced source.
func TestGatherIndexed(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(9, 10))
	for iter := range 200 {
		s := Schema{{Name: "c", Type: randomType(rng), Nullable: true}}
		n := rng.IntN(40)
		rows := make([][]any, n+3)
		for i := range rows {
			rows[i] = []any{randomValue(rng, s[0].Type, 10, 0.2)}
		}
		b := buildTestBatch(mem, s, rows)
		src := array.NewSlice(b.Column(0), 3, int64(n+3))
		idx := make([]int32, rng.IntN(50))
		refs := make([]rowRef, len(idx))
		for i := range idx {
			idx[i] = int32(rng.IntN(n+1)) - 1
			refs[i] = rowRef{batch: 0, row: idx[i]}
			if idx[i] < 0 {
				refs[i] = nullRef
			}
		}
		typ := s[0].Type.Arrow()
		got := gatherIndexed(mem, typ, src, idx)
		want := gatherColumn(mem, typ, []arrow.Array{src}, refs)
		if !array.ApproxEqual(got, want, array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
			t.Fatalf("iter %d %s: %v, want %v", iter, s[0].Type, got, want)
		}
		got.Release()
		want.Release()
		src.Release()
		b.Release()
	}
}
