package segment

import "fmt"

// Values is one page of a numeric column decoded into buffers that the
// caller keeps from page to page. It serves scans that reduce rows (count,
// sum) rather than return them: they need neither Arrow arrays nor a fresh
// allocation per page, and decimal-scaled doubles stay integers, so a sum
// adds integers and divides once.
type Values struct {
	N int
	// Ints holds the values of a BIGINT column, or of a DOUBLE page stored
	// decimal-scaled: value i is then Ints[i] / 10^Scale exactly.
	Ints []int64
	// Floats holds the values of a DOUBLE page not stored scaled.
	Floats []float64
	// Scale is the decimal exponent of a scaled DOUBLE page, -1 otherwise.
	Scale int
	// Valid is the validity bitmap (bit i set: row i not NULL); nil when
	// the page has no NULL. Null slots of Ints and Floats hold any value.
	Valid []byte
	Nulls int

	ints   []int64
	floats []float64
	valid  []byte

	// pk is the page ReadPacked left packed (pk.src nil otherwise), and sc
	// the chunk it lives in, read into buffers v keeps.
	pk packedInts
	sc scratch
}

// packedInts is a frame-of-reference body: value i is base + packed value
// i of bw bits in src.
type packedInts struct {
	src  []byte
	bw   uint
	base int64
}

// ValuesOK reports whether ReadValues can decode column col: BIGINT,
// timestamp (in Ints, in the column's unit) and DOUBLE columns.
func (r *Reader) ValuesOK(col int) bool {
	id := r.f.cols[col].id
	return id == typeInt64 || id == typeFloat64 || id == typeTimestamp
}

// ReadValues decodes column col of page p into v, which must satisfy
// ValuesOK. With validityOnly it fills N, Valid and Nulls alone: what a
// scan needs of a __TTL__ page whose every expiration has passed. Checks
// and errors are those of ReadPage.
func (r *Reader) ReadValues(col, p int, v *Values, validityOnly bool) error {
	return r.readValues(col, p, v, validityOnly, nil)
}

// ReadSelected is ReadValues for the rows whose bit is set in sel (a bitmap
// of the page's rows): the other slots of Ints and Floats may hold
// anything. Frame-of-reference pages, the usual form of integers and
// decimal-scaled doubles, then decode only those rows, which pays when
// they are few.
func (r *Reader) ReadSelected(col, p int, v *Values, sel []byte) error {
	if len(sel) < (r.pageRows(p)+7)/8 {
		return fmt.Errorf("segment %s: ReadSelected of page %d: a selection of %d bytes for %d rows", r.name, p, len(sel), r.pageRows(p))
	}
	return r.readValues(col, p, v, false, sel)
}

// ReadPacked is ReadValues, except that a frame-of-reference page (the
// usual form of integers and decimal-scaled doubles) stays packed: Ints is
// nil and Packed true, for RangeBits and Sum to read the packed values
// without writing them out, and Unpack to decode them when they are needed
// after all. Other pages decode as ReadValues decodes them. The packed
// values live in buffers of v until its next read.
func (r *Reader) ReadPacked(col, p int, v *Values) error {
	if col < 0 || col >= len(r.f.cols) || p < 0 || p >= len(r.f.pages) || !r.ValuesOK(col) {
		return fmt.Errorf("segment %s: ReadPacked of column %d page %d: not a BIGINT, timestamp or DOUBLE column in range", r.name, col, p)
	}
	c := r.f.chunk(col, p)
	ct := r.f.cols[col]
	off := 0
	if ct.kind != kindInt {
		off = 2 // a scaled page opens with its exponent and inner encoding
	}
	if c.enc != encFOR && (ct.kind == kindInt || c.enc != encScaled) || c.zone.NullCount == int64(r.f.pages[p]) {
		return r.readValues(col, p, v, false, nil)
	}
	n := r.f.pages[p]
	v.N, v.Scale, v.Valid, v.Nulls = n, -1, nil, int(c.zone.NullCount)
	v.Ints, v.Floats, v.pk = nil, nil, packedInts{}
	body, err := r.readChunk(c, &v.sc)
	if err != nil {
		return r.pageError(col, p, err)
	}
	err = v.decodePacked(n, body, off)
	if err == nil && v.pk.src == nil {
		// A scaled page of another inner encoding.
		v.Valid, v.Scale = nil, -1
		err = v.decode(ct, n, c.enc, body, false, nil)
	}
	if err != nil {
		return r.corrupt(fmt.Sprintf("page %d column %d (%s)", p, col, r.f.schema.Field(col).Name), err)
	}
	return nil
}

