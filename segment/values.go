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
	v.Ints, v.Floats = nil, nil
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
