package segment

import (
	"bytes"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/internal/gather"
)

const benchRows = 1 << 16

// benchCase is one column of data made for one encoding.
type benchCase struct {
	name string
	enc  string // expected encoding
	comp string // expected compression
	zstd int
	make func(mem memory.Allocator) arrow.Array
}

var benchCases = []benchCase{
	{"for-int64", "for", "none", -1, func(mem memory.Allocator) arrow.Array {
		rng := rngFor(1)
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for range benchRows {
			b.Append(1<<40 + rng.Int64N(1<<20)) // 20 bits
		}
		return b.NewArray()
	}},
	{"delta-timestamp", "delta", "none", -1, func(mem memory.Allocator) arrow.Array {
		rng := rngFor(2)
		b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
		defer b.Release()
		t := int64(1_767_225_600_000_000)
		for range benchRows {
			t += 500 + rng.Int64N(1000) // ~1 ms apart, 10-bit deltas
			b.Append(arrow.Timestamp(t))
		}
		return b.NewArray()
	}},
	{"plain-int64", "plain", "none", -1, func(mem memory.Allocator) arrow.Array {
		rng := rngFor(3)
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for range benchRows {
			b.Append(int64(rng.Uint64()))
		}
		return b.NewArray()
	}},
	{"dict-string", "dict", "none", -1, func(mem memory.Allocator) arrow.Array {
		rng := rngFor(4)
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for range benchRows {
			b.Append(fmt.Sprintf("region-%02d", rng.IntN(50)))
		}
		return b.NewArray()
	}},
	{"plain-string", "plain", "none", -1, func(mem memory.Allocator) arrow.Array {
		rng := rngFor(5)
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for range benchRows {
			b.Append(fmt.Sprintf("%016x%08x", rng.Uint64(), rng.Uint32()))
		}
		return b.NewArray()
	}},
	{"plain-float64", "plain", "none", -1, func(mem memory.Allocator) arrow.Array {
		rng := rngFor(6)
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		for range benchRows {
			b.Append(rng.NormFloat64())
		}
		return b.NewArray()
	}},
	{"zstd-string", "plain", "zstd", 0, func(mem memory.Allocator) arrow.Array {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for i := range benchRows {
			b.Append(fmt.Sprintf("user-%08d@example.com", i))
		}
		return b.NewArray()
	}},
	{"lz4-string", "plain", "lz4", 0, func(mem memory.Allocator) arrow.Array {
		// The events benchmark's messages: too distinct for a dictionary.
		rng := rngFor(8)
		verbs := []string{"view", "click", "login", "logout", "search", "cart_add", "checkout", "refund"}
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for range benchRows {
			b.Append(fmt.Sprintf("%s #%d", verbs[rng.IntN(8)], 1_000_000_000+rng.Int64N(9_000_000_000)))
		}
		return b.NewArray()
	}},
	{"for-int64-nulls", "for", "none", -1, func(mem memory.Allocator) arrow.Array {
		rng := rngFor(7)
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for range benchRows {
			if rng.IntN(10) == 0 {
				b.AppendNull()
			} else {
				b.Append(rng.Int64N(1 << 20))
			}
		}
		return b.NewArray()
	}},
}

// decodedBytes is the size of the Arrow buffers of a: what a decode
// produces.
func decodedBytes(a arrow.Array) int64 {
	var n int64
	for _, b := range a.Data().Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	return n
}

func buildBenchSegment(b testing.TB, bc benchCase) (*Reader, int64) {
	mem := memory.NewGoAllocator()
	arr := bc.make(mem)
	defer arr.Release()
	rec := newRecord(arr)
	defer rec.Release()
	opts := WriterOptions{ZstdLevel: bc.zstd}
	if bc.comp == "zstd" {
		opts.Codec = CodecZstd
	}
	data, _ := writeBatches(b, rec, opts, 0)
	r := openBytes(b, data, bc.name)
	if enc, comp := r.PageEncoding(0, 0); enc != bc.enc || comp != bc.comp {
		b.Fatalf("%s: encoding %s/%s, want %s/%s", bc.name, enc, comp, bc.enc, bc.comp)
	}
	var out int64
	for p := 0; p < r.NumPages(); p++ {
		a, err := r.ReadPage(mem, 0, p)
		if err != nil {
			b.Fatal(err)
		}
		out += decodedBytes(a)
		a.Release()
	}
	return r, out
}

