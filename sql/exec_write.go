package sql

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
)

// writeTarget is one column an INSERT or UPDATE writes.
type writeTarget struct {
	name string         // as the batch names it
	col  *schema.Column // nil for __TTL__
}

func (w writeTarget) isTTL() bool { return w.col == nil }

// defaultValue is the value DEFAULT (or an omitted column) stands for.
func defaultValue(c *schema.Column, env *stmtEnv) (schema.Value, error) {
	if c == nil {
		return schema.Null, nil
	}
	switch c.DefaultKind {
	case schema.DefaultLiteral:
		v, err := schema.ParseLiteral(c.Type, c.Default)
		if err != nil {
			return schema.Null, invalidf("column %s: bad default: %w", c.Name, err)
		}
		return v, nil
	case schema.DefaultCurrentTimestamp:
		local := env.now.In(env.loc)
		switch c.Type.Kind {
		case schema.Date:
			return schema.IntVal(int64(schema.DateFromTime(local))), nil
		case schema.Datetime:
			return schema.IntVal(schema.TruncateMicros(schema.DatetimeFromTime(local), c.Type.Precision)), nil
		case schema.TimestampTZ:
			return schema.IntVal(schema.TruncateMicros(env.now.UnixMicro(), c.Type.Precision)), nil
		case schema.BigInt:
			return schema.IntVal(env.now.UnixMicro()), nil
		}
		return schema.BytesVal([]byte(local.Format("2006-01-02 15:04:05"))), nil
	}
	return schema.Null, nil
}

// typedValue is a value with its static type.
type typedValue struct {
	v schema.Value
	t schema.Type
}

// columnArray builds the array of a user column from values already
// converted to its type.
func columnArray(mem memory.Allocator, c *schema.Column, vals []schema.Value) arrow.Array {
	b := array.NewBuilder(mem, c.Type.Arrow())
	defer b.Release()
	b.Reserve(len(vals))
	for _, v := range vals {
		schema.AppendValue(b, v)
	}
	return b.NewArray()
}

