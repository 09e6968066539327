package table

import (
	"context"
	"strconv"
	"strings"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
)

// errTTLCreateOnly is SPEC §5's answer to any ALTER of the TTL switches.
func errTTLCreateOnly() error {
	return propErr("TTL properties can only be specified when creating a table")
}

// SetProperties changes table properties (ALTER TABLE t SET (...)). Of the
// row TTL properties only function_column.ttl can change, in source mode,
// to the same or a shorter retention; the new policy is made durable before
// anything else sees it, so it may already be in force if the call fails
// later. The other properties a table accepts after creation are
// disable_auto_compaction and rowttl.reclaim_deadline; any other name is
// recorded as given.
func (t *Table) SetProperties(ctx context.Context, props map[string]string) error {
	return t.alter(func(def *Definition, pol *ttlcol.Policy) error {
		return setProperties(def, pol, props)
	})
}

func setProperties(def *Definition, pol *ttlcol.Policy, props map[string]string) error {
	for k, val := range props {
		key := strings.ToLower(strings.TrimSpace(k))
		switch key {
		case PropEnableRowTTL, PropTTLCol, PropTTLTimeZone:
			return errTTLCreateOnly()
		case PropTTL:
			if pol.Mode != ttlcol.SourceMode {
				return errTTLCreateOnly()
			}
			secs, err := ttlcol.ParseRetention(val)
			if err != nil {
				return err
			}
			if secs > pol.Retention {
				return propErr("Increasing function_column.ttl is not supported: %d seconds is longer than the current %d", secs, pol.Retention)
			}
			pol.Retention = secs
			def.Properties[PropTTL] = strconv.FormatInt(secs, 10)
		case PropSequenceCol, PropSequenceType:
			if pol.Mode != ttlcol.NoTTL {
				return propErr("row ttl and sequence column cannot be enabled at the same time")
			}
			return rowttl.Errorf(rowttl.ErrNotSupported, "sequence columns")
		case PropMergeOnWrite:
			return propErr("%s can only be specified when creating a table", PropMergeOnWrite)
		case PropDisableAutoComp:
			lv := strings.ToLower(strings.TrimSpace(val))
			if lv != "true" && lv != "false" {
				return propErr("%s must be true or false, got %q", key, val)
			}
			def.Properties[key] = lv
		case PropReclaimDeadline:
			secs, err := ttlcol.ParseRetention(val)
			if err != nil {
				return err
			}
			def.Properties[key] = strconv.FormatInt(secs, 10)
		case PropCompression:
			name, err := compressionName(val)
			if err != nil {
				return err
			}
			def.Properties[key] = name
		default:
			if strings.HasPrefix(key, propFunctionPrefix) {
				return propErr("unknown property %s", k)
			}
			def.Properties[key] = val
		}
	}
	return nil
}

// alter runs fn on a copy of the definition and policy under the writer
// lock and makes the result durable, then current; an error from fn
// changes nothing.
func (t *Table) alter(fn func(def *Definition, pol *ttlcol.Policy) error) error {
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	// Memtable rows were prepared under the old definition: flush them first.
	v, err := t.writableDrained(context.Background())
	if err != nil {
		return err
	}
	defer v.unref()
	def, pol := v.def.Clone(), v.policy
	if err := fn(def, &pol); err != nil {
		return err
	}
	return t.vs.logAndApply(&versionEdit{Definition: def, Policy: &pol})
}

// hiddenOrSource reports whether name is __TTL__ (or its alias) or the row
// TTL source column.
func hiddenOrSource(pol ttlcol.Policy, name string) bool {
	if schema.IsTTLName(name) || strings.EqualFold(name, schema.DeleteSignColumn) {
		return true
	}
	return pol.Mode == ttlcol.SourceMode && strings.EqualFold(name, pol.SourceColumn)
}

