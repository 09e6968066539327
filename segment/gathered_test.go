package segment

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/internal/gather"
)

// gatherTypes are the column types ReadPageGathered gathers itself.
var gatherTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int8,
	arrow.PrimitiveTypes.Int16,
	arrow.PrimitiveTypes.Int32,
	arrow.PrimitiveTypes.Int64,
	arrow.FixedWidthTypes.Date32,
	&arrow.TimestampType{Unit: arrow.Microsecond},
	arrow.PrimitiveTypes.Float32,
	arrow.PrimitiveTypes.Float64,
	arrow.BinaryTypes.String,
	arrow.BinaryTypes.Binary,
}

// TestReadPageGathered compares ReadPageGathered with ReadPage and a plain
// filter of its array (the reference), bit for bit: values (null slots
// too), validity, null count and offset. Segments of every gathered type
// are written with pages of random sizes (most not multiples of 8 or 64),
// each page of one form: packed of a random bit width, sorted with deltas
// of a random width, constant, random over the whole type, decimal-scaled
// doubles; NULLs none, some or all; under selections of no row, all rows,
// random densities, runs, and full words with a hole. The seed is printed.
func TestReadPageGathered(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rngFor(seed)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	seen := map[string]bool{}
	for iter := range 60 {
		dt := gatherTypes[iter%len(gatherTypes)]
		pageRows := []int{1, 7, 63, 64, 65, 100, 129, 200, 513, 1000, 4096, 4099}[rng.IntN(12)]
		pages := 1 + rng.IntN(4)
		rows := pageRows*(pages-1) + 1 + rng.IntN(pageRows)
		a := genGatherColumn(mem, dt, rows, pageRows, rng)
		rec := newRecord(a)
		a.Release()
		codec := []Codec{CodecDefault, CodecZstd, CodecNone}[rng.IntN(3)]
		b, _ := writeBatches(t, rec, WriterOptions{PageRows: pageRows, Codec: codec}, 0)
		rec.Release()
		r := openBytes(t, b, "gather.seg")
		for p := 0; p < r.NumPages(); p++ {
			enc, comp := r.PageEncoding(0, p)
			seen[enc] = true
			_, n := r.Page(p)
			nulls := r.PageStats(0, p).NullCount
			switch {
			case nulls == 0:
				seen["no nulls"] = true
			case int(nulls) == n:
				seen["all nulls"] = true
			default:
				seen["some nulls"] = true
			}
			for _, sel := range gatherSelections(n, rng) {
				name := fmt.Sprintf("%s page %d of %d rows (%s/%s, %d nulls), %d selected", dt, p, n, enc, comp, nulls, popcountBits(sel, n))
				checkGathered(t, mem, r, p, sel, name)
			}
		}
	}
	for _, want := range []string{"plain", "constant", "for", "delta", "scaled", "dict", "no nulls", "some nulls", "all nulls"} {
		if !seen[want] {
			t.Errorf("no page was %s", want)
		}
	}
}

