package exec

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/schema"
)

func dv(text string, t schema.Type) schema.Value {
	n, err := decimal.Parse(text, t.Decimal())
	if err != nil {
		panic(err)
	}
	return schema.DecimalVal(n)
}

func TestDecimalKernels(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	env := &Env{Mem: mem}
	d2, d5 := schema.DecimalType(10, 2), schema.DecimalType(12, 5)
	b := batchOf(mem, []schema.Type{d2, d5, i64}, [][]schema.Value{
		{dv("1.50", d2), dv("1.5", d5), iv(3)},
		{dv("-2.25", d2), dv("0.00001", d5), iv(0)},
		{schema.Null, dv("2.5", d5), schema.Null},
	})
	defer b.Release()
	a, bb, n := col(0, d2), col(1, d5), col(2, i64)
	for _, c := range []struct {
		op     ArithOp
		l, r   Expr
		lt, rt decimal.Type
		typ    string
		want   string
	}{
		{Add, a, bb, d2.Decimal(), d5.Decimal(), "DECIMAL(14,5)", "3.00000,-2.24999,NULL"},
		{Mul, a, n, d2.Decimal(), decimal.IntegerType(19), "DECIMAL(29,2)", "4.50,0.00,NULL"},
		{Div, a, n, d2.Decimal(), decimal.IntegerType(19), "DECIMAL(14,6)", "0.500000,NULL,NULL"},
		{Mod, bb, a, d5.Decimal(), d2.Decimal(), "DECIMAL(13,5)", "0.00000,0.00001,NULL"},
		{IntDiv, a, bb, d2.Decimal(), d5.Decimal(), "BIGINT", "1,-225000,NULL"},
		{Sub, &Literal{Typ: schema.Type{}, Val: schema.Null, Text: "NULL"}, a, decimal.IntegerType(1), d2.Decimal(), "DECIMAL(11,2)", "NULL,NULL,NULL"},
	} {
		k, err := NewDecimalArith(c.op, c.l, c.r, c.lt, c.rt, "x")
		if err != nil {
			t.Fatal(err)
		}
		if k.Type().String() != c.typ {
			t.Errorf("%s: type %s, want %s", k, k.Type(), c.typ)
		}
		out, err := k.Eval(env, b)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if got := show(out, k.Type()); got != c.want {
			t.Errorf("%s = %s, want %s", k, got, c.want)
		}
		out.Release()
	}
	for _, c := range []struct {
		op   CmpOp
		l, r Expr
		want string
	}{
		{Eq, a, bb, "true,false,NULL"},
		{Lt, a, n, "true,true,NULL"},
		{Ge, bb, &Literal{Typ: d2, Val: dv("1.50", d2), Text: "1.50"}, "true,false,true"},
		{NullSafeEq, a, n, "false,false,true"},
	} {
		k, err := NewDecimalCompare(c.op, c.l, c.r)
		if err != nil {
			t.Fatal(err)
		}
		out, err := k.Eval(env, b)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if got := show(out, schema.BooleanType); got != c.want {
			t.Errorf("%s = %s, want %s", k, got, c.want)
		}
		out.Release()
	}
	// A result past 38 digits fails with the row engine's text and frees
	// what it built.
	d38 := schema.DecimalType(38, 0)
	big := batchOf(mem, []schema.Type{d38}, [][]schema.Value{{dv("1", d38)}, {dv("99999999999999999999999999999999999999", d38)}})
	defer big.Release()
	k, _ := NewDecimalArith(Add, col(0, d38), &Literal{Typ: i64, Val: iv(1), Text: "1"}, d38.Decimal(), decimal.IntegerType(3), "big + 1")
	if _, err := k.Eval(env, big); !errors.Is(err, rowttl.ErrInvalidArgument) || err.Error() != "DECIMAL value is out of range in 'big + 1'" {
		t.Errorf("overflow: %v", err)
	}
	if _, err := NewDecimalArith(Add, col(0, f64), a, decimal.IntegerType(1), d2.Decimal(), "x"); !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Errorf("a DOUBLE operand: %v", err)
	}
	if _, err := NewDecimalCompare(Eq, col(0, str), a); !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Errorf("a string operand: %v", err)
	}
}

func TestCastDecimal(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	env := &Env{Mem: mem}
	d2 := schema.DecimalType(10, 2)
	b := batchOf(mem, []schema.Type{d2, i64, f64, str}, [][]schema.Value{
		{dv("1.55", d2), iv(12), fv(2.25), sv("3.456")},
		{dv("-2.25", d2), iv(-5), fv(-0.05), sv(" -1e1 ")},
		{schema.Null, schema.Null, schema.Null, schema.Null},
	})
	defer b.Release()
	d1 := schema.DecimalType(4, 1)
	for _, c := range []struct {
		x    Expr
		to   schema.Type
		want string
	}{
		{col(0, d2), d1, "1.6,-2.3,NULL"},
		{col(1, i64), d1, "12.0,-5.0,NULL"},
		{col(2, f64), d1, "2.3,-0.1,NULL"},
		{col(3, str), d1, "3.5,-10.0,NULL"},
		{col(0, d2), schema.TinyIntType, "1,-2,NULL"},
	} {
		if !CanCast(c.x.Type(), c.to) {
			t.Fatalf("CanCast(%s, %s) is false", c.x.Type(), c.to)
		}
		k := &Cast{X: c.x, To: c.to}
		out, err := k.Eval(env, b)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if got := show(out, c.to); got != c.want {
			t.Errorf("%s = %s, want %s", k, got, c.want)
		}
		out.Release()
	}
	for _, c := range []struct {
		x    Expr
		to   schema.Type
		want string
	}{
		{col(1, i64), schema.DecimalType(2, 1), "value 12 is out of range for DECIMAL(2,1)"},
		{col(3, str), schema.DecimalType(3, 3), "value 3.456 is out of range for DECIMAL(3,3)"},
		{&Literal{Typ: str, Val: sv("x"), Text: "'x'"}, d1, "cannot convert STRING value x to DECIMAL(4,1)"},
	} {
		_, err := (&Cast{X: c.x, To: c.to}).Eval(env, b)
		if !errors.Is(err, rowttl.ErrInvalidArgument) || err == nil || err.Error() != c.want {
			t.Errorf("CAST(%s AS %s): %v, want %q", c.x, c.to, err, c.want)
		}
	}
}
