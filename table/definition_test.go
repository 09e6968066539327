package table

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

func TestCreateErrors(t *testing.T) {
	withCols := func(extra ...schema.Column) schema.Schema {
		s := eventsSchema()
		s.Columns = append(s.Columns, extra...)
		return s
	}
	props := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	ttlOn := func(kv ...string) map[string]string {
		return props(append([]string{PropEnableRowTTL, "true"}, kv...)...)
	}
	aggSchema := schema.Schema{KeyCount: 1, Columns: []schema.Column{
		{Name: "k", Type: schema.BigIntType},
		{Name: "v", Type: schema.BigIntType, Agg: "SUM"},
	}}
	cases := []struct {
		name   string
		schema schema.Schema
		model  schema.Model
		props  map[string]string
		want   string
		is     error
	}{
		{"ttl props without enable", eventsSchema(), schema.Duplicate, props(PropTTLCol, "event_time", PropTTL, "1 day"),
			"function_column.enable_row_ttl must be true when row ttl properties are specified", rowttl.ErrInvalidProperty},
		{"ttl props with enable false", eventsSchema(), schema.Duplicate, props(PropEnableRowTTL, "false", PropTTLTimeZone, "UTC"),
			"function_column.enable_row_ttl must be true when row ttl properties are specified", rowttl.ErrInvalidProperty},
		{"enable not boolean", eventsSchema(), schema.Duplicate, props(PropEnableRowTTL, "yes"),
			"function_column.enable_row_ttl must be true or false", rowttl.ErrInvalidProperty},
		{"col without ttl", eventsSchema(), schema.Duplicate, ttlOn(PropTTLCol, "event_time"),
			"function_column.ttl_col and function_column.ttl must be set together", rowttl.ErrInvalidProperty},
		{"ttl without col", eventsSchema(), schema.Duplicate, ttlOn(PropTTL, "1 day"),
			"function_column.ttl_col and function_column.ttl must be set together", rowttl.ErrInvalidProperty},
		{"zone in direct mode", eventsSchema(), schema.Duplicate, ttlOn(PropTTLTimeZone, "+08:00"),
			"function_column.ttl_time_zone requires function_column.ttl_col", rowttl.ErrInvalidProperty},
		{"aggregate with ttl", aggSchema, schema.Aggregate, ttlOn(),
			"row ttl does not support AGG_KEYS", rowttl.ErrInvalidProperty},
		{"sequence column with ttl", eventsSchema(), schema.UniqueMOW, ttlOn(PropSequenceCol, "event_time"),
			"row ttl and sequence column cannot be enabled at the same time", rowttl.ErrInvalidProperty},
		{"source missing", eventsSchema(), schema.Duplicate, ttlOn(PropTTLCol, "nope", PropTTL, "1 day", PropTTLTimeZone, "UTC"),
			"row ttl column does not exist: nope", rowttl.ErrInvalidProperty},
		{"source generated", withCols(schema.Column{Name: "g", Type: schema.DatetimeType(0), Nullable: true, Generated: true}), schema.Duplicate,
			ttlOn(PropTTLCol, "g", PropTTL, "1 day", PropTTLTimeZone, "UTC"),
			"row ttl column does not support generated columns: g", rowttl.ErrInvalidProperty},
		{"source is key", eventsSchema(), schema.Duplicate, ttlOn(PropTTLCol, "id", PropTTL, "1 day", PropTTLTimeZone, "UTC"),
			"row ttl column must be a value column: id", rowttl.ErrInvalidProperty},
		{"source wrong type", eventsSchema(), schema.Duplicate, ttlOn(PropTTLCol, "amount", PropTTL, "1 day"),
			"row ttl column only supports DATE/DATETIME types: amount", rowttl.ErrInvalidProperty},
		{"source timestamp_ns", withCols(schema.Column{Name: "ns", Type: schema.Type{Kind: schema.TimestampNS}, Nullable: true}), schema.Duplicate,
			ttlOn(PropTTLCol, "ns", PropTTL, "1 day"),
			"row ttl column only supports DATE/DATETIME types: ns", rowttl.ErrInvalidProperty},
		{"datetime without zone", eventsSchema(), schema.Duplicate, ttlOn(PropTTLCol, "event_time", PropTTL, "1 day"),
			"function_column.ttl_time_zone is required for DATE/DATETIME row ttl columns", rowttl.ErrInvalidProperty},
		{"timestamptz non-zero zone", withCols(schema.Column{Name: "tz", Type: schema.TimestampTZType(6), Nullable: true}), schema.Duplicate,
			ttlOn(PropTTLCol, "tz", PropTTL, "1 day", PropTTLTimeZone, "+08:00"),
			"TIMESTAMPTZ row ttl column only supports +00:00 time zone", rowttl.ErrInvalidProperty},
		{"region zone", eventsSchema(), schema.Duplicate, ttlOn(PropTTLCol, "event_time", PropTTL, "1 day", PropTTLTimeZone, "Asia/Shanghai"),
			"function_column.ttl_time_zone must be UTC, Z, or a fixed UTC offset in the form +HH:MM or -HH:MM", rowttl.ErrInvalidProperty},
		{"zone out of range", eventsSchema(), schema.Duplicate, ttlOn(PropTTLCol, "event_time", PropTTL, "1 day", PropTTLTimeZone, "+14:30"),
			"function_column.ttl_time_zone must be a fixed UTC offset between -12:00 and +14:00", rowttl.ErrInvalidProperty},
		{"negative retention", eventsSchema(), schema.Duplicate, ttlOn(PropTTLCol, "event_time", PropTTL, "-1 day", PropTTLTimeZone, "UTC"),
			"row ttl duration must not be negative", rowttl.ErrInvalidProperty},
		{"decimal retention", eventsSchema(), schema.Duplicate, ttlOn(PropTTLCol, "event_time", PropTTL, "1.5 days", PropTTLTimeZone, "UTC"),
			"invalid or overflowing row ttl duration: 1.5 days", rowttl.ErrInvalidProperty},
		{"combined retention", eventsSchema(), schema.Duplicate, ttlOn(PropTTLCol, "event_time", PropTTL, "1 day 2 hours", PropTTLTimeZone, "UTC"),
			"invalid or overflowing row ttl duration: 1 day 2 hours", rowttl.ErrInvalidProperty},
		{"month retention", eventsSchema(), schema.Duplicate, ttlOn(PropTTLCol, "event_time", PropTTL, "1 month", PropTTLTimeZone, "UTC"),
			"invalid or overflowing row ttl duration: 1 month", rowttl.ErrInvalidProperty},
		{"overflowing retention", eventsSchema(), schema.Duplicate, ttlOn(PropTTLCol, "event_time", PropTTL, "9999999999999 weeks", PropTTLTimeZone, "UTC"),
			"invalid or overflowing row ttl duration: 9999999999999 weeks", rowttl.ErrInvalidProperty},
		{"reserved __TTL__ column", withCols(schema.Column{Name: "__TTL__", Type: schema.BigIntType, Nullable: true}), schema.Duplicate, ttlOn(),
			"column name __TTL__ is reserved", rowttl.ErrInvalidSchema},
		{"reserved __DORIS_ column", withCols(schema.Column{Name: "__DORIS_X__", Type: schema.BigIntType, Nullable: true}), schema.Duplicate, nil,
			"column name __DORIS_X__ is reserved", rowttl.ErrInvalidSchema},
		{"duplicate column", withCols(schema.Column{Name: "ID", Type: schema.BigIntType}), schema.Duplicate, nil,
			"duplicate column name ID", rowttl.ErrInvalidSchema},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "t")
			_, err := Create(dir, &Definition{Schema: c.schema, Model: c.model, Properties: c.props}, nil)
			if err == nil {
				t.Fatalf("created; want error %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
			if !errors.Is(err, c.is) {
				t.Fatalf("error %q does not wrap %v", err, c.is)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("a failed create left %s behind", dir)
			}
		})
	}
}

