package segment

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unsafe"

	"github.com/rowttl/rowttl/internal/gather"
)

// Bit packing. Value i of a packed run of width bw occupies bits
// [i*bw, (i+1)*bw) of a little-endian bit stream, so n values take exactly
// ⌈n*bw/8⌉ bytes and the unused high bits of the last byte are zero.
//
// The decoders load 8 bytes at a time at the byte holding a value's first bit
// and shift: one unaligned load, a shift and a mask per value, no branches,
// no per-value calls. Values whose 8-byte window would run past the end of
// the input (the last few), and widths above 56 bits, take a slow path.

// littleEndian reports whether the host stores integers little-endian; the
// fast paths load words straight from memory and copy plain values into
// Arrow buffers, which is only right on such hosts.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// packedLen returns the bytes n values of bw bits take.
func packedLen(n int, bw uint) int { return (n*int(bw) + 7) / 8 }

// bitWidth returns the bits needed to hold v.
func bitWidth(v uint64) uint { return uint(bits.Len64(v)) }

// appendPacked appends vals packed with width bw. Every value must fit in bw
// bits.
func appendPacked(dst []byte, vals []uint64, bw uint) []byte {
	if bw == 0 {
		return dst
	}
	var acc uint64 // pending bits, LSB first
	var nb uint    // number of pending bits, < 64
	for _, v := range vals {
		acc |= v << nb
		if nb+bw >= 64 {
			dst = binary.LittleEndian.AppendUint64(dst, acc)
			used := 64 - nb // bits of v already written
			acc = 0
			if used < 64 {
				acc = v >> used
			}
			nb = nb + bw - 64
		} else {
			nb += bw
		}
	}
	for nb > 0 {
		dst = append(dst, byte(acc))
		acc >>= 8
		nb -= min(nb, 8)
	}
	return dst
}

// packedTailOK reports whether the unused high bits of the last byte of a
// packed run of n values are zero, as the encoder leaves them.
func packedTailOK(src []byte, n int, bw uint) bool {
	rem := uint(n) * bw % 8
	if rem == 0 || len(src) == 0 {
		return true
	}
	return src[len(src)-1]>>rem == 0
}

// readBits returns the bw-bit value starting at bit of src, reading no byte
// past the end of src.
func readBits(src []byte, bit, bw uint) uint64 {
	var buf [16]byte
	copy(buf[:], src[bit>>3:])
	s := bit & 7
	v := binary.LittleEndian.Uint64(buf[:8]) >> s
	if s != 0 {
		v |= uint64(buf[8]) << (64 - s)
	}
	if bw < 64 {
		v &= 1<<bw - 1
	}
	return v
}

// integer is what packed values decode into.
type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// fastCount returns how many leading values of a packed run the one-load
// path may decode: those whose 8-byte window lies inside src.
func fastCount(n int, srcLen int, bw uint) int {
	if bw > 56 || srcLen < 8 || !littleEndian {
		return 0
	}
	return min(n, ((srcLen-8)*8+7)/int(bw)+1)
}

