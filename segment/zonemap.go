package segment

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/rowttl/rowttl/schema"
)

// MaxBoundLen is the longest string bound a zone map keeps. A page or column
// whose smallest or largest string is longer has no bounds at all (Min and
// Max are both schema.Null): a shortened bound would need care from every
// reader, so none is stored.
const MaxBoundLen = 64

// ZoneMap holds statistics of one column over one page or over the whole
// segment.
type ZoneMap struct {
	Rows      int64
	NullCount int64
	// Min and Max of the non-null values as physical scalars (schema.Value):
	// IntValue for bool (0/1), int8..int64, date32 (days) and timestamps (raw
	// unit value); FloatValue for float32/64 (NaN ignored); BytesValue for
	// strings and binary. Both are schema.Null when there is no non-null
	// value, when a string bound is longer than MaxBoundLen bytes, and for
	// decimal128 columns, whose files carry no bounds (the query layer
	// compares their values row by row).
	Min, Max schema.Value
	// HasSum says that Sum holds the exact sum of the non-null values of a
	// page: of an integer-like column, or of a DOUBLE page stored
	// decimal-scaled, in units of 10^-SumScale. Scans that sum a page
	// whose rows are all live read nothing else. Whole-segment zone maps,
	// pages of other columns and pages of files before format 3 have none.
	HasSum   bool
	Sum      Int128
	SumScale int
}

// HasBounds reports whether Min and Max are set.
func (z ZoneMap) HasBounds() bool { return !z.Min.IsNull() }

func (z ZoneMap) String() string {
	s := fmt.Sprintf("rows=%d nulls=%d", z.Rows, z.NullCount)
	if z.HasBounds() {
		s += fmt.Sprintf(" min=%s max=%s", z.Min, z.Max)
	}
	if z.HasSum {
		s += fmt.Sprintf(" sum=%s", z.Sum)
		if z.SumScale > 0 {
			s += fmt.Sprintf("e-%d", z.SumScale)
		}
	}
	return s
}

// zoneAcc accumulates the statistics of a page, and merges pages into a
// column. It keeps string bounds at full length, so that a column whose
// long strings sit in the middle of the order still gets bounds.
type zoneAcc struct {
	rows, nulls int64
	has         bool // a non-null (non-NaN) value was seen
	imin, imax  int64
	fmin, fmax  float64
	bmin, bmax  []byte // owned
}

func (z *zoneAcc) addInt(v int64) {
	if !z.has {
		z.has, z.imin, z.imax = true, v, v
		return
	}
	z.imin = min(z.imin, v)
	z.imax = max(z.imax, v)
}

func (z *zoneAcc) addFloat(v float64) {
	if v != v { // NaN
		return
	}
	if !z.has {
		z.has, z.fmin, z.fmax = true, v, v
		return
	}
	if v < z.fmin {
		z.fmin = v
	}
	if v > z.fmax {
		z.fmax = v
	}
}

// addBytes records v; v is copied only when it becomes a bound.
func (z *zoneAcc) addBytes(v []byte) {
	if !z.has {
		z.has = true
		z.bmin = append(z.bmin[:0], v...)
		z.bmax = append(z.bmax[:0], v...)
		return
	}
	if bytes.Compare(v, z.bmin) < 0 {
		z.bmin = append(z.bmin[:0], v...)
	}
	if bytes.Compare(v, z.bmax) > 0 {
		z.bmax = append(z.bmax[:0], v...)
	}
}

// merge folds the page statistics o into z.
func (z *zoneAcc) merge(o *zoneAcc, kind physKind) {
	z.rows += o.rows
	z.nulls += o.nulls
	if !o.has {
		return
	}
	switch kind {
	case kindBool, kindInt:
		z.addInt(o.imin)
		z.addInt(o.imax)
	case kindFloat:
		z.addFloat(o.fmin)
		z.addFloat(o.fmax)
	case kindBytes:
		z.addBytes(o.bmin)
		z.addBytes(o.bmax)
	}
}

func (z *zoneAcc) reset() {
	bmin, bmax := z.bmin[:0], z.bmax[:0]
	*z = zoneAcc{bmin: bmin, bmax: bmax}
}

