package table

import (
	"context"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
)

// preparer turns the batches a caller writes into the physical batches
// segments store: every table column in order (defaults filled in), the
// derived or converted __TTL__ last, rows sorted by key.
type preparer struct {
	mem    memory.Allocator
	def    *Definition
	policy ttlcol.Policy
	opts   WriteOptions
	phys   *arrow.Schema
	// rowBase numbers rows across the batches of one write, for messages.
	rowBase int64
	// deleteSign is the value of the merge-on-read delete sign of every
	// row written.
	deleteSign bool
}

func newPreparer(mem memory.Allocator, def *Definition, pol ttlcol.Policy, o WriteOptions) *preparer {
	return newPreparerPhys(mem, def, pol, o, physicalSchema(def, pol))
}

// newPreparerPhys is newPreparer given physicalSchema(def, pol).
func newPreparerPhys(mem memory.Allocator, def *Definition, pol ttlcol.Policy, o WriteOptions, phys *arrow.Schema) *preparer {
	return &preparer{mem: mem, def: def, policy: pol, opts: o, phys: phys}
}

func invalid(format string, args ...any) error {
	return rowttl.Errorf(rowttl.ErrInvalidArgument, format, args...)
}

func (p *preparer) prepare(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	defer func() { p.rowBase += rec.NumRows() }()
	n := int(rec.NumRows())
	cols := p.def.Schema.Columns
	// A small write pays for every allocation here once per row: tables
	// of a usual width keep the positions on the stack.
	var givenBuf [32]int
	given := givenBuf[:0]
	if len(cols) > len(givenBuf) {
		given = make([]int, 0, len(cols))
	}
	given = given[:len(cols)]
	for i := range given {
		given[i] = -1
	}
	ttlGiven := -1
	sc := rec.Schema()
	for i := range sc.NumFields() {
		// Field, not Fields: Fields copies the list.
		f := sc.Field(i)
		if schema.IsTTLName(f.Name) {
			if p.policy.Mode == ttlcol.NoTTL {
				return nil, invalid("unknown column %s: the table has no row TTL", f.Name)
			}
			if ttlGiven >= 0 {
				return nil, invalid("column %s is given twice", f.Name)
			}
			ttlGiven = i
			continue
		}
		j := p.def.Schema.Index(f.Name)
		if j < 0 {
			return nil, rowttl.Errorf(rowttl.ErrNotFound, "unknown column %s", f.Name)
		}
		if given[j] >= 0 {
			return nil, invalid("column %s is given twice", f.Name)
		}
		given[j] = i
	}

	// NewRecordBatch copies the list: a table of a usual width keeps it on
	// the stack, as given.
	var outBuf [34]arrow.Array
	out := outBuf[:0]
	if len(cols)+2 > len(outBuf) {
		out = make([]arrow.Array, 0, len(cols)+2)
	}
	release := func() {
		for _, a := range out {
			a.Release()
		}
	}
	for j := range cols {
		c := &cols[j]
		var a arrow.Array
		var err error
		if given[j] >= 0 {
			a, err = p.convert(ctx, c, p.phys.Field(j).Type, rec.Column(given[j]))
		} else {
			a, err = p.defaultColumn(c, n)
		}
		if err != nil {
			release()
			return nil, err
		}
		out = append(out, a)
		if err := p.check(c, a); err != nil {
			release()
			return nil, err
		}
	}
	switch p.policy.Mode {
	case ttlcol.SourceMode:
		if ttlGiven >= 0 {
			release()
			return nil, invalid("%s is derived from %s in this table and cannot be written", schema.TTLColumn, p.policy.SourceColumn)
		}
		src := p.def.Schema.Index(p.policy.SourceColumn)
		a, err := p.deriveTTL(out[src])
		if err != nil {
			release()
			return nil, err
		}
		out = append(out, a)
	case ttlcol.DirectMode:
		var a arrow.Array
		var err error
		if ttlGiven >= 0 {
			a, err = p.directTTL(rec.Column(ttlGiven))
		} else {
			a = schema.ConstArray(p.mem, arrow.PrimitiveTypes.Int64, schema.Null, n)
		}
		if err != nil {
			release()
			return nil, err
		}
		out = append(out, a)
	}
	if p.def.Model == schema.UniqueMOR {
		sign := schema.IntVal(0)
		if p.deleteSign {
			sign = schema.IntVal(1)
		}
		out = append(out, schema.ConstArray(p.mem, arrow.FixedWidthTypes.Boolean, sign, n))
	}
	batch := array.NewRecordBatch(p.phys, out, int64(n))
	release()
	sorted, err := sortByKey(ctx, p.mem, batch, p.def.Schema.KeyCount)
	batch.Release()
	return sorted, err
}