// unpackFOR decodes len(dst) values of bw bits from src into dst[i] = base +
// value (wrapping), truncated to T. src must hold packedLen(len(dst), bw)
// bytes.
func unpackFOR[T integer](dst []T, src []byte, bw uint, base int64) {
	if bw == 0 {
		v := T(base)
		for i := range dst {
			dst[i] = v
		}
		return
	}
	nf := fastCount(len(dst), len(src), bw)
	if nf > 0 {
		p := unsafe.Pointer(unsafe.SliceData(src))
		mask := uint64(1)<<bw - 1
		d := dst[:nf]
		i := 0
		// Eight values per round, independent loads in flight; eight
		// values take bw bytes, so each of eight sits at the same byte
		// and bit of them (see rangeFOR).
		o1, o2, o3, o4, o5, o6, o7 := bw>>3, 2*bw>>3, 3*bw>>3, 4*bw>>3, 5*bw>>3, 6*bw>>3, 7*bw>>3
		s1, s2, s3, s4, s5, s6, s7 := bw&7, 2*bw&7, 3*bw&7, 4*bw&7, 5*bw&7, 6*bw&7, 7*bw&7
		at := uint(0)
		for ; i+8 <= len(d); i += 8 {
			q := unsafe.Add(p, at)
			d8 := d[i : i+8 : i+8]
			d8[0] = T(base + int64(*(*uint64)(q)&mask))
			d8[1] = T(base + int64(*(*uint64)(unsafe.Add(q, o1))>>s1&mask))
			d8[2] = T(base + int64(*(*uint64)(unsafe.Add(q, o2))>>s2&mask))
			d8[3] = T(base + int64(*(*uint64)(unsafe.Add(q, o3))>>s3&mask))
			d8[4] = T(base + int64(*(*uint64)(unsafe.Add(q, o4))>>s4&mask))
			d8[5] = T(base + int64(*(*uint64)(unsafe.Add(q, o5))>>s5&mask))
			d8[6] = T(base + int64(*(*uint64)(unsafe.Add(q, o6))>>s6&mask))
			d8[7] = T(base + int64(*(*uint64)(unsafe.Add(q, o7))>>s7&mask))
			at += bw
		}
		bit := at * 8
		for ; i < len(d); i++ {
			w := *(*uint64)(unsafe.Add(p, bit>>3))
			d[i] = T(base + int64(w>>(bit&7)&mask))
			bit += bw
		}
	}
	for i := nf; i < len(dst); i++ {
		dst[i] = T(base + int64(readBits(src, uint(i)*bw, bw)))
	}
}

// unpackFORSelected is unpackFOR for the values whose bit is set in sel
// alone; the others are left as they were.
func unpackFORSelected(dst []int64, src []byte, bw uint, base int64, sel []byte) {
	if bw == 0 {
		for i := range dst {
			dst[i] = base
		}
		return
	}
	nf := fastCount(len(dst), len(src), bw)
	var mask uint64 = 1<<bw - 1
	if bw == 64 {
		mask = ^uint64(0)
	}
	for w := 0; w*64 < len(dst); w++ {
		var word uint64
		for b := 0; b < 8 && w*8+b < len(sel); b++ {
			word |= uint64(sel[w*8+b]) << (8 * b)
		}
		for ; word != 0; word &= word - 1 {
			i := w*64 + bits.TrailingZeros64(word)
			if i >= len(dst) {
				break
			}
			bit := uint(i) * bw
			if i < nf {
				v := binary.LittleEndian.Uint64(src[bit>>3:])
				dst[i] = base + int64(v>>(bit&7)&mask)
			} else {
				dst[i] = base + int64(readBits(src, bit, bw))
			}
		}
	}
}

// unpackDelta decodes a delta run: dst[0] = first and dst[i] = dst[i-1] +
// minDelta + value i-1 (wrapping), for len(dst)-1 packed values of bw bits in
// src. It returns the last value before truncation to T, so callers can check
// that a sum did not overflow T.
func unpackDelta[T integer](dst []T, src []byte, bw uint, first, minDelta int64) int64 {
	if len(dst) == 0 {
		return first
	}
	dst[0] = T(first)
	acc := first
	d := dst[1:]
	if bw == 0 {
		for i := range d {
			acc += minDelta
			d[i] = T(acc)
		}
		return acc
	}
	nf := fastCount(len(d), len(src), bw)
	if nf > 0 {
		p := unsafe.Pointer(unsafe.SliceData(src))
		mask := uint64(1)<<bw - 1
		df := d[:nf]
		i := 0
		// Eight values take bw bytes, so each of eight sits at the same
		// byte and bit of them (see rangeFOR).
		o1, o2, o3, o4, o5, o6, o7 := bw>>3, 2*bw>>3, 3*bw>>3, 4*bw>>3, 5*bw>>3, 6*bw>>3, 7*bw>>3
		s1, s2, s3, s4, s5, s6, s7 := bw&7, 2*bw&7, 3*bw&7, 4*bw&7, 5*bw&7, 6*bw&7, 7*bw&7
		at := uint(0)
		for ; i+8 <= len(df); i += 8 {
			q := unsafe.Add(p, at)
			d8 := df[i : i+8 : i+8]
			acc += minDelta + int64(*(*uint64)(q)&mask)
			d8[0] = T(acc)
			acc += minDelta + int64(*(*uint64)(unsafe.Add(q, o1))>>s1&mask)
			d8[1] = T(acc)
			acc += minDelta + int64(*(*uint64)(unsafe.Add(q, o2))>>s2&mask)
			d8[2] = T(acc)
			acc += minDelta + int64(*(*uint64)(unsafe.Add(q, o3))>>s3&mask)
			d8[3] = T(acc)
			acc += minDelta + int64(*(*uint64)(unsafe.Add(q, o4))>>s4&mask)
			d8[4] = T(acc)
			acc += minDelta + int64(*(*uint64)(unsafe.Add(q, o5))>>s5&mask)
			d8[5] = T(acc)
			acc += minDelta + int64(*(*uint64)(unsafe.Add(q, o6))>>s6&mask)
			d8[6] = T(acc)
			acc += minDelta + int64(*(*uint64)(unsafe.Add(q, o7))>>s7&mask)
			d8[7] = T(acc)
			at += bw
		}
		bit := at * 8
		for ; i < len(df); i++ {
			w := *(*uint64)(unsafe.Add(p, bit>>3))
			acc += minDelta + int64(w>>(bit&7)&mask)
			df[i] = T(acc)
			bit += bw
		}
	}
	for i := nf; i < len(d); i++ {
		acc += minDelta + int64(readBits(src, uint(i)*bw, bw))
		d[i] = T(acc)
	}
	return acc
}