// zoneMap returns the finished statistics; string bounds are copied.
func (z *zoneAcc) zoneMap(kind physKind) ZoneMap {
	m := ZoneMap{Rows: z.rows, NullCount: z.nulls}
	if !z.has {
		return m
	}
	switch kind {
	case kindBool, kindInt:
		m.Min, m.Max = schema.IntVal(z.imin), schema.IntVal(z.imax)
	case kindFloat:
		m.Min, m.Max = schema.FloatVal(z.fmin), schema.FloatVal(z.fmax)
	case kindBytes:
		if len(z.bmin) <= MaxBoundLen && len(z.bmax) <= MaxBoundLen {
			m.Min = schema.BytesVal(bytes.Clone(z.bmin))
			m.Max = schema.BytesVal(bytes.Clone(z.bmax))
			if m.Min.Bytes == nil {
				m.Min.Bytes = []byte{}
			}
			if m.Max.Bytes == nil {
				m.Max.Bytes = []byte{}
			}
		}
	}
	return m
}

// sumField says whether a page zone map stores a sum (format 3): pages of
// integer-like columns, and DOUBLE pages stored decimal-scaled.
func sumField(kind physKind, enc encoding) bool { return kind == kindInt || enc == encScaled }

// marshalZone appends the zone map of a column of the given kind; sum says
// that it is a page zone map with a sum field. Rows is not stored: the
// footer knows it.
func marshalZone(dst []byte, z ZoneMap, kind physKind, sum bool) []byte {
	dst = marshalBounds(dst, z, kind)
	if sum {
		dst = binary.AppendVarint(dst, z.Sum.Hi)
		dst = binary.AppendUvarint(dst, z.Sum.Lo)
		if kind == kindFloat {
			dst = append(dst, byte(z.SumScale))
		}
	}
	return dst
}

func marshalBounds(dst []byte, z ZoneMap, kind physKind) []byte {
	dst = binary.AppendUvarint(dst, uint64(z.NullCount))
	if !z.HasBounds() {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	for _, v := range [2]schema.Value{z.Min, z.Max} {
		switch kind {
		case kindBool, kindInt:
			dst = binary.AppendVarint(dst, v.Int)
		case kindFloat:
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.Float))
		case kindBytes:
			dst = binary.AppendUvarint(dst, uint64(len(v.Bytes)))
			dst = append(dst, v.Bytes...)
		}
	}
	return dst
}

var errBadZone = errors.New("bad zone map")

// unmarshalZone reads a zone map written by marshalZone for rows rows, and
// checks that it is consistent.
func unmarshalZone(d *decoder, c colType, rows int64, sum bool) ZoneMap {
	z := unmarshalBounds(d, c, rows)
	if !sum || d.err != nil {
		return z
	}
	z.HasSum = true
	z.Sum.Hi = d.varint()
	z.Sum.Lo = d.uvarint()
	if c.kind == kindFloat {
		z.SumScale = int(d.byte())
	}
	if z.SumScale > maxScaleExp || (z.NullCount == rows && z.Sum != (Int128{})) {
		d.fail(errBadZone)
	}
	return z
}

func unmarshalBounds(d *decoder, c colType, rows int64) ZoneMap {
	z := ZoneMap{Rows: rows}
	nulls := d.uvarint()
	flag := d.byte()
	if d.err != nil {
		return z
	}
	if nulls > uint64(rows) || flag > 1 {
		d.fail(errBadZone)
		return z
	}
	z.NullCount = int64(nulls)
	if flag == 0 {
		// Only strings (long bounds), floats (all NaN) and decimals can lack
		// bounds while having non-null values.
		if z.NullCount < rows && (c.kind == kindBool || c.kind == kindInt) {
			d.fail(errBadZone)
		}
		return z
	}
	if z.NullCount == rows || !c.hasBounds() {
		d.fail(errBadZone)
		return z
	}
	var vals [2]schema.Value
	for i := range vals {
		switch c.kind {
		case kindBool, kindInt:
			vals[i] = schema.IntVal(d.varint())
		case kindFloat:
			f := math.Float64frombits(d.uint64())
			if f != f {
				d.fail(errBadZone)
			}
			vals[i] = schema.FloatVal(f)
		case kindBytes:
			n := d.uvarint()
			if n > MaxBoundLen {
				d.fail(errBadZone)
				return z
			}
			vals[i] = schema.BytesVal(bytes.Clone(d.bytes(int(n))))
			if vals[i].Bytes == nil {
				vals[i].Bytes = []byte{}
			}
		}
	}
	if d.err != nil {
		return z
	}
	if vals[0].Compare(vals[1]) > 0 || (c.kind == kindBool && (vals[0].Int < 0 || vals[1].Int > 1)) {
		d.fail(errBadZone)
		return z
	}
	z.Min, z.Max = vals[0], vals[1]
	return z
}