// convert casts a given column to the column's type, want (its field's
// in the physical schema: c.Type.Arrow() would build the type anew, once
// per column of every write).
func (p *preparer) convert(ctx context.Context, c *schema.Column, want arrow.DataType, a arrow.Array) (arrow.Array, error) {
	if arrow.TypeEqual(a.DataType(), want) {
		a.Retain()
		return a, nil
	}
	if a.DataType().ID() == arrow.NULL {
		return schema.ConstArray(p.mem, want, schema.Null, a.Len()), nil
	}
	out, err := compute.CastArray(compute.WithAllocator(ctx, p.mem), a, compute.SafeCastOptions(want))
	if err != nil {
		return nil, invalid("column %s: cannot store %s as %s (%v)", c.Name, a.DataType(), c.Type, err)
	}
	return out, nil
}

func (p *preparer) defaultColumn(c *schema.Column, n int) (arrow.Array, error) {
	var v schema.Value
	switch c.DefaultKind {
	case schema.DefaultLiteral:
		var err error
		if v, err = schema.ParseLiteral(c.Type, c.Default); err != nil {
			return nil, invalid("column %s: bad default: %w", c.Name, err)
		}
	case schema.DefaultCurrentTimestamp:
		v = nowValue(c.Type, p.opts.Now, p.opts.TimeZone)
	case schema.NoDefault:
		if !c.Nullable {
			return nil, invalid("column %s is NOT NULL and has no default, so it must be given", c.Name)
		}
	}
	return schema.ConstArray(p.mem, c.Type.Arrow(), v, n), nil
}

// nowValue renders the statement's now in a column type.
func nowValue(t schema.Type, now time.Time, loc *time.Location) schema.Value {
	local := now.In(loc)
	switch t.Kind {
	case schema.Date:
		return schema.IntVal(int64(schema.DateFromTime(local)))
	case schema.Datetime:
		return schema.IntVal(schema.TruncateMicros(schema.DatetimeFromTime(local), t.Precision))
	case schema.TimestampTZ:
		return schema.IntVal(schema.TruncateMicros(now.UnixMicro(), t.Precision))
	case schema.BigInt:
		return schema.IntVal(now.UnixMicro())
	}
	return schema.BytesVal([]byte(local.Format("2006-01-02 15:04:05")))
}

// check enforces NOT NULL, character lengths and DECIMAL precisions (an
// Arrow decimal array of the column's type may still hold wider values).
func (p *preparer) check(c *schema.Column, a arrow.Array) error {
	if d, ok := a.(*array.Decimal128); ok && c.Type.Kind == schema.Decimal {
		for i := 0; i < d.Len(); i++ {
			if d.IsValid(i) && !decimal.Fits(d.Value(i), c.Type.Precision) {
				return invalid("row %d: column %s: value %s is out of range for %s", p.rowBase+int64(i)+1, c.Name,
					decimal.Format(d.Value(i), c.Type.Scale), c.Type)
			}
		}
	}
	if !c.Nullable && a.NullN() > 0 {
		for i := 0; i < a.Len(); i++ {
			if a.IsNull(i) {
				return invalid("row %d: column %s is NOT NULL", p.rowBase+int64(i)+1, c.Name)
			}
		}
	}
	if (c.Type.Kind == schema.Varchar || c.Type.Kind == schema.Char) && c.Type.Length > 0 {
		s := a.(*array.String)
		for i := 0; i < s.Len(); i++ {
			if s.IsValid(i) && len(s.Value(i)) > c.Type.Length {
				return invalid("row %d: value of column %s is longer than %s", p.rowBase+int64(i)+1, c.Name, c.Type)
			}
		}
	}
	return nil
}