// decodePacked checks the page header and keeps the packed values of a
// frame-of-reference body (after off bytes of scaled header), leaving
// v.pk.src nil when a scaled page holds another inner encoding.
func (v *Values) decodePacked(n int, body []byte, off int) error {
	if v.Nulls > 0 {
		bm, rest, err := splitValidity(body, n, v.Nulls)
		if err != nil {
			return err
		}
		v.valid = grow(v.valid, (n+7)/8)
		v.Valid = v.valid
		copy(v.Valid, bm)
		body = rest
	}
	if off > 0 {
		if len(body) < 2 {
			return errBodyLen
		}
		e := int(body[0])
		if e > maxScaleExp {
			return errValue
		}
		if encoding(body[1]) != encFOR {
			return nil
		}
		v.Scale = e
	}
	base, bw, packed, err := parseFOR(body[off:], n, 8)
	if err != nil {
		return err
	}
	if packed == nil {
		packed = []byte{}
	}
	v.pk = packedInts{src: packed, bw: bw, base: base}
	return nil
}

// Packed reports whether v holds a page ReadPacked left packed.
func (v *Values) Packed() bool { return v.pk.src != nil }

// At returns value i (in Ints' terms) of a packed page or of Ints: one
// value read by its bits, for a caller that wants a few rows' values
// without unpacking the page. A NULL row's slot holds any value.
func (v *Values) At(i int) int64 {
	if v.pk.src == nil {
		return v.Ints[i]
	}
	return v.pk.base + int64(readBits(v.pk.src, uint(i)*v.pk.bw, v.pk.bw))
}

// Unpack decodes a packed page into Ints; it does nothing to others.
func (v *Values) Unpack() {
	if v.pk.src == nil {
		return
	}
	v.ints = grow(v.ints, v.N)
	v.Ints = v.ints
	unpackFOR(v.Ints, v.pk.src, v.pk.bw, v.pk.base)
	v.pk = packedInts{}
}

// RangeBits ORs into t bit i of each row of a packed page whose value (in
// Ints' terms) lies in [a, a+span], or outside it when negate, and into f
// the bits of the other rows, NULL rows included, whatever their slots
// hold. With sel it answers for the rows whose bit is set in sel, visiting
// them alone when they are fewer than a fifth; the bits of the other rows are then
// unspecified. It panics on a page that is not packed.
func (v *Values) RangeBits(a int64, span uint64, negate bool, sel, t, f []byte) {
	if v.pk.src == nil {
		panic("segment: RangeBits of a page not packed")
	}
	// Visiting a selected row by its bit costs about what testing five
	// rows in a row does (BenchmarkPackedKernels).
	if sel != nil && popcountBits(sel, v.N)*5 < v.N {
		rangeFORSelected(v.pk.src, v.N, v.pk.bw, v.pk.base, a, span, negate, sel, t, f)
		return
	}
	rangeFOR(v.pk.src, v.N, v.pk.bw, v.pk.base, a, span, negate, t, f)
}

// RangeBits2 ORs into t bit i of each row of a packed page whose value lies
// in [a, a+span], and into t2 those in [a, a+span2], whatever a NULL row's
// slot holds: two RangeBits of every row, unpacking each value once. It
// panics on a page that is not packed.
func (v *Values) RangeBits2(a int64, span, span2 uint64, t, t2 []byte) {
	if v.pk.src == nil {
		panic("segment: RangeBits2 of a page not packed")
	}
	rangeFOR2(v.pk.src, v.N, v.pk.bw, v.pk.base, a, span, span2, t, t2)
}