// ttlArray builds the __TTL__ column of a direct-mode write from values of
// their natural types, so that the table converts them (SPEC §2): integers
// as epoch µs, DATETIME read in the session zone, DATE as its midnight
// there, TIMESTAMPTZ as its instant; text is refused by the table with a
// message asking for a CAST. When the rows' types differ the values are
// converted here, with the same rules.
func ttlArray(mem memory.Allocator, vals []typedValue, loc *time.Location) (arrow.Array, error) {
	kind := schema.Invalid
	var t schema.Type
	mixed := false
	class := func(t schema.Type) schema.Kind {
		if isIntLike(t) {
			return schema.BigInt
		}
		if t.IsString() {
			return schema.String
		}
		return t.Kind
	}
	for _, tv := range vals {
		if tv.v.IsNull() || isNullType(tv.t) {
			continue
		}
		k := class(tv.t)
		if kind == schema.Invalid {
			kind, t = k, tv.t
		} else if k != kind {
			mixed = true
		}
	}
	var dt arrow.DataType
	switch {
	case kind == schema.Invalid:
		dt = arrow.PrimitiveTypes.Int64
	case mixed:
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for _, tv := range vals {
			if tv.v.IsNull() || isNullType(tv.t) {
				b.AppendNull()
				continue
			}
			switch {
			case isIntLike(tv.t):
				b.Append(tv.v.Int)
			case tv.t.Kind == schema.Datetime:
				b.Append(schema.WallToInstant(tv.v.Int, loc))
			case tv.t.Kind == schema.Date:
				b.Append(schema.WallToInstant(tv.v.Int*microsPerDay, loc))
			case tv.t.Kind == schema.TimestampTZ:
				b.Append(tv.v.Int)
			case tv.t.IsString():
				return nil, invalidf("a text value cannot be written into %s; CAST it explicitly to DATETIME or BIGINT", schema.TTLColumn)
			default:
				return nil, invalidf("%s cannot be written from a %s value", schema.TTLColumn, tv.t)
			}
		}
		return b.NewArray(), nil
	case kind == schema.BigInt:
		dt = arrow.PrimitiveTypes.Int64
	default:
		dt = t.Arrow()
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for _, tv := range vals {
		if isNullType(tv.t) {
			b.AppendNull()
			continue
		}
		schema.AppendValue(b, tv.v)
	}
	return b.NewArray(), nil
}

// buildBatch makes the record batch of a write: one column per target.
func buildBatch(mem memory.Allocator, targets []writeTarget, cols [][]typedValue, n int, loc *time.Location) (arrow.RecordBatch, error) {
	fields := make([]arrow.Field, len(targets))
	arrs := make([]arrow.Array, len(targets))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, tg := range targets {
		if tg.isTTL() {
			a, err := ttlArray(mem, cols[i], loc)
			if err != nil {
				return nil, err
			}
			arrs[i] = a
		} else {
			vals := make([]schema.Value, len(cols[i]))
			for j, tv := range cols[i] {
				vals[j] = tv.v
			}
			arrs[i] = columnArray(mem, tg.col, vals)
		}
		fields[i] = arrow.Field{Name: tg.name, Type: arrs[i].DataType(), Nullable: true}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(n)), nil
}

// insertTargets resolves an INSERT column list (nil: every user column).
func insertTargets(def *table.Definition, pol ttlPolicy, names []string, tableName string) ([]writeTarget, error) {
	if names == nil {
		out := make([]writeTarget, len(def.Schema.Columns))
		for i := range def.Schema.Columns {
			c := &def.Schema.Columns[i]
			out[i] = writeTarget{name: c.Name, col: c}
		}
		return out, nil
	}
	seen := map[string]bool{}
	var out []writeTarget
	for _, n := range names {
		key := strings.ToLower(n)
		if schema.IsTTLName(n) {
			if !pol.on {
				return nil, notFoundf("Unknown column '%s' in '%s': the table has no row TTL", n, tableName)
			}
			key = strings.ToLower(schema.TTLColumn)
			if seen[key] {
				return nil, invalidf("Column '%s' specified twice", n)
			}
			seen[key] = true
			out = append(out, writeTarget{name: n})
			continue
		}
		c, ok := def.Schema.Column(n)
		if !ok {
			return nil, notFoundf("Unknown column '%s' in '%s'", n, tableName)
		}
		if seen[key] {
			return nil, invalidf("Column '%s' specified twice", n)
		}
		seen[key] = true
		out = append(out, writeTarget{name: c.Name, col: c})
	}
	return out, nil
}

// storeValue converts a value to its target column's type (strictly); a
// __TTL__ target keeps the value's natural type.
func storeValue(tg writeTarget, tv typedValue, loc *time.Location, row int) (typedValue, error) {
	if tg.isTTL() {
		return tv, nil
	}
	f, err := castFunc(tv.t, tg.col.Type, loc)
	if err != nil {
		return tv, fmt.Errorf("row %d, column %s: %w", row, tg.col.Name, err)
	}
	v, err := f(tv.v)
	if err != nil {
		return tv, fmt.Errorf("row %d, column %s: %w", row, tg.col.Name, err)
	}
	return typedValue{v: v, t: tg.col.Type}, nil
}

func (s *Session) insert(ctx context.Context, env *stmtEnv, st *parser.Insert) (*Result, error) {
	tbl, _, name, err := s.openTable(st.Table)
	if err != nil {
		return nil, err
	}
	def := tbl.Definition()
	pol := policyOf(tbl)
	targets, err := insertTargets(def, pol, st.Columns, name)
	if err != nil {
		return nil, err
	}
	partial := s.partialUpdate && (pol.on || (def.Model.IsUnique() && len(targets) < len(def.Schema.Columns)))
	wo := table.WriteOptions{Now: env.now, TimeZone: env.loc, Label: st.Label, Partial: partial}
	if st.Select == nil && st.SetOp == nil {
		return s.insertValues(ctx, env, st, tbl, targets, wo)
	}
	var q parser.QueryExpr = st.Select
	if st.SetOp != nil {
		q = st.SetOp
	}
	return s.insertSelect(ctx, env, q, tbl, targets, wo)
}

// insertSelect writes the rows of INSERT ... SELECT as one version,
// streaming them: each batch the query's operators produce is converted
// to the target columns and handed to a table.LoadWriter, so that memory
// stays bounded by a few batches whatever the number of rows (the query
// reads its snapshot, so INSERT INTO t SELECT ... FROM t sees none of the
// rows it writes). An error in any row writes nothing.
func (s *Session) insertSelect(ctx context.Context, env *stmtEnv, q parser.QueryExpr, tbl *table.Table, targets []writeTarget, wo table.WriteOptions) (*Result, error) {
	op, err := s.queryOperator(ctx, env, q)
	if err != nil {
		return nil, err
	}
	defer op.Close()
	in := op.Schema()
	if len(in) != len(targets) {
		return nil, invalidf("Column count doesn't match value count: %d columns, the SELECT gives %d", len(targets), len(in))
	}
	lw, err := tbl.NewLoadWriter(ctx, wo)
	if err != nil {
		return nil, err
	}
	defer lw.Abort() // nothing once committed
	casts := make([]castCache, len(targets))
	// Rows are gathered into batches of insertBatchRows, as INSERT ...
	// VALUES writes them; the converted values may point into the
	// buffers of the query's batches, which are held until written.
	w := newRowBatcher(s, targets, env, lw)
	defer w.release()
	n := 0
	for {
		b, err := op.Next(ctx)
		if err != nil {
			return nil, err
		}
		if b == nil {
			break
		}
		// A batch smaller than a write's goes row by row so that small
		// batches still gather into writes of insertBatchRows rows (each
		// write is sorted by key on its own).
		if rec, ok := passBatch(targets, in, b); ok {
			// The rows converted before go first, then the batch whole.
			err := w.flush()
			if err == nil {
				err = lw.Write(rec)
			}
			n += int(rec.NumRows())
			rec.Release()
			b.Release()
			if err != nil {
				return nil, err
			}
			continue
		}
		w.held = append(w.held, b)
		// Row by row, so that the error is the first bad row's.
		for r := range int(b.NumRows()) {
			n++
			for i, tg := range targets {
				tv, err := casts[i].store(tg, typedValue{v: schema.ValueAt(b.Column(i), r), t: in[i].Type}, env.loc, n)
				if err != nil {
					return nil, err
				}
				w.cols[i] = append(w.cols[i], tv)
			}
			if w.rows++; w.rows >= insertBatchRows {
				// The rows of b not yet converted keep b alive.
				b.Retain()
				err := w.flush()
				w.held = append(w.held, b)
				if err != nil {
					return nil, err
				}
			}
		}
	}
	if err := w.flush(); err != nil {
		return nil, err
	}
	if err := lw.Commit(); err != nil {
		return nil, err
	}
	return &Result{RowsAffected: int64(n)}, nil
}

// passBatch returns a batch of the SELECT as the batch of its write,
// sharing its arrays, when every column would come out of the row path
// unchanged: each target's conversion from its column's type is the
// identity (castFunc gives it for sameRepr) and the array already has the
// target's Arrow type; a __TTL__ target takes a BIGINT or date/time column
// whose array ttlArray would rebuild as it is. No value then converts or
// fails here, and the table checks the rest (NOT NULL, lengths, the TTL's
// range) on the whole batch as on the row path's.
func passBatch(targets []writeTarget, in exec.Schema, b arrow.RecordBatch) (arrow.RecordBatch, bool) {
	if b.NumRows() < int64(insertBatchRows) {
		return nil, false
	}
	fields := make([]arrow.Field, len(targets))
	for i, tg := range targets {
		from, dt := in[i].Type, b.Column(i).DataType()
		if isNullType(from) || !arrow.TypeEqual(dt, from.Arrow()) {
			return nil, false
		}
		if tg.isTTL() {
			switch from.Kind {
			case schema.BigInt, schema.Datetime, schema.TimestampTZ, schema.Date:
			default:
				return nil, false
			}
		} else if !sameRepr(from, tg.col.Type) || !arrow.TypeEqual(dt, tg.col.Type.Arrow()) {
			return nil, false
		}
		fields[i] = arrow.Field{Name: tg.name, Type: dt, Nullable: true}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), b.Columns(), b.NumRows()), true
}