// genGatherColumn makes rows values of dt, each page of pageRows rows of a
// form of its own.
func genGatherColumn(mem memory.Allocator, dt arrow.DataType, rows, pageRows int, rng *rand.Rand) arrow.Array {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for start := 0; start < rows; start += pageRows {
		form := rng.IntN(5)
		bw := uint(rng.IntN(65))
		mask := uint64(1)<<bw - 1
		if bw == 64 {
			mask = ^uint64(0)
		}
		base := int64(rng.Uint64())
		if rng.IntN(2) == 0 {
			base = rng.Int64N(1000) - 500
		}
		exp := rng.IntN(maxScaleExp + 1)
		nullFrac := []float64{0, 0, 0.02, 0.5, 0.97, 1}[rng.IntN(6)]
		acc := base
		for i := start; i < min(rows, start+pageRows); i++ {
			var x int64
			switch form {
			case 0: // packed
				x = base + int64(rng.Uint64()&mask)
			case 1: // sorted
				acc += int64(rng.Uint64() & mask >> 1)
				x = acc
			case 2: // constant
				x = base
			case 3: // anything
				x = int64(rng.Uint64())
			case 4: // small
				x = base + rng.Int64N(3)
			}
			if nullFrac > 0 && rng.Float64() < nullFrac {
				b.AppendNull()
				continue
			}
			if appendInt(b, x) {
				continue
			}
			switch bb := b.(type) {
			case *array.Float32Builder:
				if form == 3 {
					bb.Append(math.Float32frombits(uint32(x)))
				} else {
					bb.Append(float32(x%(1<<20)) / 4)
				}
			case *array.StringBuilder:
				bb.Append(gatherString(form, x, rng))
			case *array.BinaryBuilder:
				bb.Append([]byte(gatherString(form, x, rng)))
			case *array.Float64Builder:
				if form == 3 {
					bb.Append(math.Float64frombits(uint64(x)))
				} else {
					// Decimal-scaled when x fits 53 bits.
					bb.Append(float64(x>>(11+rng.IntN(2)*40)) / pow10[exp])
				}
			}
		}
	}
	return b.NewArray()
}

// gatherString makes a string of a page of the form: distinct values of
// lengths around 16 bytes (the short moves' bound), sorted keys, one
// value, long ones, or three values, one empty (a dictionary).
func gatherString(form int, x int64, rng *rand.Rand) string {
	switch form {
	case 0:
		return strings.Repeat("v", rng.IntN(24)) + fmt.Sprint(x)
	case 1:
		return fmt.Sprintf("k%016d", x)
	case 2:
		return "the same"
	case 3:
		return strings.Repeat(fmt.Sprint(x), 1+rng.IntN(8))
	}
	return []string{"", "city-a", "city-b"}[uint64(x)%3]
}

// gatherSelections returns selections of n rows: none, all, random ones of
// several densities, runs, the last row alone, and all rows but one in
// every word.
func gatherSelections(n int, rng *rand.Rand) [][]byte {
	bl := (n + 7) / 8
	var out [][]byte
	add := func(bit func(i int) bool) {
		sel := make([]byte, bl)
		for i := range n {
			if bit(i) {
				bitutil.SetBit(sel, i)
			}
		}
		if n%8 != 0 && rng.IntN(2) == 0 {
			// Bits past n are not rows: they must be ignored.
			sel[bl-1] |= 0xff << (n % 8)
		}
		out = append(out, sel)
	}
	add(func(int) bool { return false })
	add(func(int) bool { return true })
	for _, d := range []float64{0.01, 0.5, 0.9, 0.995} {
		add(func(int) bool { return rng.Float64() < d })
	}
	on, left := true, 0
	add(func(int) bool {
		if left == 0 {
			on, left = !on, 1+rng.IntN(150)
		}
		left--
		return on
	})
	add(func(i int) bool { return i == n-1 })
	hole := rng.IntN(64)
	add(func(i int) bool { return i%64 != hole })
	return out
}

