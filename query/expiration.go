package query

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
)

// Expirations turns the __TTL__ column of a scan that shows hidden columns
// into each row's expiration, int64 epoch microseconds (NULL: never
// expires), which is what a direct-mode table stores and what carries the
// expirations of rows out of the engine: in direct mode the values as they
// are; in source mode the source instant (read back from the source
// column's type, shown, at the policy's zone) plus the policy's current
// retention. It returns a new reference.
func Expirations(mem memory.Allocator, pol ttlcol.Policy, shown schema.Type, ttl arrow.Array) (arrow.Array, error) {
	if pol.Mode != ttlcol.SourceMode {
		if _, ok := ttl.(*array.Int64); !ok {
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "%s column of type %s, not int64", schema.TTLColumn, ttl.DataType())
		}
		ttl.Retain()
		return ttl, nil
	}
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.Reserve(ttl.Len())
	for i := 0; i < ttl.Len(); i++ {
		if ttl.IsNull(i) {
			b.AppendNull()
			continue
		}
		var inst int64
		ok := true
		switch a := ttl.(type) {
		case *array.Date32:
			inst, ok = ttlcol.DateToMicros(int32(a.Value(i)), pol.ZoneOffset)
		case *array.Timestamp:
			inst = int64(a.Value(i))
			if shown.Kind == schema.Datetime {
				inst, ok = ttlcol.DatetimeToMicros(inst, pol.ZoneOffset)
			}
		default:
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "%s column of type %s, not the source column's %s", schema.TTLColumn, ttl.DataType(), shown)
		}
		exp, ok2 := pol.Expiration(inst)
		if !ok || !ok2 {
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "%s", fmt.Sprintf("row ttl expiration overflows int64 microseconds: source value of row %d + retention %d seconds", i, pol.Retention))
		}
		b.Append(exp)
	}
	return b.NewArray(), nil
}