// insertBatchRows is how many rows of INSERT ... VALUES are converted
// before they go to the table as one batch.
var insertBatchRows = 4096

// insertValues writes the rows of INSERT ... VALUES as one version,
// streaming them: each row is parsed (from env.values when the statement
// was parsed as a stream), its constants evaluated and converted, and every
// insertBatchRows rows become a batch of a table.LoadWriter, so that
// memory stays bounded by a batch (and the statement's text) whatever the
// number of rows. An error anywhere, a syntax error in a later row
// included, writes nothing.
func (s *Session) insertValues(ctx context.Context, env *stmtEnv, st *parser.Insert, tbl *table.Table, targets []writeTarget, wo table.WriteOptions) (*Result, error) {
	next := func() ([]parser.Expr, error) {
		if len(st.Rows) == 0 {
			return nil, nil
		}
		row := st.Rows[0]
		st.Rows = st.Rows[1:]
		return row, nil
	}
	if env.values != nil {
		next = env.values.Next
	}
	lw, err := tbl.NewLoadWriter(ctx, wo)
	if err != nil {
		return nil, err
	}
	defer lw.Abort() // nothing once committed
	c := newCompiler(env, nil)
	casts := make([]castCache, len(targets))
	w := newRowBatcher(s, targets, env, lw)
	n := 0
	for {
		row, err := next()
		if err != nil {
			return nil, err
		}
		if row == nil {
			break
		}
		n++
		if len(row) != len(targets) && !(len(row) == 0 && st.Columns == nil) {
			return nil, invalidf("Column count doesn't match value count at row %d", n)
		}
		for i, tg := range targets {
			var tv typedValue
			if len(row) == 0 {
				tv, err = defaultTyped(tg, env)
			} else if _, ok := row[i].(*parser.DefaultExpr); ok {
				tv, err = defaultTyped(tg, env)
			} else {
				var x *compiled
				if x, err = c.compile(row[i]); err == nil {
					tv.t = x.t
					tv.v, err = x.eval(nil)
				}
			}
			if err != nil {
				return nil, err
			}
			if tv, err = casts[i].store(tg, tv, env.loc, n); err != nil {
				return nil, err
			}
			w.cols[i] = append(w.cols[i], tv)
		}
		if w.rows++; w.rows >= insertBatchRows {
			if err := w.flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := w.flush(); err != nil {
		return nil, err
	}
	if err := lw.Commit(); err != nil {
		return nil, err
	}
	return &Result{RowsAffected: int64(n)}, nil
}

// rowBatcher gathers the converted rows of an INSERT into batches of its
// load writer. held are the query batches the converted values may point
// into: they are released once their rows are written.
type rowBatcher struct {
	s       *Session
	targets []writeTarget
	env     *stmtEnv
	lw      *table.LoadWriter
	cols    [][]typedValue
	rows    int
	held    []arrow.RecordBatch
}

func newRowBatcher(s *Session, targets []writeTarget, env *stmtEnv, lw *table.LoadWriter) *rowBatcher {
	return &rowBatcher{s: s, targets: targets, env: env, lw: lw, cols: make([][]typedValue, len(targets))}
}

// flush writes the rows gathered so far as one batch.
func (w *rowBatcher) flush() error {
	if w.rows == 0 {
		return nil
	}
	rec, err := buildBatch(w.s.mem, w.targets, w.cols, w.rows, w.env.loc)
	if err != nil {
		return err
	}
	err = w.lw.Write(rec)
	rec.Release()
	w.release()
	for i := range w.cols {
		w.cols[i] = w.cols[i][:0]
	}
	w.rows = 0
	return err
}

func (w *rowBatcher) release() {
	for _, b := range w.held {
		b.Release()
	}
	w.held = w.held[:0]
}

// castCache is storeValue for one target column, keeping the conversion
// of the last source type: the rows of a VALUES list mostly share types.
type castCache struct {
	from schema.Type
	f    func(schema.Value) (schema.Value, error)
}

func (cc *castCache) store(tg writeTarget, tv typedValue, loc *time.Location, row int) (typedValue, error) {
	if tg.isTTL() {
		return tv, nil
	}
	if cc.f == nil || cc.from != tv.t {
		f, err := castFunc(tv.t, tg.col.Type, loc)
		if err != nil {
			return tv, fmt.Errorf("row %d, column %s: %w", row, tg.col.Name, err)
		}
		cc.from, cc.f = tv.t, f
	}
	v, err := cc.f(tv.v)
	if err != nil {
		return tv, fmt.Errorf("row %d, column %s: %w", row, tg.col.Name, err)
	}
	return typedValue{v: v, t: tg.col.Type}, nil
}

// defaultTyped is the value DEFAULT stands for, typed as its column.
func defaultTyped(tg writeTarget, env *stmtEnv) (typedValue, error) {
	v, err := defaultValue(tg.col, env)
	tv := typedValue{v: v, t: nullType}
	if tg.col != nil {
		tv.t = tg.col.Type
	}
	return tv, err
}

// matcher plans the WHERE of an UPDATE or DELETE: the conjuncts the scan
// takes go to the Matcher's Filter (zone maps skip pages), and the whole
// WHERE is a vectorised expression, as SELECT compiles it, evaluated on
// each matched batch (Matcher.Rows).
func (s *Session) matcher(env *stmtEnv, sc *scope, where parser.Expr) (table.Matcher, error) {
	var m table.Matcher
	if where == nil {
		return m, nil
	}
	if parser.ContainsAggregate(where) {
		return m, invalidf("aggregate functions are not allowed in WHERE")
	}
	if err := refuseExpr(where); err != nil {
		return m, err
	}
	c := newVCompiler(env, sc)
	w, err := c.compile(where)
	if err == nil {
		w, err = c.asBool(w)
	}
	if err != nil {
		return m, planError(err)
	}
	// The expression reads a batch of the columns it names, in slot
	// order, picked by name from the matched batch.
	slots := make([]int, 0, len(c.refs))
	for slot := range c.refs {
		slots = append(slots, slot)
	}
	sort.Ints(slots)
	for i, slot := range slots {
		for _, ref := range c.refs[slot] {
			ref.Index = i
		}
	}
	xenv := s.execEnv(env)
	m.Filter = pushdown(env, sc, where)
	m.Rows = func(rec arrow.RecordBatch) (*array.Boolean, error) {
		cols := make([]arrow.Array, len(slots))
		fields := make([]arrow.Field, len(slots))
		for i, slot := range slots {
			name := sc.cols[slot].name
			j := -1
			for k, f := range rec.Schema().Fields() {
				if strings.EqualFold(f.Name, name) {
					j = k
					break
				}
			}
			if j < 0 {
				return nil, invalidf("column %s is missing from the matched rows", name)
			}
			cols[i] = rec.Column(j)
			fields[i] = rec.Schema().Field(j)
		}
		in := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
		defer in.Release()
		a, err := w.Eval(xenv, in)
		if err != nil {
			return nil, err
		}
		defer a.Release()
		// NULL keeps no row.
		mask := a.(*array.Boolean)
		b := array.NewBooleanBuilder(s.mem)
		defer b.Release()
		b.Reserve(mask.Len())
		for i := range mask.Len() {
			b.UnsafeAppend(mask.IsValid(i) && mask.Value(i))
		}
		return b.NewBooleanArray(), nil
	}
	return m, nil
}

func (s *Session) delete(ctx context.Context, env *stmtEnv, st *parser.Delete) (*Result, error) {
	tbl, db, name, err := s.openTable(st.Table)
	if err != nil {
		return nil, err
	}
	sc := s.tableScope(tbl.SharedDefinition(), policyOf(tbl), db, name, st.Alias)
	m, err := s.matcher(env, sc, st.Where)
	if err != nil {
		return nil, err
	}
	n, err := tbl.DeleteWhere(ctx, m, table.WriteOptions{Now: env.now, TimeZone: env.loc})
	if err != nil {
		return nil, err
	}
	return &Result{RowsAffected: n}, nil
}

func (s *Session) truncate(ctx context.Context, env *stmtEnv, st *parser.TruncateTable) (*Result, error) {
	tbl, _, _, err := s.openTable(st.Table)
	if err != nil {
		return nil, err
	}
	_, err = tbl.DeleteWhere(ctx, table.Matcher{}, table.WriteOptions{Now: env.now, TimeZone: env.loc})
	return nil, err
}

// assignment is one compiled SET col = expr of an UPDATE.
type assignment struct {
	target writeTarget
	x      *compiled // nil for DEFAULT
}

func (s *Session) update(ctx context.Context, env *stmtEnv, st *parser.Update) (*Result, error) {
	tbl, db, name, err := s.openTable(st.Table)
	if err != nil {
		return nil, err
	}
	def := tbl.Definition()
	pol := policyOf(tbl)
	if !def.Model.IsUnique() {
		return nil, unsupportedf("table %s.%s: Only unique table could be updated", db, name)
	}
	sc := s.tableScope(def, pol, db, name, st.Alias)
	c := newCompiler(env, sc)
	var assigns []assignment
	seen := map[string]bool{}
	for _, a := range st.Set {
		ref := a.Column
		if ref.Table != "" {
			ok := false
			for _, q := range sc.qualifiers {
				ok = ok || strings.EqualFold(q, ref.Table)
			}
			if !ok {
				return nil, notFoundf("Unknown column '%s' in 'field list'", parser.FormatExpr(ref))
			}
		}
		var tg writeTarget
		if schema.IsTTLName(ref.Name) {
			if !pol.on {
				return nil, notFoundf("Unknown column '%s' in '%s': the table has no row TTL", ref.Name, name)
			}
			if pol.source != "" {
				return nil, invalidf("%s is derived from the row ttl column %s in this table and cannot be set; update %s instead", ref.Name, pol.source, pol.source)
			}
			tg = writeTarget{name: schema.TTLColumn}
		} else {
			i := def.Schema.Index(ref.Name)
			if i < 0 {
				return nil, notFoundf("Unknown column '%s' in '%s'", ref.Name, name)
			}
			if i < def.Schema.KeyCount {
				return nil, unsupportedf("key column %s cannot be updated: Only value columns of unique table could be updated", def.Schema.Columns[i].Name)
			}
			col := &def.Schema.Columns[i]
			tg = writeTarget{name: col.Name, col: col}
		}
		key := strings.ToLower(tg.name)
		if seen[key] {
			return nil, invalidf("Column '%s' is assigned twice", ref.Name)
		}
		seen[key] = true
		as := assignment{target: tg}
		if _, ok := a.Value.(*parser.DefaultExpr); !ok {
			x, err := c.compile(a.Value)
			if err != nil {
				return nil, err
			}
			if !tg.isTTL() {
				if x, err = c.convert(x, tg.col.Type); err != nil {
					return nil, fmt.Errorf("column %s: %w", tg.col.Name, err)
				}
			}
			as.x = x
		}
		assigns = append(assigns, as)
	}
	m, err := s.matcher(env, sc, st.Where)
	if err != nil {
		return nil, err
	}
	set := func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
		return s.applySet(env, def, sc, assigns, rec)
	}
	n, err := tbl.UpdateWhere(ctx, m, set, table.WriteOptions{Now: env.now, TimeZone: env.loc, Partial: s.partialUpdate})
	if err != nil {
		return nil, err
	}
	return &Result{RowsAffected: n}, nil
}

// keyText names a row of an UPDATE by its key, as "(k1 = v1, k2 = v2)".
func keyText(def *table.Definition, sc *scope, row []schema.Value, loc *time.Location) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, c := range def.Schema.Columns[:def.Schema.KeyCount] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Name)
		b.WriteString(" = ")
		if slot, err := sc.resolve(&parser.ColumnRef{Name: c.Name}); err == nil && slot < len(row) {
			b.WriteString(renderValue(row[slot], c.Type, loc))
		} else {
			b.WriteString("?")
		}
	}
	b.WriteByte(')')
	return b.String()
}