// Sum returns the exact sum of the values (in Ints' terms) of the rows of
// a packed page whose bit is set in sel (nil: every row), which must leave
// out the NULL rows. It panics on a page that is not packed.
func (v *Values) Sum(sel []byte) Int128 {
	if v.pk.src == nil {
		panic("segment: Sum of a page not packed")
	}
	s, _ := sumFOR(v.pk.src, v.N, v.pk.bw, v.pk.base, sel)
	return s
}

func (r *Reader) pageRows(p int) int {
	if p < 0 || p >= len(r.f.pages) {
		return 0
	}
	return r.f.pages[p]
}

func (r *Reader) readValues(col, p int, v *Values, validityOnly bool, sel []byte) error {
	if col < 0 || col >= len(r.f.cols) || p < 0 || p >= len(r.f.pages) || !r.ValuesOK(col) {
		return fmt.Errorf("segment %s: ReadValues of column %d page %d: not a BIGINT, timestamp or DOUBLE column in range", r.name, col, p)
	}
	c := r.f.chunk(col, p)
	n := r.f.pages[p]
	v.N, v.Scale, v.Valid, v.Nulls = n, -1, nil, int(c.zone.NullCount)
	v.Ints, v.Floats, v.pk = nil, nil, packedInts{}
	sc := scratchPool.Get().(*scratch)
	defer sc.release()
	body, err := r.readChunk(c, sc)
	if err != nil {
		return r.pageError(col, p, err)
	}
	if err := v.decode(r.f.cols[col], n, c.enc, body, validityOnly, sel); err != nil {
		return r.corrupt(fmt.Sprintf("page %d column %d (%s)", p, col, r.f.schema.Field(col).Name), err)
	}
	return nil
}

func (v *Values) decode(ct colType, n int, enc encoding, body []byte, validityOnly bool, sel []byte) error {
	bl := (n + 7) / 8
	if v.Nulls > 0 {
		v.valid = grow(v.valid, bl)
		v.Valid = v.valid
		if v.Nulls == n {
			clear(v.Valid)
		} else {
			bm, rest, err := splitValidity(body, n, v.Nulls)
			if err != nil {
				return err
			}
			copy(v.Valid, bm)
			body = rest
		}
	}
	if validityOnly {
		return nil
	}
	if ct.kind == kindInt {
		v.ints = grow(v.ints, n)
		v.Ints = v.ints
		if sel != nil {
			return decodeSelected(v.Ints, enc, body, sel)
		}
		return decodeIntsInto(v.Ints, enc, body)
	}
	if enc == encScaled {
		if len(body) < 2 {
			return errBodyLen
		}
		e, inner := int(body[0]), encoding(body[1])
		if e > maxScaleExp {
			return errValue
		}
		v.ints = grow(v.ints, n)
		v.Ints, v.Scale = v.ints, e
		if sel != nil {
			return decodeSelected(v.Ints, inner, body[2:], sel)
		}
		return decodeIntsInto(v.Ints, inner, body[2:])
	}
	v.floats = grow(v.floats, n)
	v.Floats = v.floats
	return decodeFixed(asBytes(v.Floats), ct.width, enc, body)
}

// splitValidity checks the validity bitmap that opens the body of a chunk
// with some, but not all, values NULL, and returns it and the rest.
func splitValidity(body []byte, n, nulls int) (bm, rest []byte, err error) {
	bl := (n + 7) / 8
	if len(body) < bl {
		return nil, nil, errBodyLen
	}
	bm = body[:bl]
	if !bitmapTailOK(bm, n) {
		return nil, nil, errPadding
	}
	if popcount(bm) != n-nulls {
		return nil, nil, errNulls
	}
	return bm, body[bl:], nil
}
