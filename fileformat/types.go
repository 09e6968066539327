package fileformat

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// TypeKey is the Arrow field metadata key carrying a column's rowttl type
// (schema.Type.String) in the files this package writes.
const TypeKey = "rowttl.type"

// TTLColumn is the name of the expiration column an export adds: epoch
// microseconds, NULL for a row that never expires.
const TTLColumn = schema.TTLColumn

// Field returns the file field of a column: its Arrow type, nullability,
// and its rowttl type in the metadata.
func Field(c schema.Column) arrow.Field {
	return arrow.Field{
		Name:     c.Name,
		Type:     c.Type.Arrow(),
		Nullable: c.Nullable,
		Metadata: arrow.NewMetadata([]string{TypeKey}, []string{c.Type.String()}),
	}
}

// TTLField returns the field of the exported expiration column.
func TTLField() arrow.Field {
	return arrow.Field{
		Name: TTLColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true,
		Metadata: arrow.NewMetadata([]string{TypeKey}, []string{schema.BigIntType.String()}),
	}
}

// FileSchema returns the schema of a file holding cols, and the expiration
// column after them when withTTL is set.
func FileSchema(cols []schema.Column, withTTL bool) *arrow.Schema {
	fs := make([]arrow.Field, 0, len(cols)+1)
	for _, c := range cols {
		fs = append(fs, Field(c))
	}
	if withTTL {
		fs = append(fs, TTLField())
	}
	return arrow.NewSchema(fs, nil)
}

// FileType returns the rowttl type a file column reads as: the type its
// metadata names when that type has the column's Arrow type, else the
// natural type of the Arrow type (see the package documentation). A type
// rowttl has no counterpart for (lists, structs, maps, intervals...) is an
// error wrapping rowttl.ErrNotSupported that names the column.
func FileType(f arrow.Field) (schema.Type, error) {
	if s, ok := f.Metadata.GetValue(TypeKey); ok {
		if t, err := ParseType(s); err == nil && arrow.TypeEqual(t.Arrow(), valueType(f.Type)) {
			return t, nil
		}
	}
	t, ok := naturalType(valueType(f.Type))
	if !ok {
		return schema.Type{}, rowttl.Errorf(rowttl.ErrNotSupported, "column %s: the file's type %s has no rowttl counterpart", f.Name, f.Type)
	}
	return t, nil
}

// valueType looks through a dictionary to the type of its values.
func valueType(dt arrow.DataType) arrow.DataType {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		return d.ValueType
	}
	return dt
}

func naturalType(dt arrow.DataType) (schema.Type, bool) {
	switch dt.ID() {
	case arrow.BOOL:
		return schema.BooleanType, true
	case arrow.INT8:
		return schema.TinyIntType, true
	case arrow.INT16, arrow.UINT8:
		return schema.SmallIntType, true
	case arrow.INT32, arrow.UINT16:
		return schema.IntType, true
	case arrow.INT64, arrow.UINT32, arrow.UINT64:
		return schema.BigIntType, true
	case arrow.FLOAT32:
		return schema.FloatType, true
	case arrow.FLOAT64:
		return schema.DoubleType, true
	case arrow.DECIMAL128:
		d := dt.(*arrow.Decimal128Type)
		return schema.Type{Kind: schema.Decimal, Precision: int(d.Precision), Scale: int(d.Scale)}, true
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return schema.StringType, true
	case arrow.DATE32:
		return schema.DateType, true
	case arrow.DATE64:
		return schema.DatetimeType(3), true
	case arrow.TIMESTAMP:
		ts := dt.(*arrow.TimestampType)
		if ts.TimeZone != "" {
			return schema.TimestampTZType(6), true
		}
		if ts.Unit == arrow.Nanosecond {
			return schema.Type{Kind: schema.TimestampNS}, true
		}
		return schema.DatetimeType(6), true
	}
	return schema.Type{}, false
}

// ParseType reads a type as schema.Type.String writes it: NAME or
// NAME(a) or NAME(a,b).
func ParseType(s string) (schema.Type, error) {
	name, args := strings.TrimSpace(s), ""
	if i := strings.IndexByte(name, '('); i >= 0 {
		if !strings.HasSuffix(name, ")") {
			return schema.Type{}, fmt.Errorf("bad type %q", s)
		}
		name, args = strings.TrimSpace(name[:i]), name[i+1:len(name)-1]
	}
	k, ok := schema.ParseKind(name)
	if !ok {
		return schema.Type{}, fmt.Errorf("bad type %q", s)
	}
	t := schema.Type{Kind: k}
	var nums []int
	if args != "" {
		for _, a := range strings.Split(args, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(a))
			if err != nil {
				return schema.Type{}, fmt.Errorf("bad type %q", s)
			}
			nums = append(nums, n)
		}
	}
	switch {
	case len(nums) == 0:
		if k == schema.Decimal {
			return schema.Type{}, fmt.Errorf("bad type %q", s)
		}
	case len(nums) == 1 && (k == schema.Datetime || k == schema.TimestampTZ):
		t.Precision = nums[0]
	case len(nums) == 1 && (k == schema.Varchar || k == schema.Char):
		t.Length = nums[0]
	case len(nums) == 2 && k == schema.Decimal:
		t.Precision, t.Scale = nums[0], nums[1]
	default:
		return schema.Type{}, fmt.Errorf("bad type %q", s)
	}
	if err := t.Validate(); err != nil {
		return schema.Type{}, err
	}
	return t, nil
}