// applySet computes the new full rows of an UPDATE: every user column,
// assigned ones replaced, and __TTL__ when it is assigned (otherwise the
// table keeps or re-derives the expiration).
func (s *Session) applySet(env *stmtEnv, def *table.Definition, sc *scope, assigns []assignment, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := int(rec.NumRows())
	vals := make([][]typedValue, len(assigns))
	err := rowsOf(rec, sc, func(i int, row []schema.Value) error {
		for k, a := range assigns {
			tv := typedValue{t: nullType}
			if a.x == nil {
				v, err := defaultValue(a.target.col, env)
				if err != nil {
					return err
				}
				tv.v = v
				if a.target.col != nil {
					tv.t = a.target.col.Type
				}
			} else {
				v, err := a.x.eval(row)
				if err != nil {
					if a.target.col != nil {
						return fmt.Errorf("row %s, column %s: %w", keyText(def, sc, row, env.loc), a.target.col.Name, err)
					}
					return err
				}
				tv = typedValue{v: v, t: a.x.t}
			}
			vals[k] = append(vals[k], tv)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var targets []writeTarget
	var cols [][]typedValue
	var keep []arrow.Array
	assigned := func(name string) int {
		for k, a := range assigns {
			if strings.EqualFold(a.target.name, name) {
				return k
			}
		}
		return -1
	}
	fields := rec.Schema().Fields()
	for i := range def.Schema.Columns {
		c := &def.Schema.Columns[i]
		if k := assigned(c.Name); k >= 0 {
			targets = append(targets, assigns[k].target)
			cols = append(cols, vals[k])
			keep = append(keep, nil)
			continue
		}
		j := -1
		for x, f := range fields {
			if strings.EqualFold(f.Name, c.Name) {
				j = x
			}
		}
		if j < 0 {
			return nil, invalidf("column %s is missing from the matched rows", c.Name)
		}
		targets = append(targets, writeTarget{name: c.Name, col: c})
		cols = append(cols, nil)
		keep = append(keep, rec.Column(j))
	}
	if k := assigned(schema.TTLColumn); k >= 0 {
		targets = append(targets, assigns[k].target)
		cols = append(cols, vals[k])
		keep = append(keep, nil)
	}
	// Build the assigned columns, then put the kept ones in place.
	var built []writeTarget
	var builtCols [][]typedValue
	for i := range targets {
		if keep[i] == nil {
			built = append(built, targets[i])
			builtCols = append(builtCols, cols[i])
		}
	}
	part, err := buildBatch(s.mem, built, builtCols, n, env.loc)
	if err != nil {
		return nil, err
	}
	defer part.Release()
	outFields := make([]arrow.Field, len(targets))
	outCols := make([]arrow.Array, len(targets))
	b := 0
	for i := range targets {
		if keep[i] != nil {
			outCols[i] = keep[i]
		} else {
			outCols[i] = part.Column(b)
			b++
		}
		outFields[i] = arrow.Field{Name: targets[i].name, Type: outCols[i].DataType(), Nullable: true}
	}
	return array.NewRecordBatch(arrow.NewSchema(outFields, nil), outCols, int64(n)), nil
}

// rowsOf converts a batch to input rows of sc, matching columns by name.
func rowsOf(rec arrow.RecordBatch, sc *scope, fn func(i int, row []schema.Value) error) error {
	idx := make([]int, len(sc.cols))
	for slot, c := range sc.cols {
		idx[slot] = -1
		for j, f := range rec.Schema().Fields() {
			if strings.EqualFold(f.Name, c.name) {
				idx[slot] = j
				break
			}
		}
	}
	row := make([]schema.Value, len(sc.cols))
	for i := 0; i < int(rec.NumRows()); i++ {
		for slot, j := range idx {
			if j >= 0 {
				row[slot] = schema.ValueAt(rec.Column(j), i)
			} else {
				row[slot] = schema.Null
			}
		}
		if err := fn(i, row); err != nil {
			return err
		}
	}
	return nil
}