// Kernels on packed frame-of-reference values, which a scan that only
// compares or sums a page runs without writing the values out: decoding a
// page into int64s and reading them back costs more memory traffic than the
// comparison or the addition. Value i is base + packed value i (wrapping).

func b2u(b bool) uint8 {
	var x uint8
	if b {
		x = 1
	}
	return x
}

// stageLen is about how many packed bytes rangeFOR copies at a time before
// it tests them (rangeFORStaged).
const stageLen = 8 << 10

// rangeFOR ORs into t bit i of each of the n values of src in [a, a+span]
// (outside it when negate) and into f the bits of the others, eight rows to
// a byte; bits past n are left alone. src holds packedLen(n, bw) bytes.
func rangeFOR(src []byte, n int, bw uint, base, a int64, span uint64, negate bool, t, f []byte) {
	if len(src) > 2*stageLen && bw > 0 && bw <= 56 {
		rangeFORStaged(src, n, bw, base, a, span, negate, t, f)
		return
	}
	var flip byte
	if negate {
		flip = 0xff
	}
	// value - a, wrapping, is off + packed value.
	off := uint64(base - a)
	i := 0
	if bw == 0 {
		tb := (0 - b2u(off <= span)) ^ flip
		for ; i+8 <= n; i += 8 {
			t[i>>3] |= tb
			f[i>>3] |= ^tb
		}
	} else if nf := fastCount(n, len(src), bw); nf >= 8 {
		p := unsafe.Pointer(unsafe.SliceData(src))
		mask := uint64(1)<<bw - 1
		// Eight values take bw bytes: value j of every eight starts at
		// the same byte and bit of them, worked out once here rather
		// than per value.
		o1, o2, o3, o4, o5, o6, o7 := bw>>3, 2*bw>>3, 3*bw>>3, 4*bw>>3, 5*bw>>3, 6*bw>>3, 7*bw>>3
		s1, s2, s3, s4, s5, s6, s7 := bw&7, 2*bw&7, 3*bw&7, 4*bw&7, 5*bw&7, 6*bw&7, 7*bw&7
		in := func(q unsafe.Pointer, o, s uint) byte {
			return b2u(off+(*(*uint64)(unsafe.Add(q, o))>>s&mask) <= span)
		}
		// Eight independent loads per byte, as unpackFOR keeps four.
		at := uint(0) // the byte of value i
		for ; i+8 <= nf; i += 8 {
			q := unsafe.Add(p, at)
			tb := b2u(off+(*(*uint64)(q)&mask) <= span) | in(q, o1, s1)<<1 | in(q, o2, s2)<<2 | in(q, o3, s3)<<3 |
				in(q, o4, s4)<<4 | in(q, o5, s5)<<5 | in(q, o6, s6)<<6 | in(q, o7, s7)<<7
			at += bw
			tb ^= flip
			t[i>>3] |= tb
			f[i>>3] |= ^tb
		}
	}
	for ; i < n; i += 8 {
		k := min(8, n-i)
		var tb byte
		for j := range k {
			var u uint64
			if bw > 0 {
				u = readBits(src, uint(i+j)*bw, bw)
			}
			tb |= b2u(off+u <= span) << j
		}
		mask := byte(1)<<k - 1
		tb = (tb ^ flip) & mask
		t[i>>3] |= tb
		f[i>>3] |= ^tb & mask
	}
}

