package sql

import (
	"context"
	"fmt"
	"strings"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
)

// columnFromDef maps a column definition to a schema column. A column that
// says neither NULL nor NOT NULL is NOT NULL when it is a key column and
// nullable otherwise, as in Doris.
func columnFromDef(cd *parser.ColumnDef, key bool) (schema.Column, error) {
	if cd.AutoIncrement {
		return schema.Column{}, unsupportedf("column %s: AUTO_INCREMENT is not supported", cd.Name)
	}
	if cd.OnUpdateCurrentTimestamp {
		return schema.Column{}, unsupportedf("column %s: ON UPDATE CURRENT_TIMESTAMP is not supported", cd.Name)
	}
	c := schema.Column{
		Name: cd.Name, Type: cd.Type, Comment: cd.Comment, Agg: cd.Agg,
		DefaultKind: cd.DefaultKind, Default: cd.Default, Generated: cd.Generated,
	}
	switch cd.Null {
	case parser.Nullable:
		c.Nullable = true
	case parser.NotNullable:
		c.Nullable = false
	default:
		c.Nullable = !key
	}
	if c.DefaultKind == schema.DefaultCurrentTimestamp {
		switch c.Type.Kind {
		case schema.Datetime, schema.Date, schema.TimestampTZ:
		default:
			return c, invalidf("column %s: DEFAULT CURRENT_TIMESTAMP needs a DATETIME, DATE or TIMESTAMPTZ column, not %s", c.Name, c.Type)
		}
	}
	if c.DefaultKind == schema.DefaultNull && !c.Nullable {
		return c, invalidf("column %s is NOT NULL and cannot have DEFAULT NULL", c.Name)
	}
	if c.DefaultKind == schema.DefaultLiteral {
		if _, err := schema.ParseLiteral(c.Type, c.Default); err != nil {
			return c, invalidf("column %s: invalid default value: %w", c.Name, err)
		}
	}
	return c, nil
}

// distributionText renders a DISTRIBUTED BY clause as SHOW CREATE TABLE
// prints it.
func distributionText(d *parser.Distribution) string {
	if d == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("DISTRIBUTED BY ")
	if d.Random {
		b.WriteString("RANDOM")
	} else {
		b.WriteString("HASH(")
		for i, c := range d.Columns {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("`" + c + "`")
		}
		b.WriteString(")")
	}
	if d.AutoBuckets || d.Buckets == 0 {
		b.WriteString(" BUCKETS AUTO")
	} else {
		fmt.Fprintf(&b, " BUCKETS %d", d.Buckets)
	}
	return b.String()
}

// definitionFromCreate builds the table definition of a CREATE TABLE.
func definitionFromCreate(st *parser.CreateTable) (*table.Definition, error) {
	if st.Engine != "" && st.Engine != "OLAP" {
		return nil, unsupportedf("ENGINE=%s is not supported; tables are OLAP", st.Engine)
	}
	if len(st.Columns) == 0 {
		return nil, rowttl.Errorf(rowttl.ErrInvalidSchema, "a table needs at least one column")
	}
	keys := st.KeyColumns
	if st.Keys == parser.NoKeys {
		// Doris's default: DUPLICATE KEY on the leading columns, up to
		// three, stopping before a floating-point or STRING column.
		for _, cd := range st.Columns {
			if len(keys) == 3 || cd.Type.Kind == schema.Float || cd.Type.Kind == schema.Double || cd.Type.Kind == schema.String {
				break
			}
			keys = append(keys, cd.Name)
		}
		if len(keys) == 0 {
			keys = []string{st.Columns[0].Name}
		}
	}
	if len(keys) > len(st.Columns) {
		return nil, rowttl.Errorf(rowttl.ErrInvalidSchema, "the key names %d columns but the table has %d", len(keys), len(st.Columns))
	}
	for i, k := range keys {
		if !strings.EqualFold(st.Columns[i].Name, k) {
			found := false
			for _, cd := range st.Columns {
				found = found || strings.EqualFold(cd.Name, k)
			}
			if !found {
				return nil, rowttl.Errorf(rowttl.ErrInvalidSchema, "key column %s does not exist", k)
			}
			return nil, rowttl.Errorf(rowttl.ErrInvalidSchema, "Key columns should be a ordered prefix of the schema: key column %s must be column %d", k, i+1)
		}
	}
	def := &table.Definition{
		Schema:     schema.Schema{KeyCount: len(keys)},
		Properties: map[string]string{},
		Comment:    st.Comment,
	}
	switch st.Keys {
	case parser.NoKeys, parser.DupKeys:
		def.Model = schema.Duplicate
	case parser.UniqueKeys:
		def.Model = schema.UniqueMOW
	case parser.AggKeys:
		def.Model = schema.Aggregate
	}
	for i, cd := range st.Columns {
		key := i < len(keys)
		if key && cd.Agg != "" {
			return nil, rowttl.Errorf(rowttl.ErrInvalidSchema, "key column %s cannot have an aggregation", cd.Name)
		}
		if !key && cd.Agg != "" && def.Model != schema.Aggregate {
			return nil, rowttl.Errorf(rowttl.ErrInvalidSchema, "column %s: aggregation %s is only for AGGREGATE KEY tables", cd.Name, cd.Agg)
		}
		c, err := columnFromDef(cd, key)
		if err != nil {
			return nil, err
		}
		def.Schema.Columns = append(def.Schema.Columns, c)
	}
	for _, p := range st.Properties {
		def.Properties[p.Key] = p.Value
	}
	if st.Distribution != nil {
		for _, c := range st.Distribution.Columns {
			if def.Schema.Index(c) < 0 {
				return nil, rowttl.Errorf(rowttl.ErrInvalidSchema, "distribution column %s does not exist", c)
			}
		}
		def.Distribution = distributionText(st.Distribution)
	}
	return def, nil
}