// BenchmarkReadPage measures ReadPage (read, CRC, decompress, decode into
// Arrow) over every page of a 64Ki-row column. Throughput is Arrow bytes
// produced.
func BenchmarkReadPage(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			r, out := buildBenchSegment(b, bc)
			mem := memory.DefaultAllocator
			b.SetBytes(out)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				for p := 0; p < r.NumPages(); p++ {
					a, err := r.ReadPage(mem, 0, p)
					if err != nil {
						b.Fatal(err)
					}
					a.Release()
				}
			}
		})
	}
}

// BenchmarkDecode measures the decoders alone on already verified bodies
// (no read, no CRC, no zstd), into Arrow buffers from a reused allocator.
func BenchmarkDecode(b *testing.B) {
	for _, bc := range benchCases {
		if bc.comp != "none" {
			continue
		}
		b.Run(bc.name, func(b *testing.B) {
			r, out := buildBenchSegment(b, bc)
			var bodies [][]byte
			sc := new(scratch)
			for p := range r.f.pages {
				body, err := r.readChunk(r.f.chunk(0, p), sc)
				if err != nil {
					b.Fatal(err)
				}
				bodies = append(bodies, bytes.Clone(body))
			}
			mem := newPoolAllocator()
			ct := r.f.cols[0]
			b.SetBytes(out)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				for p, body := range bodies {
					c := r.f.chunk(0, p)
					a, err := decodeChunk(mem, ct, r.f.pages[p], int(c.zone.NullCount), c.enc, body, sc)
					if err != nil {
						b.Fatal(err)
					}
					a.Release()
				}
			}
		})
	}
}

// poolAllocator recycles buffers by size, so BenchmarkDecode measures
// decoding rather than the Go allocator zeroing fresh memory.
type poolAllocator struct{ free map[int][][]byte }

func newPoolAllocator() *poolAllocator { return &poolAllocator{free: map[int][][]byte{}} }

func (p *poolAllocator) Allocate(size int) []byte {
	if l := p.free[size]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[size] = l[:len(l)-1]
		return b
	}
	return make([]byte, size)
}

func (p *poolAllocator) Reallocate(size int, b []byte) []byte {
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *poolAllocator) Free(b []byte) { p.free[len(b)] = append(p.free[len(b)], b) }

// BenchmarkWrite measures encoding 64Ki rows of each case into a segment.
// Throughput is Arrow input bytes.
func BenchmarkWrite(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			mem := memory.NewGoAllocator()
			arr := bc.make(mem)
			defer arr.Release()
			rec := newRecord(arr)
			defer rec.Release()
			b.SetBytes(decodedBytes(arr))
			b.ReportAllocs()
			var size int64
			for b.Loop() {
				w, err := NewWriter(io.Discard, rec.Schema(), WriterOptions{ZstdLevel: bc.zstd})
				if err != nil {
					b.Fatal(err)
				}
				if err := w.Write(rec); err != nil {
					b.Fatal(err)
				}
				s, err := w.Finish()
				if err != nil {
					b.Fatal(err)
				}
				size = s.Bytes
			}
			b.ReportMetric(float64(size)/float64(benchRows), "file-B/row")
		})
	}
}

// BenchmarkPackedKernels compares, on one 64Ki-row page of packed values
// (20 bits: a decimal-scaled amount; 42: epoch-µs expirations), unpacking
// alone with the range test and the sum of half the rows on the packed
// values.
func BenchmarkPackedKernels(b *testing.B) {
	const n = 65536
	for _, bw := range []uint{5, 20, 42} {
		rng := rand.New(rand.NewPCG(uint64(bw), 1))
		src := packRandom(rng, n, bw)
		sel := make([]byte, n/8)
		for i := range sel {
			sel[i] = byte(rng.Uint32())
		}
		dst := make([]int64, n)
		t, f := make([]byte, n/8), make([]byte, n/8)
		b.Run(fmt.Sprintf("unpack-%d", bw), func(b *testing.B) {
			for b.Loop() {
				unpackFOR(dst, src, bw, 1000)
			}
		})
		if bw <= 32 {
			// Delta runs: a string page's offsets from its lengths.
			d32 := make([]int32, n)
			b.Run(fmt.Sprintf("delta-%d", bw), func(b *testing.B) {
				for b.Loop() {
					unpackDelta(d32, src, bw, 0, 1)
				}
			})
		}
		b.Run(fmt.Sprintf("range-%d", bw), func(b *testing.B) {
			for b.Loop() {
				rangeFOR(src, n, bw, 1000, 1<<(bw-1), 1<<62, false, t, f)
			}
		})
		for _, per := range []int{4, 8, 16} {
			// One row in per selected, at random: a filter's survivors.
			few := make([]byte, n/8)
			for i := range n {
				if rng.IntN(per) == 0 {
					few[i/8] |= 1 << (i % 8)
				}
			}
			b.Run(fmt.Sprintf("range-1in%d-%d", per, bw), func(b *testing.B) {
				for b.Loop() {
					rangeFORSelected(src, n, bw, 1000, 1<<(bw-1), 1<<62, false, few, t, f)
				}
			})
		}
		b.Run(fmt.Sprintf("sum-half-%d", bw), func(b *testing.B) {
			for b.Loop() {
				sumFOR(src, n, bw, 1000, sel)
			}
		})
		b.Run(fmt.Sprintf("sum-all-%d", bw), func(b *testing.B) {
			for b.Loop() {
				sumFOR(src, n, bw, 1000, nil)
			}
		})
	}
}

