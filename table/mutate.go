package table

import (
	"context"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
)

// Matcher selects the rows an UPDATE or DELETE touches. Only rows alive at
// the statement's now are ever seen.
type Matcher struct {
	// Filter is applied first, on zone maps and rows; nil matches all.
	Filter query.Expr
	// Rows, when set, decides row by row on batches holding every user
	// column and __TTL__ (as shown); it returns a mask of the rows to keep.
	// The SQL layer evaluates WHERE clauses that Filter cannot express here.
	Rows func(rec arrow.RecordBatch) (*array.Boolean, error)
}

// matched scans the rows of v alive at now that m selects, with their row
// locations, and hands each batch to fn.
func (t *Table) matched(ctx context.Context, v *version, now time.Time, m Matcher, fn func(rec arrow.RecordBatch) error) error {
	snap, err := v.snapshot(ctx, t.opts.Allocator)
	if err != nil {
		return err
	}
	r, err := query.NewScan(ctx, t.opts.Allocator, snap, query.Request{Now: now, Filter: m.Filter, ShowHidden: true, RowIDs: true})
	if err != nil {
		return err
	}
	defer r.Release()
	for r.Next() {
		rec := r.RecordBatch()
		if m.Rows != nil {
			mask, err := m.Rows(rec)
			if err != nil {
				return err
			}
			filtered, err := query.FilterBatch(ctx, t.opts.Allocator, rec, query.MaskOf(mask))
			mask.Release()
			if err != nil {
				return err
			}
			err = fn(filtered)
			filtered.Release()
			if err != nil {
				return err
			}
			continue
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return r.Err()
}

// userColumns returns rec without the hidden and location columns, and with
// __TTL__ kept only when keepTTL.
func userColumns(rec arrow.RecordBatch, keepTTL bool) arrow.RecordBatch {
	var fields []arrow.Field
	var cols []arrow.Array
	for i, f := range rec.Schema().Fields() {
		switch {
		case f.Name == query.RowsetIDColumn, f.Name == query.RowOrdinalColumn:
			continue
		case f.Name == schema.TTLColumn && !keepTTL:
			continue
		}
		fields = append(fields, f)
		cols = append(cols, rec.Column(i))
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}

// DeleteWhere deletes the rows alive at o.Now that m selects, as one
// version, and returns how many it deleted. On a UNIQUE table the key is
// gone (a later write brings it back); on a merge-on-read table the
// deletion is stored as delete-sign rows, elsewhere as delete-bitmap marks.
func (t *Table) DeleteWhere(ctx context.Context, m Matcher, o WriteOptions) (int64, error) {
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	v, err := t.writableDrained(ctx)
	if err != nil {
		return 0, err
	}
	defer v.unref()
	if o.Now.IsZero() {
		o.Now = t.opts.Clock()
	}
	t.noteNow(o.Now)
	var n int64
	marks := map[uint64]*roaring.Bitmap{}
	var tomb []arrow.RecordBatch
	defer func() {
		for _, r := range tomb {
			r.Release()
		}
	}()
	err = t.matched(ctx, v, o.Now, m, func(rec arrow.RecordBatch) error {
		n += rec.NumRows()
		if v.def.Model == schema.UniqueMOR {
			tomb = append(tomb, userColumns(rec, false))
			return nil
		}
		ids := rec.Column(rec.Schema().FieldIndices(query.RowsetIDColumn)[0]).(*array.Int64).Int64Values()
		ords := rec.Column(rec.Schema().FieldIndices(query.RowOrdinalColumn)[0]).(*array.Int64).Int64Values()
		for i := range ids {
			b := marks[uint64(ids[i])]
			if b == nil {
				b = roaring.New()
				marks[uint64(ids[i])] = b
			}
			b.Add(uint32(ords[i]))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if v.def.Model == schema.UniqueMOR {
		return n, t.writeLocked(ctx, v, tomb, o, writeExtras{tombstones: true})
	}
	return n, t.writeLocked(ctx, v, nil, o, writeExtras{marks: marks})
}

// UpdateWhere rewrites the rows alive at o.Now that m selects, as one
// version of full-row writes, and returns how many it rewrote. set gets
// batches of every user column and __TTL__ (as shown) and returns the new
// rows; when its result has no __TTL__ column the rows keep their
// expiration (direct mode) or derive it again from the source column
// (source mode). Only UNIQUE tables can be updated, and set must not change
// key columns.
func (t *Table) UpdateWhere(ctx context.Context, m Matcher, set func(rec arrow.RecordBatch) (arrow.RecordBatch, error), o WriteOptions) (int64, error) {
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	v, err := t.writableDrained(ctx)
	if err != nil {
		return 0, err
	}
	defer v.unref()
	if !v.def.Model.IsUnique() {
		return 0, rowttl.Errorf(rowttl.ErrNotSupported, "table %s: Only unique table could be updated", t.Name())
	}
	if o.Partial && v.policy.Mode != ttlcol.NoTTL {
		return 0, rowttl.Errorf(rowttl.ErrNotSupported, "table %s: Partial update is not supported on tables with row TTL", t.Name())
	}
	if o.Now.IsZero() {
		o.Now = t.opts.Clock()
	}
	var n int64
	var rows []arrow.RecordBatch
	defer func() {
		for _, r := range rows {
			r.Release()
		}
	}()
	err = t.matched(ctx, v, o.Now, m, func(rec arrow.RecordBatch) error {
		n += rec.NumRows()
		in := userColumns(rec, true)
		out, err := set(in)
		if err != nil {
			in.Release()
			return err
		}
		if v.policy.Mode == ttlcol.SourceMode && hasTTLAlias(out.Schema()) {
			// The expiration derives from the source column again.
			stripped := userColumns(out, false)
			out.Release()
			out = stripped
		}
		if v.policy.Mode == ttlcol.DirectMode && !hasTTLAlias(out.Schema()) {
			// Changing other columns keeps the row's expiration.
			ttl := in.Column(in.Schema().FieldIndices(schema.TTLColumn)[0])
			fields := append(append([]arrow.Field{}, out.Schema().Fields()...), arrow.Field{Name: schema.TTLColumn, Type: ttl.DataType(), Nullable: true})
			cols := append(append([]arrow.Array{}, out.Columns()...), ttl)
			merged := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, out.NumRows())
			out.Release()
			out = merged
		}
		in.Release()
		rows = append(rows, out)
		return nil
	})
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, t.writeLocked(ctx, v, nil, o, writeExtras{})
	}
	return n, t.writeLocked(ctx, v, rows, o, writeExtras{})
}

func hasTTLAlias(sc *arrow.Schema) bool {
	for _, f := range sc.Fields() {
		if schema.IsTTLName(f.Name) {
			return true
		}
	}
	return false
}

// Delete deletes the rows alive now (the table's clock) that filter
// selects, as one version.
func (t *Table) Delete(ctx context.Context, filter query.Expr) (int64, error) {
	return t.DeleteWhere(ctx, Matcher{Filter: filter}, WriteOptions{})
}

// Update sets columns to constants on the rows alive now that filter
// selects, as one version. Values are Go values as in query.Cmp. Setting
// __TTL__ (direct mode) or the source column (source mode) changes the
// expiration; setting anything else keeps it.
func (t *Table) Update(ctx context.Context, assignments map[string]any, filter query.Expr) (int64, error) {
	def := t.Definition()
	pol := t.Policy()
	for name := range assignments {
		if schema.IsTTLName(name) {
			if pol.Mode != ttlcol.DirectMode {
				return 0, rowttl.Errorf(rowttl.ErrInvalidArgument, "%s is derived in this table and cannot be set", name)
			}
			continue
		}
		i := def.Schema.Index(name)
		if i < 0 {
			return 0, rowttl.Errorf(rowttl.ErrNotFound, "unknown column %s", name)
		}
		if i < def.Schema.KeyCount {
			return 0, rowttl.Errorf(rowttl.ErrNotSupported, "key column %s cannot be updated", name)
		}
	}
	mem := t.opts.Allocator
	set := func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
		n := int(rec.NumRows())
		fields := rec.Schema().Fields()
		cols := make([]arrow.Array, len(fields))
		for i, f := range fields {
			val, ok := lookupAssign(assignments, f.Name)
			if !ok {
				cols[i] = rec.Column(i)
				cols[i].Retain()
				continue
			}
			typ := schema.BigIntType
			if !schema.IsTTLName(f.Name) {
				c, _ := def.Schema.Column(f.Name)
				typ = c.Type
			}
			pv, err := query.ToValue(typ, val)
			if err != nil {
				for _, c := range cols[:i] {
					c.Release()
				}
				return nil, err
			}
			cols[i] = schema.ConstArray(mem, f.Type, pv, n)
		}
		out := array.NewRecordBatch(rec.Schema(), cols, int64(n))
		for _, c := range cols {
			c.Release()
		}
		return out, nil
	}
	return t.UpdateWhere(ctx, Matcher{Filter: filter}, set, WriteOptions{})
}

func lookupAssign(a map[string]any, name string) (any, bool) {
	for k, v := range a {
		if strings.EqualFold(k, name) || (schema.IsTTLName(k) && schema.IsTTLName(name)) {
			return v, true
		}
	}
	return nil, false
}