// rangeFORStaged is rangeFOR of a long src, copied a few KiB at a time into
// a buffer of its own where each part is tested. A scan's src is a page of
// a mapped file that the page cache holds but the CPU's caches do not: the
// eight overlapping loads rangeFOR issues per byte of t then wait on memory
// one miss after another, where a copy streams the same bytes in at full
// speed and the tests hit L1. On a 43-bit TTL column read cold, mapped or
// not, that halves the time; a src already in L2 pays about a fifth more
// for the copy, which a scan of a table seldom sees.
func rangeFORStaged(src []byte, n int, bw uint, base, a int64, span uint64, negate bool, t, f []byte) {
	// Eight values take bw bytes, so a part of g groups of eight starts
	// at a byte and a byte of t; the 8 bytes past it let rangeFOR's fast
	// loop read its last value with one load.
	g := max(1, stageLen/int(bw))
	var buf [stageLen + 64]byte
	for v := 0; v < n; v += 8 * g {
		part, k := stagePart(buf[:], src, v, n, g, bw)
		rangeFOR(part, k, bw, base, a, span, negate, t[v/8:], f[v/8:])
	}
}

// stagePart copies into buf the packed values of the part of g groups of
// eight that starts at value v of n (bw bits each), with the 8 bytes past
// it, and returns the copy and the part's number of values.
func stagePart(buf, src []byte, v, n, g int, bw uint) ([]byte, int) {
	off := v / 8 * int(bw)
	end := min(len(src), off+g*int(bw)+8)
	return buf[:copy(buf, src[off:end])], min(8*g, n-v)
}

// rangeFOR2 is rangeFOR of two ranges from the same a, each value unpacked
// once: it ORs into t the bits of the values in [a, a+span] and into t2
// those of the values in [a, a+span2]; bits past n are left alone.
func rangeFOR2(src []byte, n int, bw uint, base, a int64, span, span2 uint64, t, t2 []byte) {
	if len(src) > 2*stageLen && bw > 0 && bw <= 56 {
		// Staged as rangeFORStaged is, for the same reason.
		g := max(1, stageLen/int(bw))
		var buf [stageLen + 64]byte
		for v := 0; v < n; v += 8 * g {
			part, k := stagePart(buf[:], src, v, n, g, bw)
			rangeFOR2(part, k, bw, base, a, span, span2, t[v/8:], t2[v/8:])
		}
		return
	}
	off := uint64(base - a)
	i := 0
	if bw == 0 {
		b1, b2 := 0-b2u(off <= span), 0-b2u(off <= span2)
		for ; i+8 <= n; i += 8 {
			t[i>>3] |= b1
			t2[i>>3] |= b2
		}
	} else if nf := fastCount(n, len(src), bw); nf >= 8 {
		p := unsafe.Pointer(unsafe.SliceData(src))
		mask := uint64(1)<<bw - 1
		// Unrolled as rangeFOR is: eight independent loads per byte.
		o1, o2, o3, o4, o5, o6, o7 := bw>>3, 2*bw>>3, 3*bw>>3, 4*bw>>3, 5*bw>>3, 6*bw>>3, 7*bw>>3
		s1, s2, s3, s4, s5, s6, s7 := bw&7, 2*bw&7, 3*bw&7, 4*bw&7, 5*bw&7, 6*bw&7, 7*bw&7
		val := func(q unsafe.Pointer, o, s uint) uint64 {
			return off + (*(*uint64)(unsafe.Add(q, o)) >> s & mask)
		}
		at := uint(0)
		for ; i+8 <= nf; i += 8 {
			q := unsafe.Add(p, at)
			x0, x1, x2, x3 := off+(*(*uint64)(q)&mask), val(q, o1, s1), val(q, o2, s2), val(q, o3, s3)
			x4, x5, x6, x7 := val(q, o4, s4), val(q, o5, s5), val(q, o6, s6), val(q, o7, s7)
			t[i>>3] |= b2u(x0 <= span) | b2u(x1 <= span)<<1 | b2u(x2 <= span)<<2 | b2u(x3 <= span)<<3 |
				b2u(x4 <= span)<<4 | b2u(x5 <= span)<<5 | b2u(x6 <= span)<<6 | b2u(x7 <= span)<<7
			t2[i>>3] |= b2u(x0 <= span2) | b2u(x1 <= span2)<<1 | b2u(x2 <= span2)<<2 | b2u(x3 <= span2)<<3 |
				b2u(x4 <= span2)<<4 | b2u(x5 <= span2)<<5 | b2u(x6 <= span2)<<6 | b2u(x7 <= span2)<<7
			at += bw
		}
	}
	for ; i < n; i += 8 {
		k := min(8, n-i)
		var tb, tb2 byte
		for j := range k {
			var u uint64
			if bw > 0 {
				u = readBits(src, uint(i+j)*bw, bw)
			}
			tb |= b2u(off+u <= span) << j
			tb2 |= b2u(off+u <= span2) << j
		}
		t[i>>3] |= tb
		t2[i>>3] |= tb2
	}
}

