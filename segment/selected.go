package segment

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
)

// ReadPageSelected is ReadPage for a string or binary column, keeping only
// the rows whose bit is set in sel (a bitmap of the page's rows): the array
// holds those rows, in order. A point lookup then copies the values it
// returns, not the page's megabyte of them, and a plain page (the form of
// values too distinct for a dictionary) is not copied at all on the way:
// its values are read where the chunk was decompressed. Checks and errors
// are those of ReadPage.
func (r *Reader) ReadPageSelected(mem memory.Allocator, col, p int, sel []byte) (arrow.Array, error) {
	if col < 0 || col >= len(r.f.cols) || p < 0 || p >= len(r.f.pages) || r.f.cols[col].kind != kindBytes {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "segment %s: ReadPageSelected of column %d page %d: not a string or binary column in range", r.name, col, p)
	}
	n := r.f.pages[p]
	if len(sel) < (n+7)/8 {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "segment %s: ReadPageSelected of page %d: a selection of %d bytes for %d rows", r.name, p, len(sel), n)
	}
	c := r.f.chunk(col, p)
	sc := scratchPool.Get().(*scratch)
	defer sc.release()
	var body []byte
	var need func(off, end int) error
	var err error
	if c.comp == compLZ4 && c.enc == encPlain {
		// Decompress the parts that hold the validity, the lengths and
		// the values selected: the checksum covers the rest.
		body, need, err = r.lz4Chunk(c, sc)
	} else {
		body, err = r.readChunk(c, sc)
	}
	if err != nil {
		return nil, r.pageError(col, p, err)
	}
	arr, err := selectStrings(mem, r.f.cols[col], n, int(c.zone.NullCount), c.enc, body, need, sel, sc)
	if err != nil {
		return nil, r.corrupt(fmt.Sprintf("page %d column %d (%s)", p, col, r.f.schema.Field(col).Name), err)
	}
	return arr, nil
}

// lz4Chunk reads and verifies chunk c, compressed as LZ4 parts, and returns
// its body, decoded only where need has been called; both live in sc.
func (r *Reader) lz4Chunk(c *chunkMeta, sc *scratch) ([]byte, func(off, end int) error, error) {
	raw, err := r.chunkBytes(c, &sc.raw, true)
	if err != nil {
		return nil, nil, err
	}
	block, err := r.checkChunk(raw, c)
	if err != nil {
		return nil, nil, err
	}
	sc.body = grow(sc.body, c.bodyLen)
	if err := sc.lz4.init(sc.body, block, c.bodyLen); err != nil {
		return nil, nil, err
	}
	return sc.lz4.body, sc.lz4.need, nil
}

// selectStrings decodes the rows of sel of a string chunk body of n rows.
// The structure of the body is checked as decodeChunk checks it. need, when
// not nil, must be called for a range of the body before it is read: a
// plain page then decodes only its validity, its lengths and the values
// selected.
func selectStrings(mem memory.Allocator, ct colType, n, nulls int, enc encoding, body []byte, need func(off, end int) error, sel []byte, sc *scratch) (arrow.Array, error) {
	if need == nil || enc != encPlain {
		if need != nil {
			if err := need(0, len(body)); err != nil {
				return nil, err
			}
		}
		need = func(int, int) error { return nil }
	}
	start := len(body) // of the rest of the body
	var valid []byte   // nil: no NULL
	switch {
	case nulls == 0:
	case nulls == n:
		valid = make([]byte, (n+7)/8)
	default:
		if err := need(0, min((n+7)/8, len(body))); err != nil {
			return nil, err
		}
		bm, rest, err := splitValidity(body, n, nulls)
		if err != nil {
			return nil, err
		}
		valid, body = bm, rest
	}
	sc.sel32 = grow(sc.sel32, n+1)
	offs := sc.sel32
	var vals []byte
	if enc == encPlain {
		// The lengths: a uvarint and a bit width, then n packed values.
		at := start - len(body)
		if err := need(at, min(start, at+binary.MaxVarintLen64+1)); err != nil {
			return nil, err
		}
		d := decoder{src: body}
		d.uvarint()
		bw := uint(d.byte())
		if d.err == nil && bw <= 64 {
			end := start - len(d.src) + packedLen(n, bw)
			if err := need(at, min(start, end)); err != nil {
				return nil, err
			}
		}
		var err error
		if vals, err = plainStrings(offs, body); err != nil {
			return nil, err
		}
		valsAt := start - len(vals)
		var nerr error
		eachSelected(sel, n, func(i int) {
			if nerr == nil {
				nerr = need(valsAt+int(offs[i]), valsAt+int(offs[i+1]))
			}
		})
		if nerr != nil {
			return nil, nerr
		}
	} else {
		err := decodeStrings(offs, enc, body, func(size int) []byte {
			sc.strs = grow(sc.strs, size+16)
			return sc.strs[: size : size+16]
		}, sc)
		if err != nil {
			return nil, err
		}
		vals = sc.strs[:offs[n]]
	}

	k, size, outNulls := 0, 0, 0
	eachSelected(sel, n, func(i int) {
		k++
		if valid != nil && !bitutil.BitIsSet(valid, i) {
			outNulls++
			return
		}
		size += int(offs[i+1] - offs[i])
	})
	var vb *memory.Buffer
	if outNulls > 0 {
		vb = newBuffer(mem, (k+7)/8)
		clear(vb.Bytes())
	}
	ob := newBuffer(mem, (k+1)*4)
	db := newBuffer(mem, size)
	outOffs := castSlice[int32](ob.Bytes(), k+1)
	data := db.Bytes()
	j, at := 0, int32(0)
	outOffs[0] = 0
	eachSelected(sel, n, func(i int) {
		if valid == nil || bitutil.BitIsSet(valid, i) {
			at += int32(copy(data[at:], vals[offs[i]:offs[i+1]]))
			if vb != nil {
				bitutil.SetBit(vb.Bytes(), j)
			}
		}
		j++
		outOffs[j] = at
	})
	out := array.NewData(ct.dt, k, []*memory.Buffer{vb, ob, db}, nil, outNulls, 0)
	for _, b := range []*memory.Buffer{vb, ob, db} {
		if b != nil {
			b.Release()
		}
	}
	arr := array.MakeFromData(out)
	out.Release()
	return arr, nil
}

// eachSelected calls fn for every row below n whose bit is set in sel, in
// order.
func eachSelected(sel []byte, n int, fn func(i int)) {
	for w := 0; w*64 < n && w*8 < len(sel); w++ {
		var word uint64
		for b := 0; b < 8 && w*8+b < len(sel); b++ {
			word |= uint64(sel[w*8+b]) << (8 * b)
		}
		for ; word != 0; word &= word - 1 {
			i := w*64 + bits.TrailingZeros64(word)
			if i >= n {
				return
			}
			fn(i)
		}
	}
}
