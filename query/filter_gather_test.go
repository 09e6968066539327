package query

import (
	"bytes"
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/bufpool"
)

// randMask returns a mask of n bits, each set with probability density,
// and the number set. Some words are forced all set, all clear, or all set
// but one bit, the shapes the gathers take shortcuts on.
func randMask(rng *rand.Rand, n int, density float64) ([]byte, int) {
	mask := make([]byte, (n+7)/8+rng.IntN(2)) // a spare byte must not count
	selected := 0
	for w := 0; w*64 < n; w++ {
		shape := rng.IntN(8)
		for i := w * 64; i < min(n, w*64+64); i++ {
			var set bool
			switch shape {
			case 0:
				set = true
			case 1:
				set = false
			case 2:
				set = i != w*64+w%64
			default:
				set = rng.Float64() < density
			}
			if set {
				bitutil.SetBit(mask, i)
				selected++
			}
		}
	}
	// Bits past n are garbage the gathers must ignore.
	for i := n; i < len(mask)*8; i++ {
		if rng.IntN(2) == 0 {
			bitutil.SetBit(mask, i)
		}
	}
	return mask, selected
}

// randString returns a value of one of the lengths the string gather
// treats apart: empty, up to 16, up to 32 (the bench's messages), longer.
func randString(rng *rand.Rand, kind int) string {
	var n int
	switch kind {
	case 0:
		n = 0
	case 1:
		n = 1 + rng.IntN(16)
	case 2:
		n = 16 + rng.IntN(5)
	case 3:
		n = 17 + rng.IntN(16)
	case 4:
		n = 33 + rng.IntN(100)
	default:
		return randString(rng, rng.IntN(5))
	}
	var sb strings.Builder
	for range n {
		sb.WriteByte(byte('a' + rng.IntN(26)))
	}
	return sb.String()
}

// TestFilterArrayRandom checks filterArray on every fixed width, booleans
// and strings of every length class against a per-bit reference, on sliced
// inputs, with NULL and mask densities from none to all and lengths that
// are not multiples of 8 or 64. Memory is handed out dirty (a byte left
// unwritten shows) and all of it returned. It checks the buffers too: the
// lengths of the values, offsets and data are those of the rows kept, the
// offsets start at 0, and the result is not sliced. The seed is printed.
func TestFilterArrayRandom(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	mem := memory.NewCheckedAllocator(dirtyAllocator{memory.NewGoAllocator()})
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	types := []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32,
		arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String, arrow.BinaryTypes.Binary,
		arrow.FixedWidthTypes.Boolean,
	}
	for iter := range 400 {
		typ := types[iter%len(types)]
		n := []int{0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 129, 500, 4096 + 3}[rng.IntN(13)]
		head := rng.IntN(70)
		nullP := []float64{0, 0.1, 0.5, 1}[rng.IntN(4)]
		density := []float64{0, 1.0 / 8, 0.5, 7.0 / 8, 1}[rng.IntN(5)]
		strKind := rng.IntN(6)
		name := fmt.Sprintf("%d/%s/n=%d/head=%d/nulls=%v/density=%v/kind=%d", iter, typ, n, head, nullP, density, strKind)

		b := array.NewBuilder(mem, typ)
		for range head + n + rng.IntN(3) {
			if rng.Float64() < nullP {
				b.AppendNull()
				continue
			}
			switch bb := b.(type) {
			case *array.Int8Builder:
				bb.Append(int8(rng.Uint32()))
			case *array.Int16Builder:
				bb.Append(int16(rng.Uint32()))
			case *array.Int32Builder:
				bb.Append(int32(rng.Uint32()))
			case *array.Int64Builder:
				bb.Append(int64(rng.Uint64()))
			case *array.Float64Builder:
				bb.Append(rng.Float64())
			case *array.StringBuilder:
				bb.Append(randString(rng, strKind))
			case *array.BinaryBuilder:
				bb.Append([]byte(randString(rng, strKind)))
			case *array.BooleanBuilder:
				// Mostly true, mostly false or even, as NULLs are.
				bb.Append(rng.Float64() < []float64{0.05, 0.5, 0.95}[strKind%3])
			}
		}
		whole := b.NewArray()
		b.Release()
		a := array.NewSlice(whole, int64(head), int64(head+n))
		whole.Release()
		mask, selected := randMask(rng, n, density)

		got, err := filterArray(ctx, mem, a, mask, n, selected)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if msg := diffFiltered(a, got, mask, n); msg != "" {
			t.Fatalf("%s: %s", name, msg)
		}
		got.Release()
		a.Release()
	}
}

