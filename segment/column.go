package segment

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rowttl/rowttl"
)

// physKind is the physical class of a column: it decides the staging buffer,
// the encodings allowed and the kind of its zone map bounds.
type physKind uint8

const (
	kindBool    physKind = iota + 1
	kindInt              // int8..int64, date32, timestamp
	kindFloat            // float32, float64
	kindBytes            // string, binary
	kindDecimal          // decimal128, 16 bytes
)

// typeID is the column type as stored in the footer. Append only, never
// renumber.
type typeID uint8

const (
	typeBool       typeID = 1
	typeInt8       typeID = 2
	typeInt16      typeID = 3
	typeInt32      typeID = 4
	typeInt64      typeID = 5
	typeFloat32    typeID = 6
	typeFloat64    typeID = 7
	typeString     typeID = 8
	typeBinary     typeID = 9
	typeDate32     typeID = 10
	typeTimestamp  typeID = 11 // params: unit (1B), time zone (string)
	typeDecimal128 typeID = 12 // params: precision (uvarint), scale (varint)
)

// colType is what the encoders and decoders need to know about a column.
type colType struct {
	id    typeID
	kind  physKind
	width int // bytes per value for fixed-width kinds
	dt    arrow.DataType
}

// newColType maps an Arrow type to its physical description.
func newColType(dt arrow.DataType) (colType, error) {
	c := colType{dt: dt}
	switch t := dt.(type) {
	case *arrow.BooleanType:
		c.id, c.kind, c.width = typeBool, kindBool, 1
	case *arrow.Int8Type:
		c.id, c.kind, c.width = typeInt8, kindInt, 1
	case *arrow.Int16Type:
		c.id, c.kind, c.width = typeInt16, kindInt, 2
	case *arrow.Int32Type:
		c.id, c.kind, c.width = typeInt32, kindInt, 4
	case *arrow.Int64Type:
		c.id, c.kind, c.width = typeInt64, kindInt, 8
	case *arrow.Float32Type:
		c.id, c.kind, c.width = typeFloat32, kindFloat, 4
	case *arrow.Float64Type:
		c.id, c.kind, c.width = typeFloat64, kindFloat, 8
	case *arrow.StringType:
		c.id, c.kind = typeString, kindBytes
	case *arrow.BinaryType:
		c.id, c.kind = typeBinary, kindBytes
	case *arrow.Date32Type:
		c.id, c.kind, c.width = typeDate32, kindInt, 4
	case *arrow.TimestampType:
		if t.Unit > arrow.Nanosecond {
			return c, rowttl.Errorf(rowttl.ErrNotSupported, "segment: timestamp unit %d", t.Unit)
		}
		c.id, c.kind, c.width = typeTimestamp, kindInt, 8
	case *arrow.Decimal128Type:
		c.id, c.kind, c.width = typeDecimal128, kindDecimal, 16
	default:
		return c, rowttl.Errorf(rowttl.ErrNotSupported, "segment: column type %s", dt)
	}
	return c, nil
}

// encodingAllowed reports whether e is a valid encoding for the kind.
func (c colType) encodingAllowed(e encoding) bool {
	switch c.kind {
	case kindBool:
		return e == encBitmap || e == encConstant
	case kindInt:
		return e == encPlain || e == encConstant || e == encFOR || e == encDelta
	case kindFloat:
		return e == encPlain || e == encConstant || (e == encScaled && c.width == 8)
	case kindDecimal:
		return e == encPlain || e == encConstant
	case kindBytes:
		return e == encPlain || e == encConstant || e == encDict
	}
	return false
}

// hasBounds reports whether the zone maps of the kind carry min/max.
func (c colType) hasBounds() bool { return c.kind != kindDecimal }
