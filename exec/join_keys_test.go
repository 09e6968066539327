package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

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

// FuzzJoinKeys checks the row keys of joins and set operations: two rows'
// keys are equal exactly when every column is equal, in both NULL modes.
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
		for _, nullsEqual := range []bool{true, false} {
			e := newKeyEncoder(allColumns(len(s)), nullsEqual)
			e.encode(bs[0])
			want := true
			anyNull := false
			for c := range s {
				want = want && keyCellsEqual(r.rows[0][c], r.rows[1][c], nullsEqual)
				anyNull = anyNull || r.rows[0][c] == nil || r.rows[1][c] == nil
			}
			if !nullsEqual && anyNull {
				// A row with a NULL key column has no key and matches nothing.
				for k := range 2 {
					if e.isNull(k) != hasNil(r.rows[k]) {
						t.Fatalf("row %v: null %v", r.rows[k], e.isNull(k))
					}
				}
				continue
			}
			got := string(e.key(0)) == string(e.key(1))
			if got != want {
				t.Fatalf("nullsEqual %v: rows %s and %s: keys equal %v, want %v (%x, %x)", nullsEqual,
					relRowString(s, r.rows[0]), relRowString(s, r.rows[1]), got, want, e.key(0), e.key(1))
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
