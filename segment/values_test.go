package segment

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
)

// checkValues verifies that v, read by ReadValues, holds what the array a
// of the same page holds.
func checkValues(a arrow.Array, v *Values) error {
	if v.N != a.Len() || v.Nulls != a.NullN() || (v.Valid == nil) != (a.NullN() == 0) {
		return fmt.Errorf("values of %d rows, %d nulls (bitmap %t), want %d and %d", v.N, v.Nulls, v.Valid != nil, a.Len(), a.NullN())
	}
	for i := 0; i < v.N; i++ {
		valid := v.Valid == nil || v.Valid[i/8]>>(i%8)&1 == 1
		if valid != a.IsValid(i) {
			return fmt.Errorf("row %d: valid %t, want %t", i, valid, a.IsValid(i))
		}
		if !valid {
			continue
		}
		switch x := a.(type) {
		case *array.Int64:
			if v.Ints == nil || v.Ints[i] != x.Value(i) {
				return fmt.Errorf("row %d: int differs from %d", i, x.Value(i))
			}
		case *array.Timestamp:
			if v.Ints == nil || v.Ints[i] != int64(x.Value(i)) {
				return fmt.Errorf("row %d: timestamp differs from %d", i, x.Value(i))
			}
		case *array.Float64:
			var got float64
			switch {
			case v.Scale >= 0 && v.Ints != nil:
				got = float64(v.Ints[i]) / pow10[v.Scale]
			case v.Floats != nil:
				got = v.Floats[i]
			default:
				return fmt.Errorf("row %d: no values", i)
			}
			if math.Float64bits(got) != math.Float64bits(x.Value(i)) {
				return fmt.Errorf("row %d: %v, want %v", i, got, x.Value(i))
			}
		default:
			return fmt.Errorf("ReadValues of %s", a.DataType())
		}
	}
	return nil
}

// randomSel returns a selection of n rows: none, all, or a random share.
func randomSel(rng *rand.Rand, n int) []byte {
	sel := make([]byte, (n+7)/8)
	share := []float64{0, 1, 0.05, 0.5}[rng.IntN(4)]
	for i := 0; i < n; i++ {
		if rng.Float64() < share {
			sel[i/8] |= 1 << (i % 8)
		}
	}
	return sel
}

// checkSelected is checkValues for the selected rows.
func checkSelected(a arrow.Array, v *Values, sel []byte) error {
	b := array.NewBuilder(memory.DefaultAllocator, a.DataType())
	defer b.Release()
	n := 0
	for i := 0; i < a.Len(); i++ {
		if sel[i/8]>>(i%8)&1 == 0 {
			continue
		}
		n++
		if a.IsNull(i) {
			b.AppendNull()
		} else if x, ok := a.(*array.Int64); ok {
			b.(*array.Int64Builder).Append(x.Value(i))
		} else if x, ok := a.(*array.Timestamp); ok {
			b.(*array.TimestampBuilder).Append(x.Value(i))
		} else {
			b.(*array.Float64Builder).Append(a.(*array.Float64).Value(i))
		}
	}
	want := b.NewArray()
	defer want.Release()
	// The selected rows of v, gathered the same way.
	got := Values{N: n, Scale: v.Scale, Nulls: want.NullN()}
	if v.Valid != nil && want.NullN() > 0 {
		got.Valid = make([]byte, (n+7)/8)
	}
	j := 0
	for i := 0; i < v.N; i++ {
		if sel[i/8]>>(i%8)&1 == 0 {
			continue
		}
		if got.Valid != nil && v.Valid[i/8]>>(i%8)&1 == 1 {
			got.Valid[j/8] |= 1 << (j % 8)
		}
		if v.Ints != nil {
			got.Ints = append(got.Ints, v.Ints[i])
		}
		if v.Floats != nil {
			got.Floats = append(got.Floats, v.Floats[i])
		}
		j++
	}
	if got.Ints == nil && v.Ints != nil {
		got.Ints = []int64{}
	}
	if got.Floats == nil && v.Floats != nil {
		got.Floats = []float64{}
	}
	return checkValues(want, &got)
}

