package schema

import (
	"bytes"
	"cmp"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/rowttl/rowttl/decimal"
)

// ValueKind is the physical class of a Value.
type ValueKind uint8

const (
	// NullValue is SQL NULL.
	NullValue ValueKind = iota
	// IntValue holds every integer-like type: integers, BOOLEAN (0/1),
	// DATE (days since the epoch), DATETIME/TIMESTAMPTZ (microseconds),
	// TIMESTAMP_NS (nanoseconds).
	IntValue
	// FloatValue holds FLOAT and DOUBLE.
	FloatValue
	// BytesValue holds the character types.
	BytesValue
	// DecimalValue holds DECIMAL(p,s): the 128-bit unscaled integer, its
	// low 64 bits in Int and its high 64 bits in Hi; the scale is the
	// type's.
	DecimalValue
)

// Value is a physical scalar: what zone maps store and filters compare. Its
// meaning depends on the column type it belongs to.
type Value struct {
	Kind  ValueKind
	Int   int64
	Hi    int64
	Float float64
	Bytes []byte
}

// Null is the NULL value.
var Null = Value{}

// IntVal returns an integer-like value.
func IntVal(v int64) Value { return Value{Kind: IntValue, Int: v} }

// FloatVal returns a floating-point value.
func FloatVal(v float64) Value { return Value{Kind: FloatValue, Float: v} }

// BytesVal returns a character value.
func BytesVal(v []byte) Value { return Value{Kind: BytesValue, Bytes: v} }

// DecimalVal returns a DECIMAL value from its unscaled integer.
func DecimalVal(n decimal.Num) Value {
	return Value{Kind: DecimalValue, Int: int64(n.LowBits()), Hi: n.HighBits()}
}

// Decimal returns the unscaled integer of a DecimalValue (and of an
// IntValue, read as an unscaled integer).
func (v Value) Decimal() decimal.Num {
	if v.Kind == IntValue {
		return decimal128.FromI64(v.Int)
	}
	return decimal128.New(v.Hi, uint64(v.Int))
}

// IsNull reports SQL NULL.
func (v Value) IsNull() bool { return v.Kind == NullValue }

// Compare orders two non-null values of the same kind (DECIMAL values of
// one scale). Values of different kinds compare by kind, which only
// matters for malformed input.
func (v Value) Compare(o Value) int {
	if v.Kind != o.Kind {
		if v.Kind == IntValue && o.Kind == FloatValue {
			return cmp.Compare(float64(v.Int), o.Float)
		}
		if v.Kind == FloatValue && o.Kind == IntValue {
			return cmp.Compare(v.Float, float64(o.Int))
		}
		return cmp.Compare(v.Kind, o.Kind)
	}
	switch v.Kind {
	case IntValue:
		return cmp.Compare(v.Int, o.Int)
	case FloatValue:
		return cmp.Compare(v.Float, o.Float)
	case BytesValue:
		return bytes.Compare(v.Bytes, o.Bytes)
	case DecimalValue:
		return v.Decimal().Cmp(o.Decimal())
	}
	return 0
}

func (v Value) String() string {
	switch v.Kind {
	case IntValue:
		return fmt.Sprint(v.Int)
	case FloatValue:
		return fmt.Sprint(v.Float)
	case BytesValue:
		return fmt.Sprintf("%q", v.Bytes)
	case DecimalValue:
		// Unscaled: a Value does not know its scale.
		return decimal.Format(v.Decimal(), 0)
	}
	return "NULL"
}
