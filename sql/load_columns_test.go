package sql

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/table"
	"github.com/rowttl/rowttl/ttlcol"
)

func loadDef(t *testing.T, ttl bool) (*table.Definition, ttlcol.Policy) {
	t.Helper()
	def := &table.Definition{Model: schema.Duplicate, Schema: schema.Schema{KeyCount: 1, Columns: []schema.Column{
		{Name: "id", Type: schema.BigIntType},
		{Name: "date", Type: schema.Type{Kind: schema.Date}, Nullable: true},
		{Name: "v", Type: schema.Type{Kind: schema.Int}, Nullable: true},
	}}}
	if ttl {
		def.Properties = map[string]string{table.PropEnableRowTTL: "true"}
	}
	d, pol, err := table.Validate(def)
	if err != nil {
		t.Fatal(err)
	}
	return d, pol
}

func TestCompileLoadColumns(t *testing.T) {
	def, pol := loadDef(t, true)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	shanghai, err := LoadZone("+08:00")
	if err != nil {
		t.Fatal(err)
	}
	lc, err := CompileLoadColumns("id, date, tmp, v = cast(tmp as int) * 2, __DORIS_TTL_COL__ = date", def, pol, shanghai, now)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range lc.Fields {
		names = append(names, f.Name+":"+f.Type.String())
	}
	if got := strings.Join(names, " "); got != "id:BIGINT date:DATE tmp:STRING" {
		t.Fatalf("fields %s", got)
	}
	if len(lc.Targets) != 4 || lc.Targets[0].Field != 0 || lc.Targets[1].Field != 1 || lc.Targets[2].Field != -1 || !lc.Targets[3].IsTTL() {
		t.Fatalf("targets %+v", lc.Targets)
	}
	row := []schema.Value{schema.IntVal(1), schema.IntVal(20455), schema.BytesVal([]byte("21"))} // 2026-01-02
	if v, err := lc.Targets[2].Eval(row); err != nil || v.Int != 42 {
		t.Fatalf("v = %v, %v", v, err)
	}
	// A DATE into __TTL__ is its midnight at +08:00.
	want := time.Date(2026, 1, 2, 0, 0, 0, 0, shanghai).UnixMicro()
	if v, err := lc.Targets[3].Eval(row); err != nil || v.Int != want {
		t.Fatalf("__TTL__ = %v, %v; want %d", v, err, want)
	}
	row[2] = schema.BytesVal([]byte("x"))
	if _, err := lc.Targets[2].Eval(row); err == nil {
		t.Fatal("cast('x' as int) evaluated")
	}
}

func TestCompileLoadColumnsErrors(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	plain, plainPol := loadDef(t, false)
	withTTL, ttlPol := loadDef(t, true)
	for _, c := range []struct {
		spec string
		def  *table.Definition
		want error
		text string
	}{
		{"id, __TTL__", plain, rowttl.ErrNotFound, "no row TTL"},
		{"id, x = 1", plain, rowttl.ErrNotFound, "unknown column x"},
		{"id, v = 1, v = 2", plain, rowttl.ErrInvalidArgument, "derived twice"},
		{"id, ID", plain, rowttl.ErrInvalidArgument, "duplicate column"},
		{"date", plain, rowttl.ErrInvalidArgument, "NOT NULL"},
		{"id, v = nope", plain, rowttl.ErrNotFound, "nope"},
		{"id, , v", plain, rowttl.ErrInvalidArgument, "column name"},
		{"id, t, __TTL__ = t", withTTL, rowttl.ErrInvalidArgument, "CAST"},
		{"id, __TTL__ = 1.5", withTTL, rowttl.ErrInvalidArgument, "integer"},
	} {
		pol := plainPol
		if c.def == withTTL {
			pol = ttlPol
		}
		_, err := CompileLoadColumns(c.spec, c.def, pol, nil, now)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%q: %v, want %v containing %q", c.spec, err, c.want, c.text)
		}
	}
	// An empty list binds the columns in order.
	lc, err := CompileLoadColumns(" ", plain, plainPol, nil, now)
	if err != nil || len(lc.Fields) != 3 || lc.Fields[1].Name != "date" {
		t.Fatalf("default list: %+v, %v", lc, err)
	}
}