// diffFiltered compares got with the rows of a selected by mask, taken one
// bit at a time; it returns what differs, or "".
func diffFiltered(a, got arrow.Array, mask []byte, n int) string {
	var keep []int
	for i := 0; i < n; i++ {
		if bitutil.BitIsSet(mask, i) {
			keep = append(keep, i)
		}
	}
	if got.Len() != len(keep) {
		return fmt.Sprintf("%d rows, want %d", got.Len(), len(keep))
	}
	d := got.Data()
	if d.Offset() != 0 {
		return fmt.Sprintf("result offset %d", d.Offset())
	}
	nulls := 0
	for j, i := range keep {
		if got.IsNull(j) != a.IsNull(i) {
			return fmt.Sprintf("row %d (input %d): null %t, want %t", j, i, got.IsNull(j), a.IsNull(i))
		}
		if a.IsNull(i) {
			nulls++
		}
	}
	if got.NullN() != nulls {
		return fmt.Sprintf("NullN %d, want %d", got.NullN(), nulls)
	}
	if nulls == 0 && d.Buffers()[0] != nil {
		return "a validity bitmap without NULLs"
	}
	switch a := a.(type) {
	case interface {
		ValueOffsets() []int32
		ValueBytes() []byte
	}:
		g := got.(interface {
			ValueOffsets() []int32
			ValueBytes() []byte
		})
		offs := arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())
		if len(offs) != len(keep)+1 || offs[0] != 0 {
			return fmt.Sprintf("%d offsets from %v, want %d from 0", len(offs), offs[:min(1, len(offs))], len(keep)+1)
		}
		ao, av := a.ValueOffsets(), a.ValueBytes()
		goffs, gv := g.ValueOffsets(), g.ValueBytes()
		total := 0
		for j, i := range keep {
			want := av[ao[i]-ao[0] : ao[i+1]-ao[0]]
			have := gv[goffs[j]:goffs[j+1]]
			if !bytes.Equal(have, want) {
				return fmt.Sprintf("row %d (input %d): %q, want %q", j, i, have, want)
			}
			total += len(want)
		}
		if d.Buffers()[2].Len() != total {
			return fmt.Sprintf("data buffer of %d bytes, want %d", d.Buffers()[2].Len(), total)
		}
	case *array.Boolean:
		// Values under NULLs are gathered too: compare them all.
		g := got.(*array.Boolean)
		if vals := d.Buffers()[1]; vals.Len() != int(bitutil.BytesForBits(int64(len(keep)))) {
			return fmt.Sprintf("values buffer of %d bytes for %d rows", vals.Len(), len(keep))
		}
		for j, i := range keep {
			if g.Value(j) != a.Value(i) {
				return fmt.Sprintf("row %d (input %d): %t, want %t", j, i, g.Value(j), a.Value(i))
			}
		}
	default:
		// Values under NULLs are gathered too: compare them all.
		width := a.DataType().(arrow.FixedWidthDataType).Bytes()
		var src []byte
		if b := a.Data().Buffers()[1]; b != nil { // nil in an array of no rows
			src = b.Bytes()[a.Data().Offset()*width:]
		}
		vals := d.Buffers()[1]
		if vals.Len() != len(keep)*width {
			return fmt.Sprintf("values buffer of %d bytes, want %d", vals.Len(), len(keep)*width)
		}
		for j, i := range keep {
			if !bytes.Equal(vals.Bytes()[j*width:(j+1)*width], src[i*width:(i+1)*width]) {
				return fmt.Sprintf("row %d (input %d): %x, want %x", j, i, vals.Bytes()[j*width:(j+1)*width], src[i*width:(i+1)*width])
			}
		}
	}
	return ""
}

