package exec

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
)

// FuzzRowKeys checks the two key encodings of keys.go and keys_order.go on
// pairs of rows whose values come from arbitrary bytes (every float bit
// pattern, strings with NUL bytes, any 128-bit decimal):
//
//   - two rows' equality keys are equal exactly when every column is
//     (NULLs equal, -0 equal to 0, every NaN equal), and decoding a key
//     gives back the row's values (with -0 and NaN made canonical);
//   - their order keys compare as the columns do under the sort keys.
func FuzzRowKeys(f *testing.F) {
	f.Add(uint64(1), []byte("abc\x00de"), []byte("abc\x00de"))
	f.Add(uint64(2), []byte{0, 0, 0, 0, 0, 0, 0, 0x80, 1}, []byte{0, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Add(uint64(3), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf8, 0x7f}, []byte{1, 0, 0, 0, 0, 0, 0xf8, 0x7f})
	f.Add(uint64(4), []byte("a"), []byte("a\x00"))
	f.Add(uint64(5), []byte{}, []byte{0xfe})
	f.Fuzz(func(t *testing.T, seed uint64, a, b []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		rng := rand.New(rand.NewPCG(seed, 0))
		var s Schema
		for i := range 1 + rng.IntN(3) {
			s = append(s, Column{Name: string(rune('a' + i)), Type: randomType(rng), Nullable: true})
		}
		rows := [][]any{fuzzRow(s, a), fuzzRow(s, b)}
		if rng.IntN(2) == 0 {
			rows[1] = append([]any(nil), rows[0]...) // equal rows too
		}
		batch := buildTestBatch(mem, s, rows)
		defer batch.Release()
		cols := batch.Columns()

		var enc [2][]byte
		for r := range 2 {
			for _, c := range cols {
				enc[r] = appendEqualKey(enc[r], c, r)
			}
		}
		equal := true
		for c := range s {
			equal = equal && compareTestValues(rows[0][c], rows[1][c]) == 0
		}
		if bytes.Equal(enc[0], enc[1]) != equal {
			t.Fatalf("%v: rows %v and %v: keys %x and %x", s, rows[0], rows[1], enc[0], enc[1])
		}
		rb := array.NewRecordBuilder(mem, s.Arrow())
		defer rb.Release()
		for r := range 2 {
			key := enc[r]
			for c := range s {
				key = decodeEqualKey(rb.Field(c), key)
			}
			if len(key) != 0 {
				t.Fatalf("%v: %d bytes left after decoding %x", s, len(key), enc[r])
			}
		}
		back := rb.NewRecordBatch()
		defer back.Release()
		for r := range 2 {
			for c := range s {
				got, want := testValueAt(back.Column(c), r), rows[r][c]
				if compareTestValues(got, want) != 0 {
					t.Fatalf("%v: decoded %v, want %v", s[c].Type, got, want)
				}
			}
		}

		keys := randomSortKeys(rng, s)
		ok, err := newOrderKeys("fuzz", s, keys)
		if err != nil {
			t.Fatal(err)
		}
		ok.bind(batch)
		ka, kb := ok.appendKey(nil, 0), ok.appendKey(nil, 1)
		want := 0
		// A stable sort moves a row first only when it is strictly smaller.
		if sorted := modelSort([][]any{rows[1], rows[0]}, keys); &sorted[0][0] != &rows[1][0] {
			want = -1
		} else if sorted := modelSort(rows, keys); &sorted[0][0] != &rows[0][0] {
			want = 1
		}
		if got := bytes.Compare(ka, kb); got != want {
			t.Fatalf("%v keys %v: rows %v and %v compare %d, want %d (keys %x, %x)", s, keys, rows[0], rows[1], got, want, ka, kb)
		}
	})
}

// fuzzRow makes a row of s from data: each column takes a NULL flag and
// its value's bytes from the front of data (zeros once data runs out).
func fuzzRow(s Schema, data []byte) []any {
	take := func(n int) []byte {
		out := make([]byte, n)
		k := copy(out, data)
		data = data[k:]
		return out
	}
	row := make([]any, len(s))
	for c, col := range s {
		if take(1)[0]%5 == 0 {
			continue // NULL
		}
		u := binary.LittleEndian.Uint64(take(8))
		var v any
		switch t := col.Type; t.Kind {
		case schema.Boolean:
			v = u&1 == 1
		case schema.TinyInt:
			v = int64(int8(u))
		case schema.SmallInt:
			v = int64(int16(u))
		case schema.Int, schema.Date:
			v = int64(int32(u))
		case schema.Float:
			v = float64(math.Float32frombits(uint32(u)))
		case schema.Double:
			v = math.Float64frombits(u)
		case schema.Decimal:
			v = decimal128.New(int64(binary.LittleEndian.Uint64(take(8))), u)
		case schema.String, schema.Varchar, schema.Char:
			n := int(u % 6)
			v = strings.ToValidUTF8(string(take(n)), "?")
		default:
			v = int64(u)
		}
		row[c] = v
	}
	return row
}

// TestOrderRules checks the orders the keys promise, value by value: each
// list is ascending, equal neighbours marked.
func TestOrderRules(t *testing.T) {
	floats := []struct {
		v     float64
		equal bool // to the one before
	}{
		{math.Inf(-1), false}, {-math.MaxFloat64, false}, {-1, false}, {-math.SmallestNonzeroFloat64, false},
		{math.Copysign(0, -1), false}, {0, true}, {math.SmallestNonzeroFloat64, false}, {1, false},
		{math.MaxFloat64, false}, {math.Inf(1), false}, {math.NaN(), false},
		{math.Float64frombits(0xfff8000000000001), true}, // a negative NaN with a payload
	}
	for i := 1; i < len(floats); i++ {
		a, b := floatU64(floats[i-1].v), floatU64(floats[i].v)
		if floats[i].equal && a != b || !floats[i].equal && a >= b {
			t.Errorf("floatU64(%v) = %x, floatU64(%v) = %x", floats[i-1].v, a, floats[i].v, b)
		}
		// min and max keep -0 apart from 0 (just below it).
		ka, kb := floatOrder(floats[i-1].v), floatOrder(floats[i].v)
		zeros := floats[i-1].v == 0 && floats[i].v == 0
		if (floats[i].equal && !zeros) && ka != kb || (!floats[i].equal || zeros) && ka >= kb {
			t.Errorf("floatOrder(%v) = %x, floatOrder(%v) = %x", floats[i-1].v, ka, floats[i].v, kb)
		}
		if back := floatFromOrder(kb); math.Float64bits(back) != math.Float64bits(floats[i].v) && !math.IsNaN(back) {
			t.Errorf("floatFromOrder(floatOrder(%v)) = %v", floats[i].v, back)
		}
	}
	strs := []string{"", "\x00", "\x00\x00", "\x00\x01", "\x01", "A", "a", "a\x00", "ab", "b", "\xff"}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := Schema{{Name: "s", Type: schema.StringType}}
	var rows [][]any
	for _, v := range strs {
		rows = append(rows, []any{v})
	}
	b := buildTestBatch(mem, s, rows)
	defer b.Release()
	for _, desc := range []bool{false, true} {
		ok, err := newOrderKeys("test", s, []SortKey{{Column: 0, Desc: desc}})
		if err != nil {
			t.Fatal(err)
		}
		ok.bind(b)
		for i := 1; i < len(strs); i++ {
			c := bytes.Compare(ok.appendKey(nil, i-1), ok.appendKey(nil, i))
			if want := map[bool]int{false: -1, true: 1}[desc]; c != want {
				t.Errorf("desc %v: %q against %q compares %d", desc, strs[i-1], strs[i], c)
			}
		}
	}
}