func (s *Session) createTable(ctx context.Context, st *parser.CreateTable) error {
	def, err := definitionFromCreate(st)
	if err != nil {
		return err
	}
	// Every SPEC §5 check, with its exact text, before anything of our own.
	norm, _, err := table.Validate(def)
	if err != nil {
		return err
	}
	if norm.Model == schema.Aggregate {
		return unsupportedf("AGGREGATE KEY tables are not supported yet; use DUPLICATE KEY or UNIQUE KEY")
	}
	for _, c := range norm.Schema.Columns {
		if c.Generated {
			return unsupportedf("column %s: generated columns are not supported", c.Name)
		}
	}
	for _, k := range []string{table.PropSequenceCol, table.PropSequenceType} {
		if _, ok := norm.Properties[k]; ok {
			return unsupportedf("sequence columns (%s) are not supported", k)
		}
	}
	db, name := s.qualify(st.Table)
	_, err = s.db.CreateTable(db, name, def, st.IfNotExists)
	return err
}

func (s *Session) createTableLike(st *parser.CreateTableLike) error {
	src, _, _, err := s.openTable(st.Like)
	if err != nil {
		return err
	}
	db, name := s.qualify(st.Table)
	_, err = s.db.CreateTable(db, name, src.Definition(), st.IfNotExists)
	return err
}

func (s *Session) alterTable(ctx context.Context, st *parser.AlterTable) error {
	tbl, _, _, err := s.openTable(st.Table)
	if err != nil {
		return err
	}
	for _, op := range st.Ops {
		if err := s.alterOne(ctx, tbl, op); err != nil {
			return err
		}
	}
	return nil
}

func (s *Session) alterOne(ctx context.Context, tbl *table.Table, op parser.AlterOp) error {
	switch op := op.(type) {
	case *parser.AlterSetProperties:
		props := map[string]string{}
		for _, p := range op.Properties {
			props[p.Key] = p.Value
		}
		return tbl.SetProperties(ctx, props)
	case *parser.AlterAddColumns:
		if op.First {
			return unsupportedf("ADD COLUMN ... FIRST is not supported: key columns come first")
		}
		after := op.After
		for _, cd := range op.Columns {
			if cd.Key {
				return unsupportedf("adding key column %s is not supported", cd.Name)
			}
			c, err := columnFromDef(cd, false)
			if err != nil {
				return err
			}
			if c.Generated {
				return unsupportedf("column %s: generated columns are not supported", c.Name)
			}
			if err := tbl.AddColumn(ctx, c, after); err != nil {
				return err
			}
			if after != "" {
				after = c.Name
			}
		}
		return nil
	case *parser.AlterDropColumn:
		return tbl.DropColumn(ctx, op.Name)
	case *parser.AlterRenameColumn:
		return tbl.RenameColumn(ctx, op.Old, op.New)
	case *parser.AlterModifyColumn:
		if op.First || op.After != "" {
			return unsupportedf("MODIFY COLUMN cannot move a column")
		}
		def := tbl.Definition()
		cur, ok := def.Schema.Column(op.Column.Name)
		key := ok && def.Schema.Index(op.Column.Name) < def.Schema.KeyCount
		c, err := columnFromDef(op.Column, key)
		if err != nil {
			return err
		}
		if ok && op.Column.Null == parser.NullUnspecified {
			c.Nullable = cur.Nullable
		}
		return tbl.ModifyColumn(ctx, c)
	case *parser.AlterRenameTable:
		return unsupportedf("renaming a table is not supported")
	case *parser.AlterEnableFeature:
		if strings.EqualFold(op.Feature, "SEQUENCE_LOAD") {
			props := map[string]string{table.PropSequenceType: "BIGINT"}
			for _, p := range op.Properties {
				if strings.EqualFold(p.Key, "function_column.sequence_type") {
					props[table.PropSequenceType] = p.Value
				}
			}
			return tbl.SetProperties(ctx, props)
		}
		return unsupportedf("feature %q is not supported", op.Feature)
	}
	return unsupportedf("ALTER TABLE operation %T is not supported", op)
}