// BenchmarkGatherKernels compares, on one 64Ki-row page with half its rows
// selected at random (a page of the bench's events, half expired),
// decoding the page whole and gathering the selected values with the
// fused kernels of ReadPageGathered.
func BenchmarkGatherKernels(b *testing.B) {
	const n = 65536
	for _, bw := range []uint{20, 42} {
		rng := rand.New(rand.NewPCG(uint64(bw), 2))
		src := packRandom(rng, n, bw)
		sel := make([]byte, n/8)
		for i := range sel {
			sel[i] = byte(rng.Uint32())
		}
		selected := popcountBits(sel, n)
		whole := make([]int64, n)
		dst := make([]int64, selected)
		gather := func() {
			j := 0
			for i0 := 0; i0 < n; i0 += 64 {
				for w := gather.Word(sel, i0, 64); w != 0; w &= w - 1 {
					dst[j] = whole[i0+bits.TrailingZeros64(w)]
					j++
				}
			}
		}
		b.Run(fmt.Sprintf("for-whole-%d", bw), func(b *testing.B) {
			for b.Loop() {
				unpackFOR(whole, src, bw, 1000)
				gather()
			}
		})
		b.Run(fmt.Sprintf("for-gathered-%d", bw), func(b *testing.B) {
			for b.Loop() {
				unpackFORGathered(dst, src, bw, 1000, sel, n)
			}
		})
		b.Run(fmt.Sprintf("delta-whole-%d", bw), func(b *testing.B) {
			for b.Loop() {
				unpackDelta(whole, src, bw, 0, 1)
				gather()
			}
		})
		b.Run(fmt.Sprintf("delta-gathered-%d", bw), func(b *testing.B) {
			for b.Loop() {
				unpackDeltaGathered(dst, src, bw, 0, 1, sel, n)
			}
		})
	}
	// An arithmetic sequence: ids and clock ticks, delta of 0 bits.
	sel := make([]byte, n/8)
	rng := rand.New(rand.NewPCG(0, 2))
	for i := range sel {
		sel[i] = byte(rng.Uint32())
	}
	whole, dst := make([]int64, n), make([]int64, popcountBits(sel, n))
	b.Run("delta-whole-0", func(b *testing.B) {
		for b.Loop() {
			unpackDelta(whole, nil, 0, 1_765_180_800_000_000, 259200)
			j := 0
			for i0 := 0; i0 < n; i0 += 64 {
				for w := gather.Word(sel, i0, 64); w != 0; w &= w - 1 {
					dst[j] = whole[i0+bits.TrailingZeros64(w)]
					j++
				}
			}
		}
	})
	b.Run("delta-gathered-0", func(b *testing.B) {
		for b.Loop() {
			unpackDeltaGathered(dst, nil, 0, 1_765_180_800_000_000, 259200, sel, n)
		}
	})
	// The validity of a page with a NULL in ten rows, as __TTL__'s.
	valid := make([]byte, n/8)
	for i := range n {
		if rng.IntN(10) != 0 {
			valid[i/8] |= 1 << (i % 8)
		}
	}
	out := make([]byte, (len(dst)+7)/8)
	b.Run("validity-rowwise", func(b *testing.B) {
		for b.Loop() {
			clear(out)
			j := 0
			for i0 := 0; i0 < n; i0 += 64 {
				for w := gather.Word(sel, i0, 64); w != 0; w &= w - 1 {
					i := i0 + bits.TrailingZeros64(w)
					if valid[i>>3]&(1<<(i&7)) != 0 {
						out[j>>3] |= 1 << (j & 7)
					}
					j++
				}
			}
		}
	})
	b.Run("validity-gathered", func(b *testing.B) {
		for b.Loop() {
			gather.Bits(out, valid, 0, sel, n)
		}
	})
}