func TestReadValuesMatchesReadPage(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	encs := map[string]bool{}
	for i, sh := range shapes {
		for _, nullFrac := range []float64{0, 0.3, 1} {
			var arrs []arrow.Array
			for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Int32} {
				arrs = append(arrs, genArray(mem, dt, 3000, rngFor(uint64(i)), sh, nullFrac))
			}
			rec := newRecord(arrs...)
			b, _ := writeBatches(t, rec, WriterOptions{PageRows: 1000}, 0)
			rec.Release()
			for _, a := range arrs {
				a.Release()
			}
			r := openBytes(t, b, "values.seg")
			var v, pv Values
			for col := 0; col < 3; col++ {
				if r.ValuesOK(col) != (col < 2) {
					t.Fatalf("ValuesOK(%d) = %t", col, r.ValuesOK(col))
				}
				if col == 2 {
					if err := r.ReadValues(col, 0, &v, false); err == nil {
						t.Fatal("ReadValues of an INT column: no error")
					}
					continue
				}
				for p := 0; p < r.NumPages(); p++ {
					enc, comp := r.PageEncoding(col, p)
					encs[enc+"/"+comp] = true
					a, err := r.ReadPage(mem, col, p)
					if err != nil {
						t.Fatal(err)
					}
					if err := r.ReadValues(col, p, &v, false); err != nil {
						t.Fatal(err)
					}
					if err := checkValues(a, &v); err != nil {
						t.Fatalf("%s nulls %.1f col %d page %d (%s/%s): %v", sh, nullFrac, col, p, enc, comp, err)
					}
					if err := checkPacked(r, col, p, &v, rngFor(uint64(p*5+col))); err != nil {
						t.Fatalf("%s nulls %.1f col %d page %d (%s/%s) packed: %v", sh, nullFrac, col, p, enc, comp, err)
					}
					if err := r.ReadPacked(col, p, &pv); err != nil {
						t.Fatal(err)
					}
					encs["packed "+enc] = encs["packed "+enc] || pv.Packed()
					pv.Unpack()
					if err := checkValues(a, &pv); err != nil {
						t.Fatalf("%s nulls %.1f col %d page %d (%s/%s) unpacked: %v", sh, nullFrac, col, p, enc, comp, err)
					}
					sel := randomSel(rngFor(uint64(p*7+col)), a.Len())
					if err := r.ReadSelected(col, p, &v, sel); err != nil {
						t.Fatal(err)
					}
					if err := checkSelected(a, &v, sel); err != nil {
						t.Fatalf("%s nulls %.1f col %d page %d (%s/%s) selected: %v", sh, nullFrac, col, p, enc, comp, err)
					}
					if err := r.ReadValues(col, p, &v, true); err != nil {
						t.Fatal(err)
					}
					if v.Ints != nil || v.Floats != nil || v.Nulls != a.NullN() || (v.Valid == nil) != (a.NullN() == 0) {
						t.Fatalf("validity only: values filled or nulls %d, want %d", v.Nulls, a.NullN())
					}
					a.Release()
				}
			}
		}
	}
	for _, want := range []string{"scaled/none", "plain/none", "for/none", "constant/none", "delta/none", "packed scaled", "packed for"} {
		if !encs[want] {
			t.Errorf("no page encoded %s among %v", want, encs)
		}
	}
	for _, never := range []string{"packed plain", "packed constant", "packed delta"} {
		if encs[never] {
			t.Errorf("ReadPacked left a page packed as %s", never)
		}
	}
}

// checkPacked reads page p of col with ReadPacked and, when it stays
// packed, checks RangeBits and Sum against the values ReadValues decodes,
// for random bounds and selections; v holds the page as ReadValues read it.
func checkPacked(r *Reader, col, p int, v *Values, rng *rand.Rand) error {
	var pv Values
	if err := r.ReadPacked(col, p, &pv); err != nil {
		return err
	}
	if pv.N != v.N || pv.Nulls != v.Nulls || pv.Scale != v.Scale || (pv.Valid == nil) != (v.Valid == nil) {
		return fmt.Errorf("packed page of %d rows, %d nulls, scale %d; want %d, %d, %d", pv.N, pv.Nulls, pv.Scale, v.N, v.Nulls, v.Scale)
	}
	if !pv.Packed() {
		if pv.Ints == nil && pv.Floats == nil && v.Nulls != v.N {
			return errors.New("neither packed nor decoded")
		}
		return nil
	}
	if pv.Ints != nil || v.Ints == nil {
		return errors.New("a packed page with Ints, or a page of doubles")
	}
	return checkPackedKernels(&pv, v, rng)
}