// checkGathered compares ReadPageGathered of column 0 of page p with the
// reference.
func checkGathered(t *testing.T, mem memory.Allocator, r *Reader, p int, sel []byte, name string) {
	t.Helper()
	_, n := r.Page(p)
	selected := popcountBits(sel, n)
	got, err := r.ReadPageGathered(mem, 0, p, sel, selected)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if got == nil {
		t.Fatalf("%s: not gathered", name)
	}
	defer got.Release()
	whole, err := r.ReadPage(mem, 0, p)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Release()
	if !arrow.TypeEqual(got.DataType(), whole.DataType()) || got.Len() != selected || got.Data().Offset() != 0 {
		t.Fatalf("%s: got %s of %d rows at offset %d, want %s of %d", name, got.DataType(), got.Len(), got.Data().Offset(), whole.DataType(), selected)
	}
	if id := whole.DataType().ID(); id == arrow.STRING || id == arrow.BINARY {
		wantValid, wantNulls, wantOffs, wantVals := refGatherStrings(whole, sel, n)
		checkValidity(t, name, got, selected, wantValid, wantNulls)
		d := got.Data()
		if offs := d.Buffers()[1].Bytes(); !bytes.Equal(offs[:4*(selected+1)], wantOffs) {
			t.Fatalf("%s: offsets differ", name)
		}
		if vals := d.Buffers()[2].Bytes(); !bytes.Equal(vals, wantVals) {
			k := 0
			for k < min(len(vals), len(wantVals)) && vals[k] == wantVals[k] {
				k++
			}
			t.Fatalf("%s: %d bytes of values, want %d, the first %d alike", name, len(vals), len(wantVals), k)
		}
		return
	}
	width := whole.DataType().(arrow.FixedWidthDataType).Bytes()
	wantValid, wantNulls, wantVals := refGather(whole, sel, n, width)
	checkValidity(t, name, got, selected, wantValid, wantNulls)
	d := got.Data()
	if vals := d.Buffers()[1].Bytes(); !bytes.Equal(vals[:selected*width], wantVals) {
		for j := range selected {
			if !bytes.Equal(vals[j*width:(j+1)*width], wantVals[j*width:(j+1)*width]) {
				t.Fatalf("%s: value %d is %x, want %x", name, j, vals[j*width:(j+1)*width], wantVals[j*width:(j+1)*width])
			}
		}
	}
}

// checkValidity compares the null count and validity bitmap of got with
// the reference's.
func checkValidity(t *testing.T, name string, got arrow.Array, selected int, wantValid []byte, wantNulls int) {
	t.Helper()
	d := got.Data()
	if got.NullN() != wantNulls {
		t.Fatalf("%s: %d nulls, want %d", name, got.NullN(), wantNulls)
	}
	vb := d.Buffers()[0]
	if (vb != nil) != (wantValid != nil) {
		t.Fatalf("%s: validity buffer %v, want one: %v", name, vb != nil, wantValid != nil)
	}
	if wantValid != nil {
		for j := range selected {
			if bitutil.BitIsSet(vb.Bytes(), j) != bitutil.BitIsSet(wantValid, j) {
				t.Fatalf("%s: validity of row %d differs", name, j)
			}
		}
	}
}

// refGatherStrings is refGather of a string or binary array: the validity
// and NULL count of the selected rows, their offsets from 0 and their
// bytes, those of NULL slots included, as a filter of the array keeps them.
func refGatherStrings(a arrow.Array, sel []byte, n int) ([]byte, int, []byte, []byte) {
	d := a.Data()
	offs := castSlice[int32](d.Buffers()[1].Bytes(), n+1)
	src := d.Buffers()[2].Bytes()
	var outOffs, vals []byte
	outOffs = binary.LittleEndian.AppendUint32(outOffs, 0)
	for i := range n {
		if bitutil.BitIsSet(sel, i) {
			vals = append(vals, src[offs[i]:offs[i+1]]...)
			outOffs = binary.LittleEndian.AppendUint32(outOffs, uint32(len(vals)))
		}
	}
	if vals == nil {
		vals = []byte{}
	}
	valid, nulls := refValidity(a, sel, n)
	return valid, nulls, outOffs, vals
}

// refGather is the plain filter of the reference: the validity bitmap of
// the selected rows (nil when none is NULL), their NULL count and the bytes
// of their values.
func refGather(a arrow.Array, sel []byte, n, width int) ([]byte, int, []byte) {
	var vals []byte
	src := a.Data().Buffers()[1].Bytes()
	for i := range n {
		if bitutil.BitIsSet(sel, i) {
			vals = append(vals, src[i*width:(i+1)*width]...)
		}
	}
	valid, nulls := refValidity(a, sel, n)
	return valid, nulls, vals
}