// AddColumn adds a value column (metadata only: rows written before read
// its default). after names the column it follows; empty means last.
func (t *Table) AddColumn(ctx context.Context, c schema.Column, after string) error {
	return t.alter(func(def *Definition, pol *ttlcol.Policy) error {
		if schema.IsReservedName(c.Name) {
			return rowttl.Errorf(rowttl.ErrInvalidSchema, "column name %s is reserved for hidden columns", c.Name)
		}
		if def.Schema.Index(c.Name) >= 0 {
			return rowttl.Errorf(rowttl.ErrExists, "column %s already exists", c.Name)
		}
		if err := c.Type.Validate(); err != nil {
			return rowttl.Errorf(rowttl.ErrInvalidSchema, "column %s: %w", c.Name, err)
		}
		if !c.Nullable && c.DefaultKind == schema.NoDefault {
			return rowttl.Errorf(rowttl.ErrInvalidSchema, "column %s is NOT NULL, so adding it needs a DEFAULT", c.Name)
		}
		if c.DefaultKind == schema.DefaultLiteral {
			if _, err := schema.ParseLiteral(c.Type, c.Default); err != nil {
				return rowttl.Errorf(rowttl.ErrInvalidSchema, "column %s: bad default: %w", c.Name, err)
			}
		}
		if def.Model == schema.Aggregate && c.Agg == "" {
			return rowttl.Errorf(rowttl.ErrInvalidSchema, "value column %s of an AGGREGATE KEY table needs an aggregation", c.Name)
		}
		c.ID = def.NextColumnID
		def.NextColumnID++
		pos := len(def.Schema.Columns)
		if after != "" {
			i := def.Schema.Index(after)
			if i < 0 {
				return rowttl.Errorf(rowttl.ErrNotFound, "unknown column %s", after)
			}
			pos = max(i+1, def.Schema.KeyCount)
		}
		cols := append([]schema.Column{}, def.Schema.Columns[:pos]...)
		cols = append(cols, c)
		def.Schema.Columns = append(cols, def.Schema.Columns[pos:]...)
		return nil
	})
}

// DropColumn removes a value column (metadata only). The row TTL source
// column and the hidden columns cannot be dropped, nor can key columns.
func (t *Table) DropColumn(ctx context.Context, name string) error {
	return t.alter(func(def *Definition, pol *ttlcol.Policy) error {
		if hiddenOrSource(*pol, name) {
			return propErr("Can not drop a row ttl source or hidden column: %s", name)
		}
		i := def.Schema.Index(name)
		if i < 0 {
			return rowttl.Errorf(rowttl.ErrNotFound, "unknown column %s", name)
		}
		if i < def.Schema.KeyCount {
			return rowttl.Errorf(rowttl.ErrNotSupported, "key column %s cannot be dropped", name)
		}
		if len(def.Schema.Columns) == 1 {
			return rowttl.Errorf(rowttl.ErrNotSupported, "the last column cannot be dropped")
		}
		def.Schema.Columns = append(def.Schema.Columns[:i:i], def.Schema.Columns[i+1:]...)
		return nil
	})
}

// RenameColumn renames a column (metadata only). The row TTL source column
// and the hidden columns cannot be renamed.
func (t *Table) RenameColumn(ctx context.Context, oldName, newName string) error {
	return t.alter(func(def *Definition, pol *ttlcol.Policy) error {
		if hiddenOrSource(*pol, oldName) || schema.IsTTLName(newName) {
			return propErr("Can not rename a row ttl source or hidden column: %s", oldName)
		}
		i := def.Schema.Index(oldName)
		if i < 0 {
			return rowttl.Errorf(rowttl.ErrNotFound, "unknown column %s", oldName)
		}
		if schema.IsReservedName(newName) {
			return rowttl.Errorf(rowttl.ErrInvalidSchema, "column name %s is reserved for hidden columns", newName)
		}
		if j := def.Schema.Index(newName); j >= 0 && j != i {
			return rowttl.Errorf(rowttl.ErrExists, "column %s already exists", newName)
		}
		def.Schema.Columns[i].Name = newName
		return nil
	})
}

// ModifyColumn changes a column's comment, default or nullability to NULL
// (metadata only); changing the type needs a rewrite and is refused. The row
// TTL source column and the hidden columns cannot be modified at all.
func (t *Table) ModifyColumn(ctx context.Context, c schema.Column) error {
	return t.alter(func(def *Definition, pol *ttlcol.Policy) error {
		if hiddenOrSource(*pol, c.Name) {
			return propErr("Can not modify a row ttl source or hidden column: %s", c.Name)
		}
		i := def.Schema.Index(c.Name)
		if i < 0 {
			return rowttl.Errorf(rowttl.ErrNotFound, "unknown column %s", c.Name)
		}
		cur := def.Schema.Columns[i]
		if cur.Type != c.Type {
			return rowttl.Errorf(rowttl.ErrNotSupported, "changing the type of column %s from %s to %s", c.Name, cur.Type, c.Type)
		}
		if cur.Nullable && !c.Nullable {
			return rowttl.Errorf(rowttl.ErrNotSupported, "column %s cannot become NOT NULL", c.Name)
		}
		c.ID, c.Name = cur.ID, cur.Name
		def.Schema.Columns[i] = c
		return nil
	})
}