// checkPackedKernels checks RangeBits and Sum of the packed page pv
// against v, the same page decoded, for random bounds and selections.
func checkPackedKernels(pv, v *Values, rng *rand.Rand) error {
	for i := range v.N {
		if v.Valid != nil && v.Valid[i/8]>>(i%8)&1 == 0 {
			continue
		}
		if got := pv.At(i); got != v.Ints[i] {
			return fmt.Errorf("At(%d) = %d, want %d", i, got, v.Ints[i])
		}
	}
	for range 20 {
		a := v.Ints[rng.IntN(v.N)] + rng.Int64N(5) - 2
		span := []uint64{0, 3, uint64(rng.Int64N(1 << 20)), math.MaxInt64, math.MaxUint64}[rng.IntN(5)]
		negate := rng.IntN(2) == 0
		bl := (v.N + 7) / 8
		t, f := make([]byte, bl), make([]byte, bl)
		sel := randomSel(rng, v.N)
		var rsel []byte // the rows RangeBits answers for: nil, all
		if rng.IntN(2) == 0 {
			rsel = sel
		}
		pv.RangeBits(a, span, negate, rsel, t, f)
		// RangeBits2 answers for every row as two RangeBits would.
		span2 := []uint64{0, 1, uint64(rng.Int64N(1 << 30)), math.MaxUint64}[rng.IntN(4)]
		t1, t2 := make([]byte, bl), make([]byte, bl)
		pv.RangeBits2(a, span, span2, t1, t2)
		for i := range v.N {
			if t1[i/8]>>(i%8)&1 == 1 != (uint64(v.Ints[i]-a) <= span) || t2[i/8]>>(i%8)&1 == 1 != (uint64(v.Ints[i]-a) <= span2) {
				return fmt.Errorf("RangeBits2 [%d, +%d] [%d, +%d]: row %d (%d) wrong", a, span, a, span2, i, v.Ints[i])
			}
		}
		var want Int128
		for i := range v.N {
			in := uint64(v.Ints[i]-a) <= span != negate
			if rsel != nil && rsel[i/8]>>(i%8)&1 == 0 {
				// Unspecified, but never both.
				if t[i/8]>>(i%8)&1 == 1 && f[i/8]>>(i%8)&1 == 1 {
					return fmt.Errorf("row %d outside the selection both TRUE and FALSE", i)
				}
			} else if t[i/8]>>(i%8)&1 == 1 != in || f[i/8]>>(i%8)&1 == 1 == in {
				return fmt.Errorf("RangeBits [%d, +%d] negate %t: row %d (%d) wrong", a, span, negate, i, v.Ints[i])
			}
			if v.Valid != nil && v.Valid[i/8]>>(i%8)&1 == 0 {
				sel[i/8] &^= 1 << (i % 8)
			}
			if sel[i/8]>>(i%8)&1 == 1 {
				want.Add(v.Ints[i])
			}
		}
		if got := pv.Sum(sel); got != want {
			return fmt.Errorf("Sum %s, want %s", got, want)
		}
	}
	return nil
}

func TestReadValuesCorrupt(t *testing.T) {
	mem := memory.NewGoAllocator()
	a := genArray(mem, arrow.PrimitiveTypes.Float64, 100, rngFor(3), shapeSmall, 0.2)
	defer a.Release()
	rec := newRecord(a)
	defer rec.Release()
	b, _ := writeBatches(t, rec, WriterOptions{ZstdLevel: -1}, 0)
	b[headerLen+20] ^= 0x40 // inside the first chunk
	r := openBytes(t, b, "bad.seg")
	var v Values
	err := r.ReadValues(0, 0, &v, false)
	if !errors.Is(err, rowttl.ErrCorruption) {
		t.Fatalf("ReadValues of a flipped chunk: %v, want corruption", err)
	}
	checkCorrupt(t, err, "bad.seg")
}