// sumFOR returns the exact sum of the values of src whose bit is set in sel
// (nil: all n), and how many there are. src holds packedLen(n, bw) bytes.
func sumFOR(src []byte, n int, bw uint, base int64, sel []byte) (Int128, int) {
	var sum Int128
	k := 0
	i := 0
	if bw > 0 && (bw == 64 || uint64(math.MaxInt64)-uint64(base) < 1<<bw-1) {
		// base + a packed value may wrap (the writer never packs so, but
		// the sum must be of the values as they decode): value by value.
		for ; i < n; i++ {
			if sel == nil || sel[i>>3]>>(i&7)&1 != 0 {
				sum.Add(base + int64(readBits(src, uint(i)*bw, bw)))
				k++
			}
		}
		return sum, k
	}
	if bw == 0 {
		if sel == nil {
			k = n
		} else {
			k = popcountBits(sel, n)
		}
		i = n
	} else if nf := fastCount(n, len(src), bw); nf >= 64 {
		p := unsafe.Pointer(unsafe.SliceData(src))
		mask := uint64(1)<<bw - 1
		for ; i+64 <= nf; i += 64 {
			w := ^uint64(0)
			if sel != nil {
				w = binary.LittleEndian.Uint64(sel[i>>3:])
			}
			// 64 values of at most 56 bits cannot overflow.
			s, c := maskedWordFOR(p, uint(i)*bw, bw, mask, w)
			sum.addUint64(s)
			k += c
		}
	}
	for ; i < n; i++ {
		if sel != nil && sel[i>>3]>>(i&7)&1 == 0 {
			continue
		}
		var u uint64
		if bw > 0 {
			u = readBits(src, uint(i)*bw, bw)
		}
		sum.addUint64(u)
		k++
	}
	sum.AddInt128(mulInt128(base, int64(k)))
	return sum, k
}

// maskedWordFOR adds the packed values of the 64 rows from bit whose bit is
// set in w, as query's masked sums do: a full word in a plain loop, a
// sparse one by its set bits, others through a mask instead of a branch.
func maskedWordFOR(p unsafe.Pointer, bit, bw uint, mask, w uint64) (uint64, int) {
	var s0, s1 uint64
	switch {
	case w == 0:
		return 0, 0
	case w == ^uint64(0):
		var s2, s3 uint64
		for range 16 {
			b0, b1, b2, b3 := bit, bit+bw, bit+2*bw, bit+3*bw
			s0 += *(*uint64)(unsafe.Add(p, b0>>3)) >> (b0 & 7) & mask
			s1 += *(*uint64)(unsafe.Add(p, b1>>3)) >> (b1 & 7) & mask
			s2 += *(*uint64)(unsafe.Add(p, b2>>3)) >> (b2 & 7) & mask
			s3 += *(*uint64)(unsafe.Add(p, b3>>3)) >> (b3 & 7) & mask
			bit += 4 * bw
		}
		return (s0 + s1) + (s2 + s3), 64
	case bits.OnesCount64(w) <= 16:
		c := bits.OnesCount64(w)
		for ; w != 0; w &= w - 1 {
			b := bit + uint(bits.TrailingZeros64(w))*bw
			s0 += *(*uint64)(unsafe.Add(p, b>>3)) >> (b & 7) & mask
		}
		return s0, c
	}
	c := bits.OnesCount64(w)
	for j := 0; j < 64; j += 2 {
		b0, b1 := bit, bit+bw
		v0 := *(*uint64)(unsafe.Add(p, b0>>3)) >> (b0 & 7) & mask
		v1 := *(*uint64)(unsafe.Add(p, b1>>3)) >> (b1 & 7) & mask
		s0 += v0 & -(w & 1)
		s1 += v1 & -(w >> 1 & 1)
		w >>= 2
		bit += 2 * bw
	}
	return s0 + s1, c
}

