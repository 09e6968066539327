package segment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestEncodingChoice checks that the writer picks the expected encoding (and
// compression) for data made for it, and that the data reads back.
func TestEncodingChoice(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 1000
	rng := rand.New(rand.NewPCG(5, 6))
	ints := func(f func(i int) int64) []any {
		v := make([]any, n)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	ts := func(f func(i int) int64) []any {
		v := make([]any, n)
		for i := range v {
			v[i] = arrow.Timestamp(f(i))
		}
		return v
	}
	strs := func(f func(i int) string) []any {
		v := make([]any, n)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	floats := func(f func(i int) float64) []any {
		v := make([]any, n)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	bools := func(f func(i int) bool) []any {
		v := make([]any, n)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	const t0 = 1_767_225_600_000_000 // 2026-01-01 in µs
	tests := []struct {
		name     string
		dt       arrow.DataType
		vals     []any
		enc      string
		comp     string
		zstdOff  bool
		maxBytes int // if set, the file must be at most this big
	}{
		{"int constant", arrow.PrimitiveTypes.Int64, ints(func(int) int64 { return 7 }), "constant", "none", false, 100},
		{"int all null", arrow.PrimitiveTypes.Int64, make([]any, n), "constant", "none", false, 100},
		{"int constant with nulls", arrow.PrimitiveTypes.Int64, ints(func(i int) int64 { return 7 }), "constant", "zstd", false, 0}, // the bitmap compresses
		{"int small range", arrow.PrimitiveTypes.Int64, ints(func(int) int64 { return 1<<40 + rng.Int64N(1000) }), "for", "none", false, 0},
		{"int sequence", arrow.PrimitiveTypes.Int64, ints(func(i int) int64 { return int64(i) * 3 }), "delta", "none", false, 100},
		{"int random", arrow.PrimitiveTypes.Int64, ints(func(int) int64 { return int64(rng.Uint64()) }), "plain", "none", false, 0},
		{"int32 random", arrow.PrimitiveTypes.Int32, ints(func(int) int64 { return int64(int32(rng.Uint32())) }), "plain", "none", false, 0},
		{"int8 small", arrow.PrimitiveTypes.Int8, ints(func(int) int64 { return rng.Int64N(4) }), "for", "none", false, 0},
		{"timestamps in time order", &arrow.TimestampType{Unit: arrow.Microsecond}, ts(func(i int) int64 { return t0 + int64(i)*1_000_000 + rng.Int64N(1000) }), "delta", "none", false, 0},
		{"timestamps shuffled", &arrow.TimestampType{Unit: arrow.Microsecond}, ts(func(int) int64 { return t0 + rng.Int64N(3_600_000_000) }), "for", "none", false, 0},
		{"strings few distinct", arrow.BinaryTypes.String, strs(func(i int) string { return fmt.Sprintf("region-%d", rng.IntN(10)) }), "dict", "none", true, 0},
		{"strings few distinct periodic", arrow.BinaryTypes.String, strs(func(i int) string { return fmt.Sprintf("region-%d", i%10) }), "dict", "lz4", false, 0},
		{"strings few long distinct", arrow.BinaryTypes.String, strs(func(i int) string { return fmt.Sprintf("a-long-dictionary-entry-%d", rng.IntN(10)) }), "dict", "none", true, 0},
		{"strings unique", arrow.BinaryTypes.String, strs(func(i int) string { return fmt.Sprintf("%x", rng.Uint64()) }), "plain", "none", true, 0},
		{"strings same", arrow.BinaryTypes.String, strs(func(int) string { return "same" }), "constant", "none", false, 100},
		{"strings unique compressible", arrow.BinaryTypes.String, strs(func(i int) string { return fmt.Sprintf("user-%08d@example.com", i) }), "plain", "lz4", false, 0},
		{"float random", arrow.PrimitiveTypes.Float64, floats(func(int) float64 { return rng.NormFloat64() }), "plain", "none", false, 0},
		{"float constant", arrow.PrimitiveTypes.Float64, floats(func(int) float64 { return math.Pi }), "constant", "none", false, 101}, // 100 before format 4's tag length
		{"float few values", arrow.PrimitiveTypes.Float64, floats(func(int) float64 { return float64(rng.IntN(4)) / 3 }), "plain", "zstd", false, 0},
		{"bool mixed", arrow.FixedWidthTypes.Boolean, bools(func(int) bool { return rng.IntN(2) == 0 }), "bitmap", "none", false, 0},
		{"bool all true", arrow.FixedWidthTypes.Boolean, bools(func(int) bool { return true }), "constant", "none", false, 100},
		{"decimal", &arrow.Decimal128Type{Precision: 20, Scale: 2}, ints(func(int) int64 { return int64(rng.Uint64()) }), "plain", "zstd", false, 0}, // the high halves are sign bits
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.name, "with nulls") {
				for i := range tc.vals {
					if i%3 == 0 {
						tc.vals[i] = nil
					}
				}
			}
			arr := buildArray(t, mem, tc.dt, tc.vals)
			defer arr.Release()
			rec := newRecord(arr)
			defer rec.Release()
			// One page of n rows; the size bounds count the header, whose
			// page-size varint is two bytes for this page size.
			opts := WriterOptions{PageRows: 1024}
			if tc.zstdOff {
				opts.ZstdLevel = -1
			}
			b, _ := writeBatches(t, rec, opts, 0)
			r := openBytes(t, b, tc.name)
			enc, comp := r.PageEncoding(0, 0)
			if enc != tc.enc || comp != tc.comp {
				var sb strings.Builder
				_ = r.Dump(&sb)
				t.Fatalf("encoding %s/%s, want %s/%s\n%s", enc, comp, tc.enc, tc.comp, sb.String())
			}
			if tc.maxBytes > 0 && len(b) > tc.maxBytes {
				t.Fatalf("file of %d bytes, want at most %d", len(b), tc.maxBytes)
			}
			got := readColumn(t, r, mem, 0)
			defer got.Release()
			if !arraysIdentical(got, arr) {
				t.Fatalf("read back differs")
			}
		})
	}
}

// TestRandomRoundTrip writes seeded random multi-column segments with every
// type and random options and batch sizes; the seed is printed on failure.
func TestRandomRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for seed := uint64(0); seed < 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		rows := rng.IntN(3000)
		var arrs []arrow.Array
		for _, dt := range allTypes {
			arrs = append(arrs, genArray(mem, dt, rows, rng, shapes[rng.IntN(len(shapes))], []float64{0, 0.01, 0.5, 1}[rng.IntN(4)]))
		}
		rec := newRecord(arrs...)
		for _, a := range arrs {
			a.Release()
		}
		opts := WriterOptions{PageRows: 1 + rng.IntN(1500), ZstdLevel: []int{-1, 0, 1, 9, 19}[rng.IntN(5)]}
		b, _ := writeBatches(t, rec, opts, 1+rng.IntN(2000))
		r := openBytes(t, b, "random")
		for c := range arrs {
			got := readColumn(t, r, mem, c)
			if !arraysIdentical(got, rec.Column(c)) {
				t.Fatalf("seed %d: column %d (%s) differs", seed, c, rec.Column(c).DataType())
			}
			got.Release()
		}
		rec.Release()
	}
}