// deriveTTL computes the stored __TTL__ of source mode from the source
// column: its instant, checked so that adding the retention cannot overflow.
func (p *preparer) deriveTTL(src arrow.Array) (arrow.Array, error) {
	b := array.NewInt64Builder(p.mem)
	defer b.Release()
	b.Reserve(src.Len())
	off := p.policy.ZoneOffset
	for i := 0; i < src.Len(); i++ {
		if src.IsNull(i) {
			b.AppendNull()
			continue
		}
		var us int64
		ok := true
		switch a := src.(type) {
		case *array.Date32:
			us, ok = ttlcol.DateToMicros(int32(a.Value(i)), off)
		case *array.Timestamp:
			if a.DataType().(*arrow.TimestampType).TimeZone != "" {
				us = int64(a.Value(i))
			} else {
				us, ok = ttlcol.DatetimeToMicros(int64(a.Value(i)), off)
			}
		default:
			return nil, invalid("row ttl source %s has unsupported type %s", p.policy.SourceColumn, src.DataType())
		}
		if ok {
			_, ok = p.policy.Expiration(us)
		}
		if !ok {
			return nil, invalid("row %d: column %s: the value plus the retention of %d seconds overflows the expiration range", p.rowBase+int64(i)+1, p.policy.SourceColumn, p.policy.Retention)
		}
		b.Append(us)
	}
	return b.NewArray(), nil
}

// directTTL converts a written __TTL__ column of direct mode to epoch µs.
func (p *preparer) directTTL(a arrow.Array) (arrow.Array, error) {
	if x, ok := a.(*array.Int64); ok {
		// Already epoch µs, as stored: shared, not copied.
		x.Retain()
		return x, nil
	}
	loc := p.opts.TimeZone
	b := array.NewInt64Builder(p.mem)
	defer b.Release()
	b.Reserve(a.Len())
	switch x := a.(type) {
	case *array.Null:
		b.AppendNulls(a.Len())
		return b.NewArray(), nil
	case *array.String, *array.LargeString, *array.Binary:
		return nil, invalid("a text value cannot be written into %s; CAST it explicitly to DATETIME or BIGINT", schema.TTLColumn)
	case *array.Float32, *array.Float64, *array.Decimal128:
		return nil, invalid("%s takes an integer number of epoch microseconds or a date/time, not %s", schema.TTLColumn, a.DataType())
	case *array.Timestamp:
		tt := x.DataType().(*arrow.TimestampType)
		if tt.TimeZone == "" && tt.Unit == arrow.Nanosecond {
			return nil, invalid("TIMESTAMP_NS values cannot be written into %s", schema.TTLColumn)
		}
		for i := 0; i < x.Len(); i++ {
			if x.IsNull(i) {
				b.AppendNull()
				continue
			}
			v := int64(x.Value(i))
			us, ok := toMicros(v, tt.Unit)
			if !ok {
				return nil, invalid("row %d: %s value overflows", p.rowBase+int64(i)+1, schema.TTLColumn)
			}
			if tt.TimeZone == "" {
				// A DATETIME is a wall clock: read it in the write's zone.
				us = schema.WallToInstant(us, loc)
			}
			b.Append(us)
		}
		return b.NewArray(), nil
	case *array.Date32:
		for i := 0; i < x.Len(); i++ {
			if x.IsNull(i) {
				b.AppendNull()
				continue
			}
			b.Append(schema.WallToInstant(int64(x.Value(i))*86400_000_000, loc))
		}
		return b.NewArray(), nil
	case *array.Int8, *array.Int16, *array.Int32, *array.Int64, *array.Uint8, *array.Uint16, *array.Uint32:
		for i := 0; i < a.Len(); i++ {
			v := schema.ValueAt(a, i)
			if v.IsNull() {
				b.AppendNull()
			} else {
				b.Append(v.Int)
			}
		}
		return b.NewArray(), nil
	case *array.Uint64:
		for i := 0; i < x.Len(); i++ {
			if x.IsNull(i) {
				b.AppendNull()
			} else if x.Value(i) > math.MaxInt64 {
				return nil, invalid("row %d: %s value %d overflows int64 microseconds", p.rowBase+int64(i)+1, schema.TTLColumn, x.Value(i))
			} else {
				b.Append(int64(x.Value(i)))
			}
		}
		return b.NewArray(), nil
	}
	return nil, invalid("%s cannot be written from %s", schema.TTLColumn, a.DataType())
}

func toMicros(v int64, unit arrow.TimeUnit) (int64, bool) {
	switch unit {
	case arrow.Second:
		if v > math.MaxInt64/1000000 || v < math.MinInt64/1000000 {
			return 0, false
		}
		return v * 1000000, true
	case arrow.Millisecond:
		if v > math.MaxInt64/1000 || v < math.MinInt64/1000 {
			return 0, false
		}
		return v * 1000, true
	case arrow.Nanosecond:
		return v / 1000, true
	}
	return v, true
}