// popcountBits counts the set bits of the first n bits of bm.
func popcountBits(bm []byte, n int) int {
	c := 0
	i := 0
	for ; i+64 <= n; i += 64 {
		c += bits.OnesCount64(binary.LittleEndian.Uint64(bm[i>>3:]))
	}
	for ; i+8 <= n; i += 8 {
		c += bits.OnesCount8(bm[i>>3])
	}
	if n%8 != 0 {
		c += bits.OnesCount8(bm[n>>3] & (byte(1)<<(n%8) - 1))
	}
	return c
}

// rangeFORSelected is rangeFOR for the rows whose bit is set in sel alone,
// visited by their set bits: the bits of the other rows are left alone.
func rangeFORSelected(src []byte, n int, bw uint, base, a int64, span uint64, negate bool, sel, t, f []byte) {
	off := uint64(base - a)
	nf := fastCount(n, len(src), bw)
	var p unsafe.Pointer
	if len(src) > 0 {
		p = unsafe.Pointer(unsafe.SliceData(src))
	}
	var mask uint64
	if bw > 0 {
		mask = 1<<bw - 1
	}
	var flip uint64
	if negate {
		flip = ^uint64(0)
	}
	i0 := 0
	if bw > 0 && nf >= 64 {
		// The words whose rows all lie where one load reads a value: a
		// loop with no case to pick per row keeps what it needs in
		// registers, and the fewer instructions a row takes, the more
		// rows' loads (each a likely cache miss) are in flight at once.
		mask := uint64(1)<<bw - 1
		for ; i0+64 <= nf; i0 += 64 {
			w := binary.LittleEndian.Uint64(sel[i0>>3:])
			if w == 0 {
				continue
			}
			var tw uint64
			bit0 := uint(i0) * bw
			for x := w; x != 0; x &= x - 1 {
				j := uint(bits.TrailingZeros64(x))
				b := bit0 + j*bw
				u := *(*uint64)(unsafe.Add(p, b>>3)) >> (b & 7) & mask
				tw |= uint64(b2u(off+u <= span)) << j
			}
			tw = (tw ^ flip) & w
			tb, fb := t[i0>>3:i0>>3+8], f[i0>>3:i0>>3+8]
			binary.LittleEndian.PutUint64(tb, binary.LittleEndian.Uint64(tb)|tw)
			binary.LittleEndian.PutUint64(fb, binary.LittleEndian.Uint64(fb)|^tw&w)
		}
	}
	for ; i0 < n; i0 += 64 {
		m := min(64, n-i0)
		w := gather.Word(sel, i0, m)
		if w == 0 {
			continue
		}
		var tw uint64
		for x := w; x != 0; x &= x - 1 {
			j := uint(bits.TrailingZeros64(x))
			i := i0 + int(j)
			var u uint64
			switch {
			case bw == 0:
			case i < nf:
				b := uint(i) * bw
				u = *(*uint64)(unsafe.Add(p, b>>3)) >> (b & 7) & mask
			default:
				u = readBits(src, uint(i)*bw, bw)
			}
			tw |= uint64(b2u(off+u <= span)) << j
		}
		tw = (tw ^ flip) & w
		orBits(t, i0, m, tw)
		orBits(f, i0, m, ^tw&w)
	}
}

// orBits ORs the m bits of w into bm from row i0 (a multiple of 64).
func orBits(bm []byte, i0, m int, w uint64) {
	if m == 64 {
		binary.LittleEndian.PutUint64(bm[i0>>3:], binary.LittleEndian.Uint64(bm[i0>>3:])|w)
		return
	}
	for k := 0; k*8 < m; k++ {
		bm[i0>>3+k] |= byte(w >> (8 * k))
	}
}