func TestCreateNormalisesProperties(t *testing.T) {
	dir := t.TempDir()
	tbl := mustCreate(t, dir, sourceDef("1 day", "+08:00"), nil)
	def := tbl.Definition()
	if got := def.Properties[PropTTL]; got != "86400" {
		t.Errorf("ttl stored as %q, want 86400", got)
	}
	pol := tbl.Policy()
	if pol.Retention != 86400 || pol.ZoneOffset != 8*3600 || pol.SourceColumn != "event_time" {
		t.Errorf("policy %+v", pol)
	}
	checkClose(t, tbl)
	tbl, err := Open(dir, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if got := tbl.Policy(); got != pol {
		t.Errorf("reopened policy %+v, want %+v", got, pol)
	}
	checkClose(t, tbl)
}

func TestCreateExisting(t *testing.T) {
	dir := t.TempDir()
	tbl := mustCreate(t, dir, directDef(), quiet())
	checkClose(t, tbl)
	if _, err := Create(dir, directDef(), quiet()); !errors.Is(err, rowttl.ErrExists) {
		t.Fatalf("create over a table: %v", err)
	}
	if _, err := Open(filepath.Join(dir, "missing"), nil); !errors.Is(err, rowttl.ErrNotFound) {
		t.Fatalf("open of nothing: %v", err)
	}
}

// TestSharedDefinitionIsNeverModified checks what SharedDefinition relies
// on: a change of the definition installs a new one, leaving the one a
// statement holds as it was.
func TestSharedDefinitionIsNeverModified(t *testing.T) {
	tbl := mustCreate(t, t.TempDir(), directDef(), &Options{DisableAutoCompaction: true})
	defer checkClose(t, tbl)
	ctx := context.Background()
	held := tbl.SharedDefinition()
	want := held.Clone()
	if err := tbl.AddColumn(ctx, schema.Column{Name: "extra", Type: schema.BigIntType, Nullable: true}, ""); err != nil {
		t.Fatal(err)
	}
	if err := tbl.SetProperties(ctx, map[string]string{PropDisableAutoComp: "false"}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(held, want) {
		t.Fatalf("held definition changed:\n%+v\nwant\n%+v", held, want)
	}
	now := tbl.SharedDefinition()
	if now == held || now.Schema.Index("extra") < 0 || now.Properties[PropDisableAutoComp] != "false" {
		t.Fatalf("new definition %+v lacks the changes", now)
	}
	if d := tbl.Definition(); d == now || !reflect.DeepEqual(d, now) {
		t.Fatalf("Definition is not a copy of the shared one")
	}
}
