package table

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/ttlcol"
)

// Table property names.
const (
	PropEnableRowTTL    = "function_column.enable_row_ttl"
	PropTTLCol          = "function_column.ttl_col"
	PropTTL             = "function_column.ttl"
	PropTTLTimeZone     = "function_column.ttl_time_zone"
	PropSequenceCol     = "function_column.sequence_col"
	PropSequenceType    = "function_column.sequence_type"
	PropMergeOnWrite    = "enable_unique_key_merge_on_write"
	PropDisableAutoComp = "disable_auto_compaction"
	PropReclaimDeadline = "rowttl.reclaim_deadline"
	PropPartialUpdate   = "enable_unique_key_partial_update"
	// PropCompression chooses the codec of the table's data files, as in
	// Doris (segment.ParseCodec: default, zstd, lz4, none); files written
	// before a change keep theirs.
	PropCompression      = "compression"
	propFunctionPrefix   = "function_column."
	propTTLSecondsFormat = "%d"
)

// Definition is what CREATE TABLE says: the columns, the key model and the
// properties. Properties are string-valued, as in Doris.
type Definition struct {
	Schema     schema.Schema     `json:"schema"`
	Model      schema.Model      `json:"model"`
	Properties map[string]string `json:"properties,omitempty"`
	// Comment and Distribution are recorded for SHOW CREATE TABLE; the
	// engine has one bucket whatever the distribution says.
	Comment      string `json:"comment,omitempty"`
	Distribution string `json:"distribution,omitempty"`
	// NextColumnID is the ID the next added column gets; IDs of dropped
	// columns are never reused.
	NextColumnID uint32 `json:"next_column_id,omitempty"`
}

// Clone returns a deep copy.
func (d *Definition) Clone() *Definition {
	c := *d
	c.Schema = *d.Schema.Clone()
	c.Properties = make(map[string]string, len(d.Properties))
	for k, v := range d.Properties {
		c.Properties[k] = v
	}
	return &c
}

