package segment

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
)

// TestReadPageSelected compares ReadPageSelected with the rows of ReadPage
// that a selection keeps (the reference), for string and binary pages of
// every encoding and codec, with and without NULLs, under selections of no
// row, one, a few, most and all. The seed is printed.
func TestReadPageSelected(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rngFor(seed)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 300
	for _, dt := range []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.Binary} {
		for _, sh := range shapes {
			for _, nullFrac := range []float64{0, 0.3, 1} {
				for _, codec := range []Codec{CodecDefault, CodecZstd, CodecNone} {
					a := genArray(mem, dt, n, rng, sh, nullFrac)
					rec := newRecord(a)
					b, _ := writeBatches(t, rec, WriterOptions{PageRows: 128, Codec: codec}, 0)
					rec.Release()
					a.Release()
					r := openBytes(t, b, "sel.seg")
					for p := 0; p < r.NumPages(); p++ {
						enc, comp := r.PageEncoding(0, p)
						_, rows := r.Page(p)
						for _, frac := range []float64{0, -1, 0.05, 0.9, 1} {
							sel := make([]byte, (rows+7)/8)
							for i := range rows {
								if frac == -1 && i == rng.IntN(rows) || rng.Float64() < frac {
									bitutil.SetBit(sel, i)
								}
							}
							name := fmt.Sprintf("%s %s nulls %.1f page %d (%s/%s), selection %.2f", dt, sh, nullFrac, p, enc, comp, frac)
							checkStringsSelected(t, mem, r, p, sel, name)
						}
					}
				}
			}
		}
	}
}

func checkStringsSelected(t *testing.T, mem memory.Allocator, r *Reader, p int, sel []byte, name string) {
	t.Helper()
	whole, err := r.ReadPage(mem, 0, p)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Release()
	bld := array.NewBuilder(mem, whole.DataType())
	defer bld.Release()
	for i := 0; i < whole.Len(); i++ {
		if !bitutil.BitIsSet(sel, i) {
			continue
		}
		if whole.IsNull(i) {
			bld.AppendNull()
			continue
		}
		switch w := whole.(type) {
		case *array.String:
			bld.(*array.StringBuilder).Append(w.Value(i))
		case *array.Binary:
			bld.(*array.BinaryBuilder).Append(w.Value(i))
		}
	}
	want := bld.NewArray()
	defer want.Release()
	got, err := r.ReadPageSelected(mem, 0, p, sel)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer got.Release()
	if err := array.Validate(got); err != nil {
		t.Fatalf("%s: an invalid array: %v", name, err)
	}
	if !array.Equal(got, want) || got.NullN() != want.NullN() {
		t.Fatalf("%s: got %v, want %v", name, got, want)
	}
}

// TestReadPageSelectedErrors: a column not of strings, a page out of range
// and a short selection are invalid arguments; a corrupt chunk is
// corruption, even when the selection keeps none of its rows.
func TestReadPageSelectedErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := codecRecord(mem)
	defer rec.Release()
	b, _ := writeBatches(t, rec, WriterOptions{PageRows: 128}, 0)
	r := openBytes(t, b, "sel.seg")
	sel := make([]byte, 16)
	for _, tc := range []struct {
		col, p int
		sel    []byte
	}{{0, 0, sel}, {2, 0, sel}, {1, 3, sel}, {1, -1, sel}, {1, 0, sel[:15]}} {
		if _, err := r.ReadPageSelected(mem, tc.col, tc.p, tc.sel); !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Errorf("column %d page %d, selection of %d bytes: %v, want ErrInvalidArgument", tc.col, tc.p, len(tc.sel), err)
		}
	}
	c := r.f.chunk(1, 0)
	for _, at := range []int64{c.offset, c.offset + c.length/2, c.offset + c.length - 1} {
		bad := append([]byte(nil), b...)
		bad[at] ^= 0x40
		rb := openBytes(t, bad, "bad.seg")
		_, err := rb.ReadPageSelected(mem, 1, 0, sel)
		checkCorrupt(t, err, "bad.seg")
	}
}

// TestReadPageSelectedLZ4Parts: on a plain page of several LZ4 parts, with
// NULLs, a selection of rows anywhere reads what ReadPage reads, and a
// selection of one row decompresses only the parts of the validity, the
// lengths and that row's value, not the page.
func TestReadPageSelectedLZ4Parts(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rngFor(seed)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 30000
	sb := array.NewStringBuilder(mem)
	for range n {
		if rng.IntN(10) == 0 {
			sb.AppendNull()
			continue
		}
		sb.Append(fmt.Sprintf("refund #%010d %s", rng.Int64N(1e10), strings.Repeat("x", rng.IntN(20))))
	}
	a := sb.NewArray()
	sb.Release()
	rec := newRecord(a)
	b, _ := writeBatches(t, rec, WriterOptions{PageRows: n}, 0)
	rec.Release()
	a.Release()
	r := openBytes(t, b, "parts.seg")
	c := r.f.chunk(0, 0)
	if enc, comp := r.PageEncoding(0, 0); enc != "plain" || comp != "lz4" || c.bodyLen < 5*lz4Part {
		t.Fatalf("a page %s/%s of %d bytes; the test needs plain LZ4 of several parts", enc, comp, c.bodyLen)
	}
	for _, frac := range []float64{-1, 0.001, 0.01, 0.5} {
		for range 5 {
			sel := make([]byte, (n+7)/8)
			for i := range n {
				if frac == -1 && i == rng.IntN(n) || rng.Float64() < frac {
					bitutil.SetBit(sel, i)
				}
			}
			checkStringsSelected(t, mem, r, 0, sel, fmt.Sprintf("selection %.3f", frac))
		}
	}
	parts := (c.bodyLen + lz4Part - 1) / lz4Part
	for _, row := range []int{0, n / 2, n - 1} {
		sel := make([]byte, (n+7)/8)
		bitutil.SetBit(sel, row)
		sc := new(scratch)
		body, need, err := r.lz4Chunk(c, sc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := selectStrings(mem, r.f.cols[0], n, int(c.zone.NullCount), c.enc, body, need, sel, sc)
		if err != nil {
			t.Fatal(err)
		}
		got.Release()
		decoded := 0
		for _, d := range sc.lz4.done {
			if d {
				decoded++
			}
		}
		if decoded > 3 {
			t.Errorf("row %d: %d of %d parts decompressed, want at most 3", row, decoded, parts)
		}
	}
}
