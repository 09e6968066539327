package sql

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/schema"
)

// renderValue formats a value of type t as the result format of SPEC §4:
// NULL, true/false, integers, DOUBLE in the shortest text that reads back
// exactly (no exponent between 1e-6 and 1e16), DECIMAL with its scale,
// DATE as YYYY-MM-DD, DATETIME(p) with p fractional digits, TIMESTAMPTZ(p)
// as the session's wall clock followed by its UTC offset.
func renderValue(v schema.Value, t schema.Type, loc *time.Location) string {
	if v.IsNull() {
		return "NULL"
	}
	switch t.Kind {
	case schema.Boolean:
		if v.Int != 0 {
			return "true"
		}
		return "false"
	case schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt:
		return strconv.FormatInt(v.Int, 10)
	case schema.Float:
		return formatFloat(v.Float, 32)
	case schema.Double:
		return formatFloat(v.Float, 64)
	case schema.Decimal:
		return decimal.Format(v.Decimal(), t.Scale)
	case schema.String, schema.Varchar, schema.Char:
		return string(v.Bytes)
	case schema.Date:
		return schema.FormatDate(int32(v.Int))
	case schema.Datetime:
		return schema.FormatDatetime(v.Int, t.Precision)
	case schema.TimestampTZ:
		tm := time.UnixMicro(v.Int).In(loc)
		_, off := tm.Zone()
		return schema.FormatDatetime(schema.DatetimeFromTime(tm), t.Precision) + formatOffset(off)
	case schema.TimestampNS:
		us := floorDiv(v.Int, 1000)
		ns := v.Int - us*1000
		s := schema.FormatDatetime(us, 6)
		return s + fmt.Sprintf("%03d", ns)
	}
	// Values of an unknown static type (should not happen): best effort.
	switch v.Kind {
	case schema.IntValue:
		return strconv.FormatInt(v.Int, 10)
	case schema.FloatValue:
		return formatFloat(v.Float, 64)
	case schema.BytesValue:
		return string(v.Bytes)
	}
	return "NULL"
}

// formatFloat writes the shortest text that reads back to the same value,
// without an exponent for ordinary magnitudes.
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	a := math.Abs(f)
	if a == 0 || (a >= 1e-6 && a < 1e16) {
		return strconv.FormatFloat(f, 'f', -1, bits)
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// typeName is a type as DESC prints it.
func typeName(t schema.Type) string {
	if isNullType(t) {
		return "NULL"
	}
	return t.String()
}

// lowerTypeName is a type as SHOW CREATE TABLE prints it, Doris style.
func lowerTypeName(t schema.Type) string {
	return strings.ToLower(t.String())
}
