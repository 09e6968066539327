package sql

import (
	"fmt"
	"strings"
	"time"

	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
	"github.com/rowttl/rowttl/ttlcol"
)

// This file is the part of the dialect that loads use: the Stream Load
// column list (`columns: k1, tmp, v = tmp * 2`), compiled against a table
// into per-row evaluators, and the conversions loads share with SQL.

// LoadField is one field of a load's input rows, named by the column list.
type LoadField struct {
	// Name is the name the column list gives the field.
	Name string
	// Column is the table column of that name; nil for __TTL__ and for a
	// temporary variable (a name that is no column of the table).
	Column *schema.Column
	// TTL marks a field named __TTL__ or __DORIS_TTL_COL__ (direct mode
	// only): its text is an integer of epoch microseconds.
	TTL bool
	// Type is the type the field's text is read as: the column's type,
	// BIGINT for __TTL__, STRING for a temporary variable.
	Type schema.Type
}

// LoadTarget is one column a load writes.
type LoadTarget struct {
	// Column is the table column written; nil for __TTL__.
	Column *schema.Column
	// Field is the input field written as it was read, or -1 when Eval
	// computes the value.
	Field int
	// Eval computes the value from one row of field values (each typed as
	// its LoadField.Type). The result has the column's type; for __TTL__
	// it is the expiration in epoch microseconds.
	Eval func(row []schema.Value) (schema.Value, error)
	// Expr is the expression as written, for messages.
	Expr string
}

// IsTTL reports whether the target is the hidden __TTL__ column.
func (t *LoadTarget) IsTTL() bool { return t.Column == nil }

// LoadColumns is a compiled column list.
type LoadColumns struct {
	// Fields are the fields of each input row, in order.
	Fields []LoadField
	// Targets are the columns written: fields bound to a column first (in
	// field order), then derived columns (in list order). Columns named by
	// neither take their defaults.
	Targets []LoadTarget
}

// CompileLoadColumns compiles a Stream Load column list against a table.
//
// An empty spec binds one field to each user column, in table order. In a
// spec, a plain name binds the next field: to the column of that name
// (read as the column's type), to __TTL__ / __DORIS_TTL_COL__ in direct
// mode (read as BIGINT epoch microseconds), or else to a temporary
// variable (read as STRING) that only expressions use. `name = expr`
// derives a column from the fields; expressions name fields, not other
// derived columns. A field bound to a column that is also derived only
// feeds expressions. DATE and DATETIME values derived into __TTL__ are
// read in loc, TIMESTAMPTZ values are instants, integers are epoch
// microseconds, and text is refused (CAST it); loc is also the zone of
// every other conversion and now the value of NOW().
func CompileLoadColumns(spec string, def *table.Definition, pol ttlcol.Policy, loc *time.Location, now time.Time) (*LoadColumns, error) {
	return CompileLoadColumnsTyped(spec, def, pol, loc, now, nil)
}