// TestFilterArrayEmpty filters arrays of no rows, whose buffers may be
// missing, of every gathered type.
func TestFilterArrayEmpty(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, typ := range []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.BinaryTypes.String, arrow.BinaryTypes.Binary, arrow.FixedWidthTypes.Boolean,
	} {
		b := array.NewBuilder(mem, typ)
		a := b.NewArray()
		b.Release()
		got, err := filterArray(context.Background(), mem, a, nil, 0, 0)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if got.Len() != 0 {
			t.Fatalf("%s: %d rows", typ, got.Len())
		}
		got.Release()
		a.Release()
	}
}

// benchMask returns a random mask of n bits at density num/8.
func benchMask(n, num int) ([]byte, int) {
	rng := rand.New(rand.NewPCG(3, 4))
	mask := make([]byte, n/8)
	selected := 0
	for i := range n {
		if rng.IntN(8) < num {
			bitutil.SetBit(mask, i)
			selected++
		}
	}
	return mask, selected
}

// benchFilter filters a at mask densities 1/8, 1/2 and 7/8 of random rows,
// into a page pool as a scan does (fresh zeroed memory would be most of
// the cost).
func benchFilter(b *testing.B, a arrow.Array) {
	mem := &bufpool.Pool{}
	n := a.Len()
	ctx := context.Background()
	for _, num := range []int{1, 4, 7} {
		mask, selected := benchMask(n, num)
		b.Run(fmt.Sprintf("d=%d_8", num), func(b *testing.B) {
			for b.Loop() {
				f, err := filterArray(ctx, mem, a, mask, n, selected)
				if err != nil {
					b.Fatal(err)
				}
				f.Release()
			}
		})
	}
}

const benchFilterRows = 64 << 10

// BenchmarkFilterFixed gathers a BIGINT column without NULLs: the values
// alone.
func BenchmarkFilterFixed(b *testing.B) {
	mem := memory.NewGoAllocator()
	ib := array.NewInt64Builder(mem)
	for i := range benchFilterRows {
		ib.Append(int64(i) * 7)
	}
	a := ib.NewArray()
	ib.Release()
	defer a.Release()
	benchFilter(b, a)
}

// BenchmarkFilterValidity gathers the validity of a BIGINT column a tenth
// NULL, as the bench's __TTL__ (its values are BenchmarkFilterFixed's), and
// of one half NULL.
func BenchmarkFilterValidity(b *testing.B) {
	mem := memory.NewGoAllocator()
	pool := &bufpool.Pool{}
	for _, every := range []int{10, 2} {
		rng := rand.New(rand.NewPCG(5, 6))
		ib := array.NewInt64Builder(mem)
		for i := range benchFilterRows {
			if rng.IntN(every) == 0 {
				ib.AppendNull()
			} else {
				ib.Append(int64(i))
			}
		}
		a := ib.NewArray()
		ib.Release()
		for _, num := range []int{1, 4, 7} {
			mask, selected := benchMask(benchFilterRows, num)
			b.Run(fmt.Sprintf("nulls=1_%d/d=%d_8", every, num), func(b *testing.B) {
				for b.Loop() {
					v, _ := filterValidity(pool, a, mask, benchFilterRows, selected)
					v.Release()
				}
			})
		}
		a.Release()
	}
}

// BenchmarkFilterBytes gathers a string column of the bench's messages,
// 16 to 20 bytes, without NULLs.
func BenchmarkFilterBytes(b *testing.B) {
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewPCG(7, 8))
	verbs := []string{"view", "click", "purchase", "signup", "login", "logout", "search", "share"}
	sb := array.NewStringBuilder(mem)
	for range benchFilterRows {
		sb.Append(fmt.Sprintf("%s #%d", verbs[rng.IntN(8)], 1_000_000_000+rng.IntN(9_000_000_000)))
	}
	a := sb.NewArray()
	sb.Release()
	defer a.Release()
	benchFilter(b, a)
}

