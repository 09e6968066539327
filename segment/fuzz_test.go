package segment

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// fuzzSeeds returns valid segments for the seed corpus.
func fuzzSeeds(t testing.TB) [][]byte {
	mem := memory.NewGoAllocator()
	seeds := [][]byte{smallSegment(t, mem)}
	// An empty segment.
	empty := genArray(mem, arrow.PrimitiveTypes.Int64, 0, rngFor(1), shapeRandom, 0)
	rec := newRecord(empty)
	b, _ := writeBatches(t, rec, WriterOptions{}, 0)
	seeds = append(seeds, b)
	rec.Release()
	empty.Release()
	// One segment per shape with every type.
	for i, sh := range shapes {
		var arrs []arrow.Array
		for _, dt := range allTypes {
			arrs = append(arrs, genArray(mem, dt, 50, rngFor(uint64(i)), sh, 0.2))
		}
		rec := newRecord(arrs...)
		b, _ := writeBatches(t, rec, WriterOptions{PageRows: 20}, 0)
		seeds = append(seeds, b)
		rec.Release()
		for _, a := range arrs {
			a.Release()
		}
	}
	return seeds
}

// FuzzReader opens arbitrary bytes and reads every page: it must never panic
// and must either fail with ErrCorruption or return well-formed arrays.
func FuzzReader(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Add([]byte("rowttlsg\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		r, err := Open(bytes.NewReader(b), int64(len(b)), "fuzz.seg")
		if err != nil {
			checkCorrupt(t, err, "fuzz.seg")
			return
		}
		var sb bytes.Buffer
		if err := r.Dump(&sb); err != nil {
			t.Fatal(err)
		}
		for c := range r.Schema().Fields() {
			for p := 0; p < r.NumPages(); p++ {
				a, err := r.ReadPage(mem, c, p)
				if err != nil {
					checkCorrupt(t, err, "fuzz.seg")
					if r.ValuesOK(c) {
						var v Values
						if err := r.ReadPacked(c, p, &v); err == nil {
							t.Fatalf("ReadPacked accepts what ReadPage refuses")
						} else {
							checkCorrupt(t, err, "fuzz.seg")
						}
					}
					continue
				}
				_, n := r.Page(p)
				if err := checkArray(a, n, int(r.PageStats(c, p).NullCount)); err != nil {
					t.Fatal(err)
				}
				if r.ValuesOK(c) {
					// The allocation-free decoder must agree with ReadPage.
					var v Values
					if err := r.ReadValues(c, p, &v, false); err != nil {
						t.Fatalf("ReadPage decoded what ReadValues refuses: %v", err)
					}
					if err := checkValues(a, &v); err != nil {
						t.Fatal(err)
					}
					// So must the packed kernels.
					if err := checkPacked(r, c, p, &v, rand.New(rand.NewPCG(uint64(c), uint64(p)))); err != nil {
						t.Fatal(err)
					}
					var pv Values
					if err := r.ReadPacked(c, p, &pv); err != nil {
						t.Fatal(err)
					}
					pv.Unpack()
					if err := checkValues(a, &pv); err != nil {
						t.Fatal(err)
					}
					sel := make([]byte, (n+7)/8)
					for i := 0; i < n; i += 3 {
						sel[i/8] |= 1 << (i % 8)
					}
					if err := r.ReadSelected(c, p, &v, sel); err != nil {
						t.Fatalf("ReadPage decoded what ReadSelected refuses: %v", err)
					}
					if err := checkSelected(a, &v, sel); err != nil {
						t.Fatal(err)
					}
				}
				if r.f.cols[c].kind == kindBytes {
					// So must the decoder of selected strings.
					sel := make([]byte, (n+7)/8)
					for i := 1; i < n; i += 3 {
						sel[i/8] |= 1 << (i % 8)
					}
					g, err := r.ReadPageSelected(mem, c, p, sel)
					if err != nil {
						t.Fatalf("ReadPage decoded what ReadPageSelected refuses: %v", err)
					}
					if err := checkStrings(a, g, sel); err != nil {
						t.Fatal(err)
					}
					g.Release()
				}
				// So must the gathered read, where it gathers.
				sel := make([]byte, (n+7)/8)
				for i := 2; i < n; i += 3 {
					sel[i/8] |= 1 << (i % 8)
				}
				g, err := r.ReadPageGathered(mem, c, p, sel, popcountBits(sel, n))
				if err != nil {
					t.Fatalf("ReadPage decoded what ReadPageGathered refuses: %v", err)
				}
				if g != nil {
					compareGathered(t, g, a, sel, n)
					g.Release()
				}
				a.Release()
			}
		}
	})
}

