package schema

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/decimal"
)

// Kind is a SQL column type of SPEC §1.
type Kind uint8

// The column kinds. Their numeric values are stored in manifests: append
// only, never renumber.
const (
	Invalid Kind = iota
	Boolean
	TinyInt
	SmallInt
	Int
	BigInt
	Float
	Double
	Decimal
	String
	Varchar
	Char
	Date
	Datetime
	TimestampTZ
	TimestampNS
)

var kindNames = [...]string{
	Invalid:     "INVALID",
	Boolean:     "BOOLEAN",
	TinyInt:     "TINYINT",
	SmallInt:    "SMALLINT",
	Int:         "INT",
	BigInt:      "BIGINT",
	Float:       "FLOAT",
	Double:      "DOUBLE",
	Decimal:     "DECIMAL",
	String:      "STRING",
	Varchar:     "VARCHAR",
	Char:        "CHAR",
	Date:        "DATE",
	Datetime:    "DATETIME",
	TimestampTZ: "TIMESTAMPTZ",
	TimestampNS: "TIMESTAMP_NS",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Type is a column type with its parameters.
type Type struct {
	Kind Kind `json:"kind"`
	// Precision is p of DATETIME(p) and TIMESTAMPTZ(p) (0..6) and of
	// DECIMAL(p,s).
	Precision int `json:"precision,omitempty"`
	// Scale is s of DECIMAL(p,s).
	Scale int `json:"scale,omitempty"`
	// Length is n of VARCHAR(n) and CHAR(n); 0 means unbounded (VARCHAR
	// written without a length). SQL refuses a length of 0 written by a
	// user, as Doris does.
	Length int `json:"length,omitempty"`
}

// Doris's limits of the character types: VARCHAR(n) takes 1 ≤ n ≤
// MaxVarcharLength, CHAR(n) 1 ≤ n ≤ MaxCharLength (both counted in
// characters). STRING has no length; Doris documents MaxStringBytes as the
// most a STRING value may hold.
const (
	MaxVarcharLength = 65533
	MaxCharLength    = 255
	MaxStringBytes   = 2147483643
)

// DecimalType returns DECIMAL(p,s).
func DecimalType(p, s int) Type { return Type{Kind: Decimal, Precision: p, Scale: s} }

// Decimal returns the precision and scale of a DECIMAL type.
func (t Type) Decimal() decimal.Type { return decimal.Type{Precision: t.Precision, Scale: t.Scale} }

// Common types, for callers building schemas in Go.
var (
	BooleanType  = Type{Kind: Boolean}
	TinyIntType  = Type{Kind: TinyInt}
	SmallIntType = Type{Kind: SmallInt}
	IntType      = Type{Kind: Int}
	BigIntType   = Type{Kind: BigInt}
	FloatType    = Type{Kind: Float}
	DoubleType   = Type{Kind: Double}
	StringType   = Type{Kind: String}
	DateType     = Type{Kind: Date}
)

// DatetimeType returns DATETIME(p).
func DatetimeType(p int) Type { return Type{Kind: Datetime, Precision: p} }

// TimestampTZType returns TIMESTAMPTZ(p).
func TimestampTZType(p int) Type { return Type{Kind: TimestampTZ, Precision: p} }

// VarcharType returns VARCHAR(n).
func VarcharType(n int) Type { return Type{Kind: Varchar, Length: n} }

// String renders the type as SQL, as SHOW CREATE TABLE and DESC print it.
func (t Type) String() string {
	switch t.Kind {
	case Datetime, TimestampTZ:
		return fmt.Sprintf("%s(%d)", t.Kind, t.Precision)
	case Decimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale)
	case Varchar, Char:
		if t.Length > 0 {
			return fmt.Sprintf("%s(%d)", t.Kind, t.Length)
		}
		return t.Kind.String()
	}
	return t.Kind.String()
}