// TestFilterBytesEndOfData gathers short values that end a data buffer
// with no room past them, where a block read must not go: every choice of
// the last 8 of 128 rows, the others alternately kept.
func TestFilterBytesEndOfData(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 128
	tail := []string{"first value", "", "x", "a value of exactly 32 bytes, ok!", "yz", "", "a", "bcd"}
	var data []byte
	offs := []int32{0}
	for i := range n {
		v := fmt.Sprintf("value %d", i)
		if i >= n-len(tail) {
			v = tail[i-(n-len(tail))]
		}
		data = append(data, v...)
		offs = append(offs, int32(len(data)))
	}
	data = data[:len(data):len(data)]
	a := array.NewStringData(array.NewData(arrow.BinaryTypes.String, n,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offs)), memory.NewBufferBytes(data)}, nil, 0, 0))
	defer a.Release()
	for m := range 256 {
		mask := bytes.Repeat([]byte{0x55}, n/8)
		mask[n/8-1] = byte(m)
		selected := 0
		for _, b := range mask {
			selected += bits.OnesCount8(b)
		}
		got, err := filterArray(context.Background(), mem, a, mask, n, selected)
		if err != nil {
			t.Fatal(err)
		}
		if msg := diffFiltered(a, got, mask, n); msg != "" {
			t.Fatalf("last byte %08b: %s", m, msg)
		}
		got.Release()
	}
}

// BenchmarkFilterBools gathers a BOOLEAN column, half of it true, without
// NULLs.
func BenchmarkFilterBools(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	bb := array.NewBooleanBuilder(memory.NewGoAllocator())
	for range benchFilterRows {
		bb.Append(rng.IntN(2) == 0)
	}
	a := bb.NewArray()
	bb.Release()
	defer a.Release()
	benchFilter(b, a)
}

// FuzzFilterArray filters string, BIGINT and BOOLEAN arrays shaped by the
// input against the per-bit reference: a row per byte of shape (a NULL
// from 240 on, else a value of shape%48 bytes), after head rows sliced
// off, selected by the bits of mask (repeated to cover the rows).
func FuzzFilterArray(f *testing.F) {
	f.Add([]byte{0xff}, []byte("abcdefgh"), uint8(0))
	f.Add([]byte{0x55, 0xaa, 0xff, 0}, bytes.Repeat([]byte{17, 250, 40, 0, 33}, 40), uint8(5))
	f.Add(bytes.Repeat([]byte{0xff}, 16), bytes.Repeat([]byte{20}, 128), uint8(64))
	f.Add([]byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, bytes.Repeat([]byte{3, 47, 16}, 30), uint8(3))
	f.Fuzz(func(t *testing.T, mask, shape []byte, head uint8) {
		mem := memory.NewCheckedAllocator(dirtyAllocator{memory.NewGoAllocator()})
		defer mem.AssertSize(t, 0)
		h := int(head % 70)
		n := len(shape) - min(h, len(shape))
		sb := array.NewStringBuilder(mem)
		ib := array.NewInt64Builder(mem)
		bb := array.NewBooleanBuilder(mem)
		for i, c := range shape {
			if c >= 240 {
				sb.AppendNull()
				ib.AppendNull()
				bb.AppendNull()
				continue
			}
			sb.Append(strings.Repeat(string(rune('a'+i%26)), int(c%48)))
			ib.Append(int64(i)*1000 + int64(c))
			bb.Append(c%3 == 0)
		}
		m := make([]byte, (n+7)/8)
		selected := 0
		for i := range n {
			if len(mask) > 0 && mask[(i/8)%len(mask)]&(1<<(i%8)) != 0 {
				m[i/8] |= 1 << (i % 8)
				selected++
			}
		}
		for _, b := range []array.Builder{sb, ib, bb} {
			whole := b.NewArray()
			b.Release()
			a := array.NewSlice(whole, int64(len(shape)-n), int64(len(shape)))
			whole.Release()
			got, err := filterArray(context.Background(), mem, a, m, n, selected)
			if err != nil {
				t.Fatal(err)
			}
			if msg := diffFiltered(a, got, m, n); msg != "" {
				t.Fatalf("%s: %s", a.DataType(), msg)
			}
			got.Release()
			a.Release()
		}
	})
}