// FuzzDecodeChunk feeds arbitrary bodies to the chunk decoders, past the
// checksum that normally guards them: a body whose checksum was forged must
// still never panic nor produce a malformed array, and the gathered
// decoders (ReadPageGathered) must refuse and decode what it does.
func FuzzDecodeChunk(f *testing.F) {
	// Seeds: the real bodies of the seed segments.
	for _, s := range fuzzSeeds(f) {
		r, err := Open(bytes.NewReader(s), int64(len(s)), "seed")
		if err != nil {
			f.Fatal(err)
		}
		sc := new(scratch)
		for c, ct := range r.f.cols {
			for p := range r.f.pages {
				ch := r.f.chunk(c, p)
				body, err := r.readChunk(ch, sc)
				if err != nil {
					f.Fatal(err)
				}
				f.Add(uint8(typeIndex(ct.dt)), uint16(r.f.pages[p]), uint16(ch.zone.NullCount), uint8(ch.enc), bytes.Clone(body))
			}
		}
	}
	f.Fuzz(func(t *testing.T, typ uint8, rows, nulls uint16, enc uint8, body []byte) {
		if rows == 0 || int(typ) >= len(allTypes) {
			return
		}
		n := int(rows)
		nn := int(nulls) % (n + 1)
		ct, err := newColType(allTypes[typ])
		if err != nil {
			t.Fatal(err)
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		a, err := decodeChunk(mem, ct, n, nn, encoding(enc), body, new(scratch))
		checkGatheredChunk(t, mem, ct, n, nn, encoding(enc), body, a, err)
		if err != nil {
			return
		}
		defer a.Release()
		if !ct.encodingAllowed(encoding(enc)) {
			t.Fatalf("decoded encoding %d for %s", enc, ct.dt)
		}
		if err := checkArray(a, n, nn); err != nil {
			t.Fatal(err)
		}
		// The packed form of what decoded, where ReadPacked keeps one,
		// holds the same values and its kernels agree with them.
		off := -1
		switch {
		case ct.kind == kindInt && ct.width == 8 && encoding(enc) == encFOR:
			off = 0
		case ct.kind == kindFloat && ct.width == 8 && encoding(enc) == encScaled:
			off = 2
		}
		if off < 0 || nn == n {
			return
		}
		pv := Values{N: n, Scale: -1, Nulls: nn}
		if err := pv.decodePacked(n, body, off); err != nil {
			t.Fatalf("decodeChunk decoded what decodePacked refuses: %v", err)
		}
		if !pv.Packed() {
			return
		}
		var v Values
		v.N, v.Scale, v.Nulls = n, pv.Scale, nn
		if err := v.decode(ct, n, encoding(enc), body, false, nil); err != nil {
			t.Fatal(err)
		}
		if err := checkValues(a, &v); err != nil {
			t.Fatal(err)
		}
		if err := checkPackedKernels(&pv, &v, rand.New(rand.NewPCG(uint64(n), 1))); err != nil {
			t.Fatal(err)
		}
		pv.Unpack()
		if err := checkValues(a, &pv); err != nil {
			t.Fatal(err)
		}
	})
}

// checkGatheredChunk checks that gatherChunk refuses a body exactly when
// decodeChunk does (decoded, err), with the same error, and otherwise
// gives the rows of decoded that a selection keeps, under a selection of
// every row and of some.
func checkGatheredChunk(t *testing.T, mem memory.Allocator, ct colType, n, nulls int, enc encoding, body []byte, decoded arrow.Array, err error) {
	t.Helper()
	if ct.kind != kindInt && ct.kind != kindFloat && ct.kind != kindBytes {
		return
	}
	some := make([]byte, (n+7)/8)
	for i := 0; i < n; i++ {
		if (i*7+n)%3 != 0 {
			some[i/8] |= 1 << (i % 8)
		}
	}
	all := make([]byte, (n+7)/8)
	setBits(all, n)
	for _, sel := range [][]byte{some, all} {
		selected := popcountBits(sel, n)
		got, gerr := gatherChunk(mem, ct, n, nulls, enc, body, sel, selected, new(scratch))
		if err != nil || gerr != nil {
			if err == nil || gerr == nil || err.Error() != gerr.Error() {
				t.Fatalf("gatherChunk says %v, decodeChunk %v", gerr, err)
			}
			continue
		}
		compareGathered(t, got, decoded, sel, n)
		got.Release()
	}
}

// compareGathered fails unless got holds the rows of whole (n of them)
// whose bit is set in sel, as a filter keeps them: values (NULL slots
// too), validity, NULL count, offset 0.
func compareGathered(t *testing.T, got, whole arrow.Array, sel []byte, n int) {
	t.Helper()
	selected := popcountBits(sel, n)
	if got.Len() != selected || got.Data().Offset() != 0 {
		t.Fatalf("gathered %d rows at offset %d, want %d", got.Len(), got.Data().Offset(), selected)
	}
	var wantValid, wantVals, gotVals []byte
	var wantNulls int
	if id := whole.DataType().ID(); id == arrow.STRING || id == arrow.BINARY {
		var wantOffs []byte
		wantValid, wantNulls, wantOffs, wantVals = refGatherStrings(whole, sel, n)
		if !bytes.Equal(got.Data().Buffers()[1].Bytes()[:4*(selected+1)], wantOffs) {
			t.Fatal("gathered offsets differ")
		}
		gotVals = got.Data().Buffers()[2].Bytes()
	} else {
		w := whole.DataType().(arrow.FixedWidthDataType).Bytes()
		wantValid, wantNulls, wantVals = refGather(whole, sel, n, w)
		gotVals = got.Data().Buffers()[1].Bytes()[:selected*w]
	}
	checkValidity(t, "gathered", got, selected, wantValid, wantNulls)
	if !bytes.Equal(gotVals, wantVals) {
		t.Fatal("gathered values differ")
	}
}

func typeIndex(dt arrow.DataType) int {
	for i, t := range allTypes {
		if arrow.TypeEqual(t, dt) {
			return i
		}
	}
	return 0
}

// checkArray verifies the structure of a decoded array: length, null count
// matching its bitmap, and offsets inside the data.
func checkArray(a arrow.Array, n, nulls int) error {
	if a.Len() != n || a.NullN() != nulls {
		return fmt.Errorf("array of %d rows %d nulls, want %d and %d", a.Len(), a.NullN(), n, nulls)
	}
	count := 0
	for i := 0; i < n; i++ {
		if a.IsNull(i) {
			count++
		}
	}
	if count != nulls {
		return fmt.Errorf("bitmap has %d nulls, the array says %d", count, nulls)
	}
	var offsets []int32
	var values []byte
	switch x := a.(type) {
	case *array.String:
		offsets, values = x.ValueOffsets(), x.ValueBytes()
	case *array.Binary:
		offsets, values = x.ValueOffsets(), x.ValueBytes()
	default:
		return nil
	}
	if len(offsets) != n+1 || offsets[0] != 0 || int(offsets[n]) != len(values) {
		return errors.New("bad string offsets")
	}
	for i := 1; i <= n; i++ {
		if offsets[i] < offsets[i-1] {
			return errors.New("decreasing string offsets")
		}
	}
	return nil
}

// FuzzFooter feeds arbitrary bytes to the footer decoder, as if their
// checksum were right, for format versions 2 to 5: it must never panic,
// and a footer it accepts must survive marshalling and decoding again
// unchanged (the bytes may differ: varints need not be minimal).
func FuzzFooter(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		r, err := Open(bytes.NewReader(s), int64(len(s)), "seed")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(formatVersion-2), bytes.Clone(s[r.footerOff:r.footerOff+int64(r.footerLen)]))
	}
	if b, err := os.ReadFile("testdata/format2.seg"); err == nil {
		r, err := Open(bytes.NewReader(b), int64(len(b)), "format2")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(0), bytes.Clone(b[r.footerOff:r.footerOff+int64(r.footerLen)]))
	}
	f.Fuzz(func(t *testing.T, version uint8, b []byte) {
		ft := footer{version: uint32(version%4) + 2}
		rest, err := ft.Unmarshal(b)
		if err != nil {
			return
		}
		if ft.version < 3 {
			return // format 2 footers are read, never written
		}
		once := ft.Marshal(nil)
		ft2 := footer{version: ft.version}
		rest2, err := ft2.Unmarshal(once)
		if err != nil || len(rest2) != 0 {
			t.Fatalf("a footer read from %d bytes, marshalled, does not read back: %v (%d bytes left)", len(b)-len(rest), err, len(rest2))
		}
		if twice := ft2.Marshal(nil); !bytes.Equal(twice, once) {
			t.Fatalf("a footer marshals to %d bytes, then to %d different ones", len(once), len(twice))
		}
	})
}

// checkStrings compares the rows of a selected by sel with got, which
// ReadPageSelected returned for them.
func checkStrings(a, got arrow.Array, sel []byte) error {
	j := 0
	for i := 0; i < a.Len(); i++ {
		if sel[i/8]&(1<<(i%8)) == 0 {
			continue
		}
		if j >= got.Len() {
			return fmt.Errorf("ReadPageSelected: %d rows, fewer than selected", got.Len())
		}
		if a.IsNull(i) != got.IsNull(j) || !a.IsNull(i) && a.ValueStr(i) != got.ValueStr(j) {
			return fmt.Errorf("ReadPageSelected: row %d reads %q, ReadPage %q", i, got.ValueStr(j), a.ValueStr(i))
		}
		j++
	}
	if j != got.Len() {
		return fmt.Errorf("ReadPageSelected: %d rows, %d selected", got.Len(), j)
	}
	return nil
}