// Validate reports whether the type's parameters are in range.
func (t Type) Validate() error {
	switch t.Kind {
	case Datetime, TimestampTZ:
		if t.Precision < 0 || t.Precision > 6 {
			return rowttl.Errorf(rowttl.ErrInvalidSchema, "%s precision must be between 0 and 6, got %d", t.Kind, t.Precision)
		}
	case Decimal:
		if !t.Decimal().Valid() {
			return rowttl.Errorf(rowttl.ErrInvalidSchema, "invalid DECIMAL(%d,%d): precision must be between 1 and %d and scale between 0 and the precision",
				t.Precision, t.Scale, decimal.MaxPrecision)
		}
	case Varchar, Char:
		limit := MaxVarcharLength
		if t.Kind == Char {
			limit = MaxCharLength
		}
		if t.Length < 0 || t.Length > limit {
			// A negative length is how a parser reports a written 0.
			return rowttl.Errorf(rowttl.ErrInvalidSchema, "%s length must be between 1 and %d, got %d", t.Kind, limit, max(t.Length, 0))
		}
	case Invalid:
		return rowttl.Errorf(rowttl.ErrInvalidSchema, "invalid column type")
	}
	if int(t.Kind) >= len(kindNames) {
		return rowttl.Errorf(rowttl.ErrInvalidSchema, "unknown column type %d", t.Kind)
	}
	return nil
}

// IsInteger reports the integer kinds.
func (t Type) IsInteger() bool {
	switch t.Kind {
	case TinyInt, SmallInt, Int, BigInt:
		return true
	}
	return false
}

// IsString reports the character kinds.
func (t Type) IsString() bool {
	switch t.Kind {
	case String, Varchar, Char:
		return true
	}
	return false
}

// IsTemporal reports DATE, DATETIME, TIMESTAMPTZ and TIMESTAMP_NS.
func (t Type) IsTemporal() bool {
	switch t.Kind {
	case Date, Datetime, TimestampTZ, TimestampNS:
		return true
	}
	return false
}

// UTC is the time zone name Arrow carries for TIMESTAMPTZ columns.
const UTC = "UTC"

// Arrow returns the in-memory type of the column. DATETIME is a zone-less
// microsecond timestamp holding the wall clock; TIMESTAMPTZ is a microsecond
// instant marked UTC; DECIMAL is a 128-bit decimal.
func (t Type) Arrow() arrow.DataType {
	switch t.Kind {
	case Boolean:
		return arrow.FixedWidthTypes.Boolean
	case TinyInt:
		return arrow.PrimitiveTypes.Int8
	case SmallInt:
		return arrow.PrimitiveTypes.Int16
	case Int:
		return arrow.PrimitiveTypes.Int32
	case BigInt:
		return arrow.PrimitiveTypes.Int64
	case Float:
		return arrow.PrimitiveTypes.Float32
	case Double:
		return arrow.PrimitiveTypes.Float64
	case Decimal:
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}
	case String, Varchar, Char:
		return arrow.BinaryTypes.String
	case Date:
		return arrow.FixedWidthTypes.Date32
	case Datetime:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case TimestampTZ:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: UTC}
	case TimestampNS:
		return &arrow.TimestampType{Unit: arrow.Nanosecond}
	}
	return arrow.Null
}

// ParseKind maps a SQL type name (case-insensitive, aliases included) to a
// kind. DATETIMEV2 and DATEV2 are Doris aliases.
func ParseKind(name string) (Kind, bool) {
	switch strings.ToUpper(name) {
	case "BOOLEAN", "BOOL":
		return Boolean, true
	case "TINYINT":
		return TinyInt, true
	case "SMALLINT":
		return SmallInt, true
	case "INT", "INTEGER":
		return Int, true
	case "BIGINT":
		return BigInt, true
	case "FLOAT":
		return Float, true
	case "DOUBLE":
		return Double, true
	case "DECIMAL", "DECIMALV3":
		return Decimal, true
	case "STRING", "TEXT":
		return String, true
	case "VARCHAR":
		return Varchar, true
	case "CHAR":
		return Char, true
	case "DATE", "DATEV2":
		return Date, true
	case "DATETIME", "DATETIMEV2":
		return Datetime, true
	case "TIMESTAMPTZ":
		return TimestampTZ, true
	case "TIMESTAMP_NS":
		return TimestampNS, true
	}
	return Invalid, false
}
