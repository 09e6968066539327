package query

import (
	"bytes"
	"encoding/binary"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/segment"
)

// likeKind is the form of a Like pattern.
type likeKind uint8

const (
	likeEqual likeKind = iota
	likePrefix
	likeSuffix
	likeContains
)

type boundLike struct {
	slot   int
	kind   likeKind
	needle []byte
	rare   int  // the index of the needle's rarest byte (index)
	any    bool // a pattern of only %: every value matches
	// word and wordMask hold a needle of at most 8 bytes as a
	// little-endian word and the mask of its bytes, so that a candidate
	// is checked with one load rather than a call to bytes.Equal.
	word, wordMask uint64
}

func bindLike(slot int, pattern string) (bound, error) {
	core := strings.Trim(pattern, "%")
	if strings.ContainsAny(pattern, "_\\") || strings.Contains(core, "%") {
		return nil, rowttl.Errorf(rowttl.ErrNotSupported, "LIKE '%s' in a scan filter: only 'abc', 'abc%%', '%%abc' and '%%abc%%' are", pattern)
	}
	lead, trail := strings.HasPrefix(pattern, "%"), strings.HasSuffix(pattern, "%")
	b := &boundLike{slot: slot, needle: []byte(core), rare: rarest([]byte(core)), any: core == "" && (lead || trail)}
	if m := len(core); m > 0 && m <= 8 {
		var w [8]byte
		copy(w[:], core)
		b.word = binary.LittleEndian.Uint64(w[:])
		b.wordMask = ^uint64(0) >> (64 - 8*m)
	}
	switch {
	case lead && trail:
		b.kind = likeContains
	case lead:
		b.kind = likeSuffix
	case trail:
		b.kind = likePrefix
	default:
		b.kind = likeEqual
	}
	return b, nil
}

func (b *boundLike) slots(add func(int)) { add(b.slot) }

// index returns the first position at or after from where the needle
// starts in data, or -1. It scans (bytes.IndexByte, vectorised) for the
// needle's rarest byte by rareRank rather than its first: the first byte of
// a word is often a common letter, and every false candidate costs a call.
func (b *boundLike) index(data []byte, from int) int {
	k, c, m := b.rare, b.needle[b.rare], len(b.needle)
	for from+m <= len(data) {
		i := bytes.IndexByte(data[from+k:len(data)-m+k+1], c)
		if i < 0 {
			return -1
		}
		start := from + i
		if b.wordMask != 0 && start+8 <= len(data) {
			if binary.LittleEndian.Uint64(data[start:])&b.wordMask == b.word {
				return start
			}
		} else if bytes.Equal(data[start:start+m], b.needle) {
			return start
		}
		from = start + 1
	}
	return -1
}

// rowOf returns the row of byte hit, the first row at or after r whose
// end offset is past hit (offs holds the values' n+1 offsets, and hit lies
// before offs[n]). It guesses the row from perByte (rows per byte, in
// 2^-20 units); a guess past the row is corrected by a binary search back
// to r, one short of it by walking on, so that skewed value lengths cost no
// more than the walk from r would.
func rowOf(offs []int32, r, hit, perByte int) int {
	g := r + (hit-int(offs[r]))*perByte>>20
	if last := len(offs) - 2; g > last {
		g = last
	}
	if g > r && int(offs[g]) > hit {
		// The row lies in [r, g).
		lo, hi := r, g-1
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if int(offs[m+1]) > hit {
				hi = m
			} else {
				lo = m + 1
			}
		}
		return lo
	}
	if g > r {
		r = g
	}
	for int(offs[r+1]) <= hit {
		r++
	}
	return r
}

// rareRank orders bytes by how common they are in text (lower is rarer):
// the space, then letters by their English frequency, lower case before
// upper case, then digits; every other byte ranks 0.
var rareRank = func() (r [256]uint8) {
	const common = "etaoinshrdlcumwfgypbvkjxqz"
	for i, c := range []byte(common) {
		r[c] = uint8(100 + len(common) - i)
		r[c-'a'+'A'] = uint8(50 + len(common) - i)
	}
	for c := '0'; c <= '9'; c++ {
		r[c] = 40
	}
	r[' '] = 255
	return r
}()

// rarest returns the index of the needle's rarest byte by rareRank.
func rarest(needle []byte) int {
	k := 0
	for i, c := range needle {
		if rareRank[c] < rareRank[needle[k]] {
			k = i
		}
	}
	return k
}

// may: string zone maps bound the values, but only an equality or a
// prefix could use them; they are not worth it for what LIKE is used for.
func (b *boundLike) may(st func(int) segment.ZoneMap, want bool) bool {
	z := st(b.slot)
	return z.NullCount < z.Rows
}

// eval of a contains pattern searches the page's value bytes as one run
// (bytes.Index, vectorised), not value by value: a hit inside row r marks
// it and the search goes on from row r+1; a hit across the end of row r
// cannot be followed by one inside it, so it goes on from row r+1 too.
func (b *boundLike) eval(col func(int) arrow.Array, n int, t, f []byte) {
	a := col(b.slot)
	s, ok := a.(*array.String)
	if !ok {
		// A type the scan never decodes a string column into.
		return
	}
	switch {
	case b.any:
		setAll(t, n)
	case b.kind == likeContains:
		offs := s.ValueOffsets() // n+1 offsets into data
		data := s.ValueBytes()
		base := int(offs[0])
		// perByte is rows per value byte in 2^-20 units: the row of a
		// hit is guessed from the bytes before it, so that finding it
		// costs a comparison or two rather than a walk past every row
		// between two hits.
		perByte := 0
		if len(data) > 0 {
			perByte = (n << 20) / len(data)
		}
		r := 0
		for pos := 0; pos < len(data); {
			k := b.index(data, pos)
			if k < 0 {
				break
			}
			hit := k + base
			r = rowOf(offs, r, hit, perByte)
			if hit+len(b.needle) <= int(offs[r+1]) {
				bitutil.SetBit(t, r)
			}
			pos = int(offs[r+1]) - base
		}
	default:
		needle := string(b.needle)
		for i := range n {
			v := s.Value(i)
			var m bool
			switch b.kind {
			case likeEqual:
				m = v == needle
			case likePrefix:
				m = strings.HasPrefix(v, needle)
			case likeSuffix:
				m = strings.HasSuffix(v, needle)
			}
			if m {
				bitutil.SetBit(t, i)
			}
		}
	}
	// Every value that does not match is FALSE; a NULL is neither.
	for i := range (n + 7) / 8 {
		f[i] = ^t[i]
	}
	clearTail(f, n)
	if a.NullN() > 0 {
		for i := range n {
			if a.IsNull(i) {
				bitutil.ClearBit(t, i)
				bitutil.ClearBit(f, i)
			}
		}
	}
}