// refValidity is the validity bitmap of the selected rows of a (nil when
// none is NULL) and their NULL count, a row at a time.
func refValidity(a arrow.Array, sel []byte, n int) ([]byte, int) {
	var valid []byte
	nulls, j := 0, 0
	for i := range n {
		if !bitutil.BitIsSet(sel, i) {
			continue
		}
		valid = append(valid, 0)[:(j+8)/8]
		if a.IsNull(i) {
			nulls++
		} else {
			bitutil.SetBit(valid, j)
		}
		j++
	}
	if nulls == 0 {
		valid = nil
	}
	return valid, nulls
}

// TestReadPageGatheredNotGathered checks that the columns it does not
// gather give no array and no error, and that a selection that does not
// fit the page is refused.
func TestReadPageGatheredNotGathered(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := openBytes(t, smallSegment(t, mem), "kinds.seg")
	_, n := r.Page(0)
	sel := make([]byte, (n+7)/8)
	sel[0] = 0b101
	for c, f := range r.Schema().Fields() {
		a, err := r.ReadPageGathered(mem, c, 0, sel, 2)
		if err != nil {
			t.Fatalf("%s: %v", f.Type, err)
		}
		gathered := a != nil
		if a != nil {
			a.Release()
		}
		if want := slicesContainType(gatherTypes, f.Type) || f.Type.ID() == arrow.TIMESTAMP; gathered != want {
			t.Errorf("%s: gathered %v, want %v", f.Type, gathered, want)
		}
	}
	for _, tc := range []struct {
		name          string
		col, p        int
		sel           []byte
		selected      int
		wantSubstring string
	}{
		{"column out of range", 99, 0, sel, 2, "out of range"},
		{"page out of range", 0, 99, sel, 2, "out of range"},
		{"short selection", 0, 0, sel[:1], 2, "a selection of 1 bytes"},
		{"wrong count", 0, 0, sel, 3, "3 rows selected, the selection has 2"},
	} {
		_, err := r.ReadPageGathered(mem, tc.col, tc.p, tc.sel, tc.selected)
		if !errors.Is(err, rowttl.ErrInvalidArgument) || !bytes.Contains([]byte(err.Error()), []byte(tc.wantSubstring)) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func slicesContainType(ts []arrow.DataType, dt arrow.DataType) bool {
	for _, t := range ts {
		if arrow.TypeEqual(t, dt) {
			return true
		}
	}
	return false
}

// TestReadPageGatheredCorrupt checks that a damaged file fails as ReadPage
// fails, with ErrCorruption and the same message, on every flipped byte of
// a small segment; and, below the checksums, that every damaged or cut
// body of a gathered chunk is refused by gatherChunk exactly when
// decodeChunk refuses it, with the same error, and otherwise decodes to
// the same rows.
func TestReadPageGatheredCorrupt(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	orig := smallSegment(t, mem)
	r := openBytes(t, orig, "x")
	var cols []int
	for c, f := range r.Schema().Fields() {
		if id := f.Type.ID(); id != arrow.BOOL && id != arrow.DECIMAL128 {
			cols = append(cols, c)
		}
	}
	buf := make([]byte, len(orig))
	for i := 0; i < len(orig); i += 3 {
		copy(buf, orig)
		buf[i] ^= 0x5a
		name := fmt.Sprintf("flip-%d.seg", i)
		fr, err := Open(newHeapMapped(buf), int64(len(buf)), name)
		if err != nil {
			continue
		}
		for _, c := range cols {
			for p := 0; p < fr.NumPages(); p++ {
				_, n := fr.Page(p)
				sel := make([]byte, (n+7)/8)
				for k := range sel {
					sel[k] = byte(i*7 + k)
				}
				ga, gerr := fr.ReadPageGathered(mem, c, p, sel, popcountBits(sel, n))
				if ga != nil {
					ga.Release()
				}
				wa, werr := fr.ReadPage(mem, c, p)
				if wa != nil {
					wa.Release()
				}
				if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
					t.Fatalf("%s column %d page %d: ReadPageGathered says %v, ReadPage %v", name, c, p, gerr, werr)
				}
				if gerr != nil {
					checkCorrupt(t, gerr, name)
				}
			}
		}
	}

	// Below the checksums: damaged bodies.
	rng := rngFor(1)
	sc := new(scratch)
	for _, c := range cols {
		ct := r.f.cols[c]
		for p := 0; p < r.NumPages(); p++ {
			ch := r.f.chunk(c, p)
			body, err := r.readChunk(ch, sc)
			if err != nil {
				t.Fatal(err)
			}
			n := r.f.pages[p]
			sel := make([]byte, (n+7)/8)
			for k := range sel {
				sel[k] = byte(rng.Uint32())
			}
			selected := popcountBits(sel, n)
			var bodies [][]byte
			for k := 0; k <= len(body); k++ {
				bodies = append(bodies, bytes.Clone(body[:k]), append(bytes.Clone(body), byte(k)))
				if k < len(body) {
					for _, x := range []byte{0x01, 0x80, 0xff} {
						d := bytes.Clone(body)
						d[k] ^= x
						bodies = append(bodies, d)
					}
				}
			}
			for _, d := range bodies {
				want, werr := decodeChunk(mem, ct, n, int(ch.zone.NullCount), ch.enc, d, sc)
				got, gerr := gatherChunk(mem, ct, n, int(ch.zone.NullCount), ch.enc, d, sel, selected, sc)
				if werr != nil || gerr != nil {
					if gerr == nil || werr == nil || gerr.Error() != werr.Error() {
						t.Fatalf("column %d page %d body %x: gatherChunk says %v, decodeChunk %v", c, p, d, gerr, werr)
					}
					continue
				}
				var wantNulls int
				var wantVals, gotVals []byte
				if ct.kind == kindBytes {
					_, wantNulls, _, wantVals = refGatherStrings(want, sel, n)
					gotVals = got.Data().Buffers()[2].Bytes()
				} else {
					width := want.DataType().(arrow.FixedWidthDataType).Bytes()
					_, wantNulls, wantVals = refGather(want, sel, n, width)
					gotVals = got.Data().Buffers()[1].Bytes()[:selected*width]
				}
				if got.NullN() != wantNulls || !bytes.Equal(gotVals, wantVals) {
					t.Fatalf("column %d page %d body %x: gathered rows differ", c, p, d)
				}
				want.Release()
				got.Release()
			}
		}
	}
}

// TestGatherKernels checks unpackFORGathered and unpackDeltaGathered
// against unpackFOR and unpackDelta of every row followed by a plain
// gather, gather.Bits (as the validity of a page is gathered) against a gather bit by bit, for random bit widths, row counts and selections, and that they
// write nothing past the selected slots: their branch-free loops store a
// slot past a word's selected rows, which must stay inside dst. The seed
// is printed.
func TestGatherKernels(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rngFor(seed)
	for iter := range 400 {
		n := 1 + rng.IntN(3000)
		if iter%4 == 0 {
			n = 64 * (1 + rng.IntN(40))
		}
		bw := uint(rng.IntN(65))
		src := packRandom(rng, n, bw)
		sel := make([]byte, (n+7)/8)
		density := []float64{0, 0.02, 0.3, 0.5, 0.7, 0.98, 1}[rng.IntN(7)]
		for i := range n {
			if rng.Float64() < density {
				bitutil.SetBit(sel, i)
			}
		}
		if rng.IntN(3) == 0 {
			// The last row, alone or not: the stores of its word reach
			// the end of dst.
			bitutil.SetBit(sel, n-1)
		}
		// gather.Bits, into bytes of garbage with a guard byte past the
		// selected rows' bits.
		valid := make([]byte, (n+7)/8)
		vd := []float64{0, 0.1, 0.5, 0.9, 1}[rng.IntN(5)]
		for i := range n {
			if rng.Float64() < vd {
				bitutil.SetBit(valid, i)
			}
		}
		selected := popcountBits(sel, n)
		gotBits := bytes.Repeat([]byte{0xff}, (selected+7)/8+1)
		gotBits[len(gotBits)-1] = 0xa5
		zeros := selected - gather.Bits(gotBits[:len(gotBits)-1], valid, 0, sel, n)
		wantZeros, j := 0, 0
		for i := range n {
			if !bitutil.BitIsSet(sel, i) {
				continue
			}
			if !bitutil.BitIsSet(valid, i) {
				wantZeros++
			}
			if bitutil.BitIsSet(gotBits, j) != bitutil.BitIsSet(valid, i) {
				t.Fatalf("n %d density %.2f, valid %.2f: gather.Bits bit %d (row %d) differs", n, density, vd, j, i)
			}
			j++
		}
		if zeros != wantZeros || gotBits[len(gotBits)-1] != 0xa5 || selected%8 != 0 && gotBits[len(gotBits)-2]>>(selected%8) != 0 {
			t.Fatalf("n %d density %.2f, valid %.2f: gather.Bits counted %d zeros, want %d, or wrote past its bits", n, density, vd, zeros, wantZeros)
		}

		base, minDelta := int64(rng.Uint64()), int64(rng.Uint64()>>rng.IntN(64))
		name := fmt.Sprintf("n %d bw %d density %.2f", n, bw, density)
		checkKernel(t, name+" for int64", sel, n, func(d []int64) { unpackFOR(d, src, bw, base) },
			func(d []int64) { unpackFORGathered(d, src, bw, base, sel, n) })
		if bw <= 8 {
			checkKernel(t, name+" for int8", sel, n, func(d []int8) { unpackFOR(d, src, bw, base) },
				func(d []int8) { unpackFORGathered(d, src, bw, base, sel, n) })
		}
		dsrc := src[:packedLen(n-1, bw)]
		if n-1 > 0 && bw > 0 && uint(n-1)*bw%8 != 0 {
			// A delta run holds n-1 values: clear the bits past them.
			dsrc = bytes.Clone(dsrc)
			dsrc[len(dsrc)-1] &= 1<<(uint(n-1)*bw%8) - 1
		}
		checkKernel(t, name+" delta int64", sel, n, func(d []int64) { unpackDelta(d, dsrc, bw, base, minDelta) },
			func(d []int64) { unpackDeltaGathered(d, dsrc, bw, base, minDelta, sel, n) })
		checkKernel(t, name+" delta int16", sel, n, func(d []int16) { unpackDelta(d, dsrc, bw, base, minDelta) },
			func(d []int16) { unpackDeltaGathered(d, dsrc, bw, base, minDelta, sel, n) })
	}
}

// checkKernel runs whole into n slots and gathered into a dst of the
// selected rows' slots followed by guard slots, and compares.
func checkKernel[T integer](t *testing.T, name string, sel []byte, n int, whole, gathered func([]T)) {
	t.Helper()
	all := make([]T, n)
	whole(all)
	var want []T
	for i := range n {
		if bitutil.BitIsSet(sel, i) {
			want = append(want, all[i])
		}
	}
	const guards = 8
	buf := make([]T, len(want)+guards)
	for i := range buf {
		buf[i] = T(0x5a5a5a5a5a5a5a5a & uint64(^T(0)>>1))
	}
	sentinel := buf[0]
	gathered(buf[:len(want):len(want)])
	for j, v := range want {
		if buf[j] != v {
			t.Fatalf("%s: value %d is %d, want %d", name, j, buf[j], v)
		}
	}
	for _, g := range buf[len(want):] {
		if g != sentinel {
			t.Fatalf("%s: a slot past dst was written", name)
		}
	}
}
