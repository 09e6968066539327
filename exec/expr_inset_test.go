package exec

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// TestInSet: x [NOT] IN a set filled once follows SQL's three-valued IN:
// a NULL x or a NULL in the set makes a miss NULL, an empty set makes
// everything FALSE (NOT IN: TRUE), NULL x included; EXISTS reads only
// whether rows came.
func TestInSet(t *testing.T) {
	mem := relMem(t)
	env := newTestEnv(mem)
	ints := func(vs ...any) arrow.Array {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for _, v := range vs {
			if v == nil {
				b.AppendNull()
			} else {
				b.Append(int64(v.(int)))
			}
		}
		return b.NewArray()
	}
	probe := ints(1, 2, nil, 1000000)
	defer probe.Release()
	batch := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil),
		[]arrow.Array{probe}, int64(probe.Len()))
	defer batch.Release()
	x := &ColumnRef{Index: 0, Name: "x", Typ: schema.BigIntType}
	for _, c := range []struct {
		parts   [][]any
		in, not string
	}{
		{[][]any{{1, 5}, {1000000}}, "true false NULL true", "false true NULL false"},
		{[][]any{{1}, {nil, 7}}, "true NULL NULL NULL", "false NULL NULL NULL"},
		{nil, "false false false false", "true true true true"},
		{[][]any{{nil}}, "NULL NULL NULL NULL", "NULL NULL NULL NULL"},
	} {
		set := NewValueSet(schema.BigIntType)
		for _, p := range c.parts {
			a := ints(p...)
			if err := set.Add(env, a); err != nil {
				t.Fatal(err)
			}
			a.Release()
		}
		if err := set.Seal(env); err != nil {
			t.Fatal(err)
		}
		for _, not := range []bool{false, true} {
			got, err := (&InSet{X: x, Set: set, Not: not, Text: "(q)"}).Eval(env, batch)
			if err != nil {
				t.Fatal(err)
			}
			want := c.in
			if not {
				want = c.not
			}
			if s := boolsText(got); s != want {
				t.Errorf("%v NOT %v: %s, want %s", c.parts, not, s, want)
			}
			got.Release()
		}
		set.Reset()
	}
	if env.Budget.Used() != 0 {
		t.Errorf("%d bytes charged after Reset", env.Budget.Used())
	}

	// EXISTS over counted rows.
	set := NewValueSet(schema.BooleanType)
	set.AddRows(3)
	if err := set.Seal(env); err != nil {
		t.Fatal(err)
	}
	got, err := (&ExistsSet{Set: set, Not: true}).Eval(env, batch)
	if err != nil {
		t.Fatal(err)
	}
	if s := boolsText(got); s != "false false false false" {
		t.Errorf("NOT EXISTS over 3 rows: %s", s)
	}
	got.Release()

	// Failures: a value of another type, a probe before Seal, a set past
	// the budget.
	str := array.NewStringBuilder(mem)
	str.Append("a")
	sa := str.NewArray()
	str.Release()
	defer sa.Release()
	if err := NewValueSet(schema.BigIntType).Add(env, sa); !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Errorf("Add of strings: %v", err)
	}
	unsealed := NewValueSet(schema.BigIntType)
	if _, err := (&InSet{X: x, Set: unsealed, Text: "(q)"}).Eval(env, batch); err == nil || !strings.Contains(err.Error(), "before its subquery ran") {
		t.Errorf("Eval before Seal: %v", err)
	}
	small := &Env{Mem: mem, Budget: NewBudget(16)}
	if err := NewValueSet(schema.BigIntType).Add(small, probe); !errors.Is(err, rowttl.ErrMemLimit) || !strings.Contains(err.Error(), "IN subquery") {
		t.Errorf("over budget: %v", err)
	}
}

func boolsText(a arrow.Array) string {
	b := a.(*array.Boolean)
	out := make([]string, b.Len())
	for i := range out {
		switch {
		case b.IsNull(i):
			out[i] = "NULL"
		case b.Value(i):
			out[i] = "true"
		default:
			out[i] = "false"
		}
	}
	return strings.Join(out, " ")
}
