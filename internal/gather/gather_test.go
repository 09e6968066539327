package gather

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestOffsetsBytes checks Offsets and Bytes against a gather a row at a
// time: values empty, short, at the block size and past it, values ending
// the source (no room for a block read), offsets not from 0, row counts
// off multiples of 64 and selections empty, full, in runs and random; and
// that Bytes writes nothing past the slack.
func TestOffsetsBytes(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	for trial := range 2000 {
		n := rng.IntN(300)
		if trial%7 == 0 {
			n = 64 * rng.IntN(5)
		}
		maxLen := []int{1, 8, Slack, Slack + 1, 100}[rng.IntN(5)]
		base := int32(rng.IntN(5))
		offs := make([]int32, n+1)
		offs[0] = base
		for i := range n {
			offs[i+1] = offs[i] + int32(rng.IntN(maxLen+1))
		}
		src := make([]byte, offs[n]) // no room past the last value
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		sel := make([]byte, (n+7)/8)
		density := []float64{0, 1, 0.5, 0.05, 0.95}[rng.IntN(5)]
		for i := range n {
			if rng.Float64() < density || (density == 0.5 && i/17%2 == 0) {
				sel[i/8] |= 1 << (i % 8)
			}
		}
		wantOffs := []int32{0}
		var want []byte
		for i := range n {
			if sel[i/8]>>(i%8)&1 == 1 {
				want = append(want, src[offs[i]-base:offs[i+1]-base]...)
				wantOffs = append(wantOffs, int32(len(want)))
			}
		}
		gotOffs := make([]int32, len(wantOffs))
		total := Offsets(gotOffs, offs, sel, n)
		if int(total) != len(want) || !slices.Equal(gotOffs, wantOffs) {
			t.Fatalf("seed %d trial %d: offsets %v (total %d), want %v", seed, trial, gotOffs, total, wantOffs)
		}
		const guard = 8
		dst := bytes.Repeat([]byte{0xa5}, len(want)+Slack+guard)
		Bytes(dst[:len(want)+Slack], src, offs, sel, n)
		if !bytes.Equal(dst[:len(want)], want) {
			t.Fatalf("seed %d trial %d: bytes differ", seed, trial)
		}
		if !bytes.Equal(dst[len(want)+Slack:], bytes.Repeat([]byte{0xa5}, guard)) {
			t.Fatalf("seed %d trial %d: wrote past the slack", seed, trial)
		}
	}
}

// TestBits checks Bits against a gather a bit at a time, at every bit
// offset into the source, for bitmaps and selections of every density and
// row counts off multiples of 64: the bits, their count, the clear bits
// past the last, into bytes of garbage, with nothing written past them.
func TestBits(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 9))
	for trial := range 3000 {
		n := rng.IntN(400)
		off := rng.IntN(70)
		bd, md := []float64{0, 0.1, 0.5, 0.9, 1}[rng.IntN(5)], []float64{0, 0.05, 0.5, 0.95, 1}[rng.IntN(5)]
		bm := make([]byte, (off+n+7)/8)
		for i := range off + n {
			if rng.Float64() < bd {
				bm[i/8] |= 1 << (i % 8)
			}
		}
		mask := make([]byte, (n+7)/8)
		var want []bool
		for i := range n {
			if rng.Float64() < md {
				mask[i/8] |= 1 << (i % 8)
				want = append(want, bm[(off+i)/8]>>((off+i)%8)&1 == 1)
			}
		}
		const guard = 0xa5
		out := bytes.Repeat([]byte{0xff}, (len(want)+7)/8+1)
		out[len(out)-1] = guard
		ones := Bits(out[:len(out)-1], bm, off, mask, n)
		wantOnes := 0
		for j, b := range want {
			if b {
				wantOnes++
			}
			if out[j/8]>>(j%8)&1 == 1 != b {
				t.Fatalf("seed %d trial %d: bit %d differs", seed, trial, j)
			}
		}
		if ones != wantOnes || out[len(out)-1] != guard || len(want)%8 != 0 && out[len(out)-2]>>(len(want)%8) != 0 {
			t.Fatalf("seed %d trial %d: %d ones (want %d), or bits past the last set, or a write past them", seed, trial, ones, wantOnes)
		}
	}
}