// PropertyNames returns the property names in a stable order.
func (d *Definition) PropertyNames() []string {
	names := make([]string, 0, len(d.Properties))
	for k := range d.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// compressionName checks a value of the compression property and returns
// the name it is stored and shown as (upper case, as Doris shows it).
func compressionName(v string) (string, error) {
	c, err := segment.ParseCodec(v)
	if errors.Is(err, rowttl.ErrInvalidArgument) {
		return "", propErr("unknown %s %q: default, zstd, lz4 or none", PropCompression, v)
	}
	if err != nil {
		return "", err
	}
	return strings.ToUpper(c.String()), nil
}

// codec returns the codec the compression property of d chooses; Validate
// has checked it.
func (d *Definition) codec() segment.Codec {
	c, _ := segment.ParseCodec(d.Properties[PropCompression])
	return c
}

func propErr(format string, args ...any) error {
	return rowttl.Errorf(rowttl.ErrInvalidProperty, format, args...)
}

// Validate checks a definition against SPEC §1, §2 and §5, and returns it
// normalised (lower-case property names, retention in whole seconds, model
// settled by enable_unique_key_merge_on_write) with its TTL policy. The
// checks run in the order in which Doris reports them, so that a definition
// with several faults names the same one.
func Validate(in *Definition) (*Definition, ttlcol.Policy, error) {
	var pol ttlcol.Policy
	d := in.Clone()
	props := map[string]string{}
	for k, v := range in.Properties {
		props[strings.ToLower(strings.TrimSpace(k))] = v
	}
	d.Properties = props

	for _, c := range d.Schema.Columns {
		if schema.IsReservedName(c.Name) {
			return nil, pol, rowttl.Errorf(rowttl.ErrInvalidSchema, "column name %s is reserved: names beginning with __DORIS_ and the name __TTL__ belong to hidden columns", c.Name)
		}
	}
	if err := d.Schema.Validate(); err != nil {
		return nil, pol, err
	}
	// Give columns IDs when the caller did not.
	if d.Schema.MaxID() == 0 {
		for i := range d.Schema.Columns {
			d.Schema.Columns[i].ID = uint32(i + 1)
		}
	}
	if d.NextColumnID <= d.Schema.MaxID() {
		d.NextColumnID = d.Schema.MaxID() + 1
	}
	ids := map[uint32]bool{}
	for _, c := range d.Schema.Columns {
		if c.ID == 0 || ids[c.ID] {
			return nil, pol, rowttl.Errorf(rowttl.ErrInvalidSchema, "column %s: column IDs must be unique and non-zero", c.Name)
		}
		ids[c.ID] = true
	}

	// The key model.
	if d.Model.IsUnique() {
		if v, ok := props[PropMergeOnWrite]; ok {
			switch strings.ToLower(v) {
			case "true":
				d.Model = schema.UniqueMOW
			case "false":
				d.Model = schema.UniqueMOR
			default:
				return nil, pol, propErr("%s must be true or false, got %q", PropMergeOnWrite, v)
			}
		}
		if d.Model == schema.UniqueMOW {
			props[PropMergeOnWrite] = "true"
		} else {
			props[PropMergeOnWrite] = "false"
		}
	} else if _, ok := props[PropMergeOnWrite]; ok {
		return nil, pol, propErr("%s is only for UNIQUE KEY tables", PropMergeOnWrite)
	}
	if d.Model == schema.Aggregate {
		for _, c := range d.Schema.Columns[d.Schema.KeyCount:] {
			if c.Agg == "" {
				return nil, pol, rowttl.Errorf(rowttl.ErrInvalidSchema, "value column %s of an AGGREGATE KEY table needs an aggregation (SUM, MIN, MAX, REPLACE)", c.Name)
			}
		}
	}

	for _, name := range []string{PropDisableAutoComp} {
		if v, ok := props[name]; ok {
			lv := strings.ToLower(v)
			if lv != "true" && lv != "false" {
				return nil, pol, propErr("%s must be true or false, got %q", name, v)
			}
			props[name] = lv
		}
	}
	if v, ok := props[PropReclaimDeadline]; ok {
		secs, err := ttlcol.ParseRetention(v)
		if err != nil {
			return nil, pol, err
		}
		props[PropReclaimDeadline] = strconv.FormatInt(secs, 10)
	}
	if v, ok := props[PropCompression]; ok {
		name, err := compressionName(v)
		if err != nil {
			return nil, pol, err
		}
		props[PropCompression] = name
	}

	p, err := validateTTL(d, props)
	if err != nil {
		return nil, pol, err
	}
	// Refused only after the row TTL checks, whose SPEC texts come first.
	if _, ok := props[PropSequenceCol]; ok {
		return nil, pol, rowttl.Errorf(rowttl.ErrNotSupported, "sequence columns")
	}
	if _, ok := props[PropSequenceType]; ok {
		return nil, pol, rowttl.Errorf(rowttl.ErrNotSupported, "sequence columns")
	}
	for _, c := range d.Schema.Columns {
		if c.Generated {
			return nil, pol, rowttl.Errorf(rowttl.ErrNotSupported, "generated column %s", c.Name)
		}
	}
	return d, p, nil
}

func validateTTL(d *Definition, props map[string]string) (ttlcol.Policy, error) {
	var pol ttlcol.Policy
	enable, hasEnable := props[PropEnableRowTTL]
	ttlColName, hasCol := props[PropTTLCol]
	ttlText, hasTTL := props[PropTTL]
	zoneText, hasZone := props[PropTTLTimeZone]
	_, hasSeq := props[PropSequenceCol]
	_, hasSeqType := props[PropSequenceType]

	on := false
	if hasEnable {
		switch strings.ToLower(strings.TrimSpace(enable)) {
		case "true":
			on = true
		case "false":
		default:
			return pol, propErr("function_column.enable_row_ttl must be true or false")
		}
		props[PropEnableRowTTL] = strconv.FormatBool(on)
	}
	if !on {
		if hasCol || hasTTL || hasZone {
			return pol, propErr("function_column.enable_row_ttl must be true when row ttl properties are specified")
		}
		if hasEnable {
			// "false" is the default; it is not recorded.
			delete(props, PropEnableRowTTL)
		}
		return pol, nil
	}
	if d.Model == schema.Aggregate {
		return pol, propErr("row ttl does not support AGG_KEYS")
	}
	if hasSeq || hasSeqType {
		return pol, propErr("row ttl and sequence column cannot be enabled at the same time")
	}
	if hasCol != hasTTL {
		return pol, propErr("function_column.ttl_col and function_column.ttl must be set together")
	}
	if !hasCol {
		if hasZone {
			return pol, propErr("function_column.ttl_time_zone requires function_column.ttl_col")
		}
		pol.Mode = ttlcol.DirectMode
		return pol, nil
	}

	pol.Mode = ttlcol.SourceMode
	idx := d.Schema.Index(strings.TrimSpace(ttlColName))
	if idx < 0 {
		return pol, propErr("row ttl column does not exist: %s", ttlColName)
	}
	col := d.Schema.Columns[idx]
	if col.Generated {
		return pol, propErr("row ttl column does not support generated columns: %s", col.Name)
	}
	if idx < d.Schema.KeyCount {
		return pol, propErr("row ttl column must be a value column: %s", col.Name)
	}
	switch col.Type.Kind {
	case schema.Date, schema.Datetime, schema.TimestampTZ:
	default:
		return pol, propErr("row ttl column only supports DATE/DATETIME types: %s", col.Name)
	}
	pol.SourceColumn = col.Name
	props[PropTTLCol] = col.Name

	secs, err := ttlcol.ParseRetention(ttlText)
	if err != nil {
		return pol, err
	}
	pol.Retention = secs
	props[PropTTL] = strconv.FormatInt(secs, 10)

	if col.Type.Kind == schema.TimestampTZ {
		if hasZone {
			off, err := ttlcol.ParseZone(zoneText)
			if err != nil {
				return pol, err
			}
			if off != 0 {
				return pol, propErr("TIMESTAMPTZ row ttl column only supports +00:00 time zone")
			}
		}
		props[PropTTLTimeZone] = ttlcol.FormatZone(0)
		return pol, nil
	}
	if !hasZone {
		return pol, propErr("function_column.ttl_time_zone is required for DATE/DATETIME row ttl columns")
	}
	off, err := ttlcol.ParseZone(zoneText)
	if err != nil {
		return pol, err
	}
	pol.ZoneOffset = off
	props[PropTTLTimeZone] = strings.TrimSpace(zoneText)
	return pol, nil
}