// CompileLoadColumnsTyped is CompileLoadColumns for inputs whose fields
// have types of their own (a Parquet file's columns): varType, when not
// nil, gives the type of a temporary variable by its name, so that
// expressions see the file's values as they are rather than as text.
func CompileLoadColumnsTyped(spec string, def *table.Definition, pol ttlcol.Policy, loc *time.Location, now time.Time,
	varType func(name string) (schema.Type, bool)) (*LoadColumns, error) {
	if loc == nil {
		loc = time.UTC
	}
	cols := def.Schema.Columns
	var items []parser.LoadItem
	if strings.TrimSpace(spec) == "" {
		for i := range cols {
			items = append(items, parser.LoadItem{Name: cols[i].Name})
		}
	} else {
		var err error
		if items, err = parser.ParseLoadColumns(spec); err != nil {
			return nil, invalidf("columns: %v", err)
		}
	}
	checkTTLName := func(name string) error {
		switch pol.Mode {
		case ttlcol.NoTTL:
			return notFoundf("columns: unknown column %s: the table has no row TTL", name)
		case ttlcol.SourceMode:
			return invalidf("columns: %s is derived from %s in this table and cannot be written", schema.TTLColumn, pol.SourceColumn)
		}
		return nil
	}
	out := &LoadColumns{}
	// derived holds the columns an expression writes (lower-case names,
	// __ttl__ for the hidden column).
	derived := map[string]bool{}
	for _, it := range items {
		if it.Expr == nil {
			continue
		}
		key := strings.ToLower(it.Name)
		if schema.IsTTLName(it.Name) {
			if err := checkTTLName(it.Name); err != nil {
				return nil, err
			}
			key = strings.ToLower(schema.TTLColumn)
		} else if def.Schema.Index(it.Name) < 0 {
			return nil, notFoundf("columns: unknown column %s in %s = %s", it.Name, it.Name, parser.FormatExpr(it.Expr))
		}
		if derived[key] {
			return nil, invalidf("columns: column %s is derived twice", it.Name)
		}
		derived[key] = true
	}
	sc := &scope{showHidden: true, tableName: "columns"}
	seen := map[string]bool{}
	for _, it := range items {
		if it.Expr != nil {
			continue
		}
		key := strings.ToLower(it.Name)
		f := LoadField{Name: it.Name, Type: stringType}
		if varType != nil {
			if t, ok := varType(it.Name); ok {
				f.Type = t
			}
		}
		if schema.IsTTLName(it.Name) {
			if err := checkTTLName(it.Name); err != nil {
				return nil, err
			}
			key = strings.ToLower(schema.TTLColumn)
			f.TTL, f.Type = true, bigintType
		} else if j := def.Schema.Index(it.Name); j >= 0 {
			f.Column = &cols[j]
			f.Type = cols[j].Type
		}
		if seen[key] {
			return nil, invalidf("columns: duplicate column name %s", it.Name)
		}
		seen[key] = true
		idx := len(out.Fields)
		out.Fields = append(out.Fields, f)
		sc.cols = append(sc.cols, column{name: it.Name, typ: f.Type, ttl: f.TTL})
		if (f.Column != nil || f.TTL) && !derived[key] {
			out.Targets = append(out.Targets, LoadTarget{Column: f.Column, Field: idx, Expr: it.Name})
		}
	}
	env := &stmtEnv{now: now, loc: loc}
	for _, it := range items {
		if it.Expr == nil {
			continue
		}
		c := newCompiler(env, sc)
		x, err := c.compile(it.Expr)
		if err != nil {
			return nil, fmt.Errorf("columns: %s = %s: %w", it.Name, parser.FormatExpr(it.Expr), err)
		}
		tg := LoadTarget{Field: -1, Expr: it.Name + "=" + parser.FormatExpr(it.Expr)}
		if schema.IsTTLName(it.Name) {
			eval, err := ttlEvaluator(x, loc)
			if err != nil {
				return nil, fmt.Errorf("columns: %s = %s: %w", it.Name, parser.FormatExpr(it.Expr), err)
			}
			tg.Eval = eval
		} else {
			j := def.Schema.Index(it.Name)
			tg.Column = &cols[j]
			x, err = c.convert(x, cols[j].Type)
			if err != nil {
				return nil, fmt.Errorf("columns: %s = %s: %w", it.Name, parser.FormatExpr(it.Expr), err)
			}
			tg.Eval = x.eval
		}
		out.Targets = append(out.Targets, tg)
	}
	// A NOT NULL column without a default must be written.
	written := map[string]bool{}
	for _, tg := range out.Targets {
		if tg.Column != nil {
			written[strings.ToLower(tg.Column.Name)] = true
		}
	}
	for i := range cols {
		c := &cols[i]
		if !c.Nullable && c.DefaultKind == schema.NoDefault && !written[strings.ToLower(c.Name)] {
			if pol.Mode == ttlcol.SourceMode && strings.EqualFold(pol.SourceColumn, c.Name) {
				// The table names the problem in its own words.
				continue
			}
			return nil, invalidf("columns: column %s is NOT NULL and has no default, so the load must write it", c.Name)
		}
	}
	return out, nil
}

// ttlEvaluator converts an expression's value to the epoch microseconds of
// a direct-mode __TTL__ (SPEC §2): integers as they are, DATETIME read in
// loc, DATE as its midnight in loc, TIMESTAMPTZ as its instant.
func ttlEvaluator(x *compiled, loc *time.Location) (func(row []schema.Value) (schema.Value, error), error) {
	conv := func(v schema.Value) schema.Value { return v }
	switch {
	case isNullType(x.t), isIntLike(x.t), x.t.Kind == schema.TimestampTZ:
	case x.t.Kind == schema.Datetime:
		conv = func(v schema.Value) schema.Value { return schema.IntVal(schema.WallToInstant(v.Int, loc)) }
	case x.t.Kind == schema.Date:
		conv = func(v schema.Value) schema.Value { return schema.IntVal(schema.WallToInstant(v.Int*microsPerDay, loc)) }
	case x.t.IsString():
		return nil, invalidf("a text value cannot be written into %s; CAST it explicitly to DATETIME or BIGINT", schema.TTLColumn)
	case x.t.Kind == schema.TimestampNS:
		return nil, invalidf("TIMESTAMP_NS values cannot be written into %s", schema.TTLColumn)
	default:
		return nil, invalidf("%s takes an integer number of epoch microseconds or a date/time, not %s", schema.TTLColumn, x.t)
	}
	return func(row []schema.Value) (schema.Value, error) {
		v, err := x.eval(row)
		if err != nil || v.IsNull() {
			return schema.Null, err
		}
		return conv(v), nil
	}, nil
}

// TextConverter returns the conversion of a text into a value of type t,
// with the rules of CAST(text AS t): strict, loc reading zone-less
// TIMESTAMPTZ texts.
func TextConverter(t schema.Type, loc *time.Location) (func(text []byte) (schema.Value, error), error) {
	if loc == nil {
		loc = time.UTC
	}
	f, err := castFunc(stringType, t, loc)
	if err != nil {
		return nil, err
	}
	return func(text []byte) (schema.Value, error) { return f(schema.BytesVal(text)) }, nil
}

// LoadZone resolves a time zone name as SET time_zone does: UTC, Z, a
// ±HH:MM offset (-12:00..+14:00) or an IANA name.
func LoadZone(name string) (*time.Location, error) { return loadZone(name) }
