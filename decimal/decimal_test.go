package decimal

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/rowttl/rowttl"
)

// The reference model: values as big.Rat, rounded half away from zero by
// refRound, ranges checked against 10^p computed here, independently of
// the package's tables and fast paths.

func refPow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

func refValue(n Num, scale int) *big.Rat {
	return new(big.Rat).SetFrac(n.BigInt(), refPow10(scale))
}

// refRound returns r × 10^scale rounded half away from zero.
func refRound(r *big.Rat, scale int) *big.Int {
	x := new(big.Rat).Mul(r, new(big.Rat).SetInt(refPow10(scale)))
	q, rem := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	if new(big.Int).Mul(new(big.Int).Abs(rem), big.NewInt(2)).Cmp(x.Denom()) >= 0 {
		q.Add(q, big.NewInt(int64(x.Sign())))
	}
	return q
}

func refFits(x *big.Int, p int) bool { return new(big.Int).Abs(x).Cmp(refPow10(p)) < 0 }

func newRand(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// randType returns a random valid DECIMAL type.
func randType(r *rand.Rand) Type {
	p := 1 + r.IntN(MaxPrecision)
	return Type{Precision: p, Scale: r.IntN(p + 1)}
}

// randValue returns a value of t, often at the extremes of its range.
func randValue(r *rand.Rand, t Type) Num {
	max := new(big.Int).Sub(refPow10(t.Precision), big.NewInt(1))
	var x *big.Int
	switch r.IntN(6) {
	case 0:
		x = new(big.Int).Set(max)
	case 1:
		x = big.NewInt(int64(r.IntN(3)))
	case 2:
		x = new(big.Int).Sub(max, big.NewInt(int64(r.IntN(1000))))
		if x.Sign() < 0 {
			x.SetInt64(0)
		}
	case 3:
		// A 5 in the first digit dropped by a later rounding.
		x = new(big.Int).Mul(refPow10(r.IntN(t.Precision)), big.NewInt(5))
		if !refFits(x, t.Precision) {
			x.SetInt64(5)
		}
	default:
		var b strings.Builder
		b.WriteByte('0')
		for j := 1 + r.IntN(t.Precision); j > 0; j-- {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		x, _ = new(big.Int).SetString(b.String(), 10)
	}
	if r.IntN(2) == 0 {
		x.Neg(x)
	}
	return decimal128.FromBigInt(x)
}

type bigRand struct{ r *rand.Rand }

func (b bigRand) Int63() int64        { return b.r.Int64() }
func (b bigRand) Seed(int64)          {}
func (b bigRand) Uint64() uint64      { return b.r.Uint64() }
func newBigRand(r *rand.Rand) bigRand { return bigRand{r} }

func TestResultTypes(t *testing.T) {
	for _, c := range []struct {
		op   Op
		a, b Type
		want Type
	}{
		{Add, Type{18, 2}, Type{18, 2}, Type{19, 2}},
		{Sub, Type{10, 4}, Type{5, 0}, Type{11, 4}},
		{Add, Type{38, 0}, Type{38, 38}, Type{38, 38}},
		{Mul, Type{18, 2}, Type{18, 2}, Type{36, 4}},
		{Mul, Type{30, 20}, Type{30, 20}, Type{38, 38}},
		{Div, Type{18, 2}, Type{5, 1}, Type{23, 6}},
		{Div, Type{38, 36}, Type{3, 0}, Type{38, 38}},
		{Mod, Type{10, 2}, Type{5, 3}, Type{11, 3}},
	} {
		if got := ResultType(c.op, c.a, c.b); got != c.want {
			t.Errorf("ResultType(%s, %v, %v) = %v, want %v", c.op, c.a, c.b, got, c.want)
		}
	}
	if got := SumType(Type{9, 3}); got != (Type{38, 3}) {
		t.Errorf("SumType = %v", got)
	}
	if got := AvgType(Type{9, 2}); got != (Type{38, 4}) {
		t.Errorf("AvgType = %v", got)
	}
	if got := AvgType(Type{20, 7}); got != (Type{38, 7}) {
		t.Errorf("AvgType = %v", got)
	}
}

// TestArithAgainstBig checks every operator on random types and values at
// the extremes against exact rational arithmetic.
func TestArithAgainstBig(t *testing.T) {
	r := newRand(t)
	ops := []Op{Add, Sub, Mul, Div, Mod}
	for i := 0; i < 20000; i++ {
		op := ops[r.IntN(len(ops))]
		at, bt := randType(r), randType(r)
		if r.IntN(4) == 0 {
			// Small types take the fast paths.
			at = Type{Precision: 1 + r.IntN(18)}
			at.Scale = r.IntN(at.Precision + 1)
			bt = Type{Precision: 1 + r.IntN(18)}
			bt.Scale = r.IntN(bt.Precision + 1)
		}
		a, b := randValue(r, at), randValue(r, bt)
		rt := ResultType(op, at, bt)
		got, st := Arith(op, a, at, b, bt)
		x, y := refValue(a, at.Scale), refValue(b, bt.Scale)
		var want *big.Int
		wantSt := StatusOK
		switch op {
		case Add:
			want = refRound(new(big.Rat).Add(x, y), rt.Scale)
		case Sub:
			want = refRound(new(big.Rat).Sub(x, y), rt.Scale)
		case Mul:
			want = refRound(new(big.Rat).Mul(x, y), rt.Scale)
		case Div, Mod:
			if y.Sign() == 0 {
				wantSt = StatusDivByZero
				break
			}
			q := new(big.Rat).Quo(x, y)
			if op == Div {
				want = refRound(q, rt.Scale)
				break
			}
			// x − trunc(x/y)·y
			tq := new(big.Int).Quo(q.Num(), q.Denom())
			m := new(big.Rat).Sub(x, new(big.Rat).Mul(new(big.Rat).SetInt(tq), y))
			want = refRound(m, rt.Scale)
		}
		if wantSt == StatusOK && !refFits(want, rt.Precision) {
			wantSt = StatusOverflow
		}
		desc := fmt.Sprintf("%s %v %s %s %v (result %v)", Format(a, at.Scale), at, op, Format(b, bt.Scale), bt, rt)
		if st != wantSt {
			t.Fatalf("%s: status %d, want %d (want value %v)", desc, st, wantSt, want)
		}
		if st == StatusOK && got.BigInt().Cmp(want) != 0 {
			t.Fatalf("%s = %s, want %s", desc, Format(got, rt.Scale), Format(decimal128.FromBigInt(want), rt.Scale))
		}
	}
}

func TestArithCases(t *testing.T) {
	p := func(s string, typ Type) Num {
		n, err := Parse(s, typ)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	d182 := Type{18, 2}
	for _, c := range []struct {
		op   Op
		a    string
		at   Type
		b    string
		bt   Type
		want string
	}{
		{Add, "0.1", Type{1, 1}, "0.2", Type{1, 1}, "0.3"},
		{Add, "9999999999999999.99", d182, "0.01", d182, "10000000000000000.00"},
		{Mul, "1234567890123456.78", d182, "100", Type{3, 0}, "123456789012345678.00"},
		{Div, "1", Type{1, 0}, "3", Type{1, 0}, "0.3333"},
		{Div, "2", Type{1, 0}, "3", Type{1, 0}, "0.6667"},
		{Div, "-2", Type{1, 0}, "3", Type{1, 0}, "-0.6667"},
		{Div, "10.00", Type{4, 2}, "4", Type{1, 0}, "2.500000"},
		{Mod, "-7.5", Type{2, 1}, "2", Type{1, 0}, "-1.5"},
	} {
		got, st := Arith(c.op, p(c.a, c.at), c.at, p(c.b, c.bt), c.bt)
		if st != StatusOK || Format(got, ResultType(c.op, c.at, c.bt).Scale) != c.want {
			t.Errorf("%s %s %s = %s (status %d), want %s", c.a, c.op, c.b, Format(got, ResultType(c.op, c.at, c.bt).Scale), st, c.want)
		}
	}
	max38 := p(strings.Repeat("9", 38), Type{38, 0})
	if _, st := Arith(Add, max38, Type{38, 0}, p("1", Type{1, 0}), Type{1, 0}); st != StatusOverflow {
		t.Errorf("10^38 − 1 + 1: status %d, want overflow", st)
	}
	if _, st := Arith(Div, max38, Type{38, 0}, Num{}, Type{1, 0}); st != StatusDivByZero {
		t.Errorf("x / 0: status %d", st)
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		text string
		t    Type
		want string
		err  string
	}{
		{"1.005", Type{3, 2}, "1.01", ""},
		{"-1.005", Type{3, 2}, "-1.01", ""},
		{"1.0049999", Type{3, 2}, "1.00", ""},
		{"1234567890123456.78", Type{18, 2}, "1234567890123456.78", ""},
		{"999999999999999.99", Type{18, 2}, "999999999999999.99", ""},
		{"9999999999999999.99", Type{18, 2}, "9999999999999999.99", ""},
		{"9999999999999999.995", Type{18, 2}, "", "value 9999999999999999.995 is out of range for DECIMAL(18,2)"},
		// arrow-go's decimal128.FromString rounds this one down, through a
		// big.Float of too few bits.
		{"9999999999999999.995", Type{38, 2}, "10000000000000000.00", ""},
		{"99999999999999999", Type{18, 2}, "", "out of range"},
		{"1000000000", Type{38, 10}, "1000000000.0000000000", ""},
		{strings.Repeat("9", 28), Type{38, 10}, strings.Repeat("9", 28) + ".0000000000", ""},
		{strings.Repeat("9", 29), Type{38, 10}, "", "out of range"},
		{" +12.5 ", Type{5, 1}, "12.5", ""},
		{".5", Type{1, 0}, "1", ""},
		{"-.5", Type{1, 0}, "-1", ""},
		{"5.", Type{1, 0}, "5", ""},
		{"1e3", Type{6, 2}, "1000.00", ""},
		{"1.5E-2", Type{4, 2}, "0.02", ""},
		{"-2.5e-1", Type{1, 0}, "0", ""},
		{"0e99999999999", Type{1, 0}, "0", ""},
		{"1e-99999999999", Type{5, 2}, "0.00", ""},
		{"1e99999999999", Type{5, 2}, "", "out of range"},
		{"000000000000000000000000000000000000000000001.5", Type{2, 1}, "1.5", ""},
		{"", Type{5, 2}, "", `invalid DECIMAL(5,2) value ""`},
		{"abc", Type{5, 2}, "", "invalid"},
		{"1.2.3", Type{5, 2}, "", "invalid"},
		{"1e", Type{5, 2}, "", "invalid"},
		{"--1", Type{5, 2}, "", "invalid"},
		{".", Type{5, 2}, "", "invalid"},
		{"NaN", Type{5, 2}, "", "invalid"},
	} {
		n, err := Parse(c.text, c.t)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, rowttl.ErrInvalidArgument) {
				t.Errorf("Parse(%q, %v) = %v, want error %q", c.text, c.t, err, c.err)
			}
			continue
		}
		if err != nil || Format(n, c.t.Scale) != c.want {
			t.Errorf("Parse(%q, %v) = %s, %v, want %s", c.text, c.t, Format(n, c.t.Scale), err, c.want)
		}
	}
}

func TestParseLiteral(t *testing.T) {
	for _, c := range []struct {
		text string
		want Type
		ok   bool
	}{
		{"1.50", Type{3, 2}, true},
		{"0.1", Type{1, 1}, true},
		{"-0.25", Type{2, 2}, true},
		{"007.5", Type{2, 1}, true},
		{"9223372036854775808", Type{19, 0}, true},
		{"0.000", Type{3, 3}, true},
		{strings.Repeat("9", 38), Type{38, 0}, true},
		{strings.Repeat("9", 39), Type{}, false},
		{"1e3", Type{}, false},
	} {
		n, typ, ok := ParseLiteral(c.text)
		if ok != c.ok || typ != c.want {
			t.Errorf("ParseLiteral(%q) = %v, %v, want %v, %v", c.text, typ, ok, c.want, c.ok)
			continue
		}
		if ok {
			want := strings.TrimLeft(strings.TrimPrefix(c.text, "-"), "0")
			got := strings.TrimLeft(strings.TrimPrefix(Format(n, typ.Scale), "-"), "0")
			if got != want {
				t.Errorf("ParseLiteral(%q) value %s", c.text, Format(n, typ.Scale))
			}
		}
	}
}

// refParse is Parse's reference: big.Rat reads the text exactly.
func refParse(text string, typ Type) (*big.Int, bool) {
	s := strings.TrimSpace(text)
	if s == "" || strings.ContainsAny(s, "/_xXpP") {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, false
	}
	return refRound(r, typ.Scale), true
}

func TestParseAgainstBig(t *testing.T) {
	r := newRand(t)
	for i := 0; i < 20000; i++ {
		typ := randType(r)
		var b strings.Builder
		if r.IntN(2) == 0 {
			b.WriteByte('-')
		}
		for j := r.IntN(25); j > 0; j-- {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		if r.IntN(3) > 0 {
			b.WriteByte('.')
			for j := 1 + r.IntN(25); j > 0; j-- {
				b.WriteByte(byte('0' + r.IntN(10)))
			}
		}
		if r.IntN(4) == 0 {
			fmt.Fprintf(&b, "e%d", r.IntN(60)-30)
		}
		text := b.String()
		want, ok := refParse(text, typ)
		got, err := Parse(text, typ)
		if !ok {
			if err == nil {
				t.Fatalf("Parse(%q) accepted a text big.Rat refuses", text)
			}
			continue
		}
		if !refFits(want, typ.Precision) {
			if err == nil {
				t.Fatalf("Parse(%q, %v) = %s, want out of range", text, typ, Format(got, typ.Scale))
			}
			continue
		}
		if err != nil || got.BigInt().Cmp(want) != 0 {
			t.Fatalf("Parse(%q, %v) = %s, %v, want %v", text, typ, Format(got, typ.Scale), err, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"1.005", "-0.5", "1e3", "9999999999999999.99", ".5", "5.", "1e-40", "+7", " 12 ", "1.2.3", "", "e5", "-", "0e0"} {
		f.Add(s, uint8(18), uint8(2))
	}
	f.Fuzz(func(t *testing.T, text string, p, s uint8) {
		typ := Type{Precision: 1 + int(p)%MaxPrecision}
		typ.Scale = int(s) % (typ.Precision + 1)
		got, err := Parse(text, typ)
		if err != nil {
			if !errors.Is(err, rowttl.ErrInvalidArgument) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrInvalidArgument", text, err)
			}
			return
		}
		if !Fits(got, typ.Precision) {
			t.Fatalf("Parse(%q, %v) = %s: does not fit", text, typ, Format(got, typ.Scale))
		}
		if want, ok := refParse(text, typ); ok && want.Cmp(got.BigInt()) != 0 {
			t.Fatalf("Parse(%q, %v) = %s, want %v", text, typ, Format(got, typ.Scale), want)
		}
		// Formatting reads back to the same value.
		back, err := Parse(Format(got, typ.Scale), typ)
		if err != nil || back != got {
			t.Fatalf("Format(%s) reads back as %s, %v", Format(got, typ.Scale), Format(back, typ.Scale), err)
		}
	})
}

func TestCmpAgainstBig(t *testing.T) {
	r := newRand(t)
	for i := 0; i < 20000; i++ {
		at, bt := randType(r), randType(r)
		a, b := randValue(r, at), randValue(r, bt)
		if r.IntN(5) == 0 {
			// Equal values at different scales.
			if x, ok := Rescale(a, at.Scale, bt.Scale); ok && Fits(x, bt.Precision) && at.Scale <= bt.Scale {
				b = x
			}
		}
		want := refValue(a, at.Scale).Cmp(refValue(b, bt.Scale))
		if got := Cmp(a, at.Scale, b, bt.Scale); got != want {
			t.Fatalf("Cmp(%s, %s) = %d, want %d", Format(a, at.Scale), Format(b, bt.Scale), got, want)
		}
	}
}

func TestRescaleAgainstBig(t *testing.T) {
	r := newRand(t)
	for i := 0; i < 20000; i++ {
		at := randType(r)
		a := randValue(r, at)
		to := r.IntN(MaxPrecision + 1)
		got, ok := Rescale(a, at.Scale, to)
		want := refRound(refValue(a, at.Scale), to)
		if !refFits(want, MaxPrecision) {
			if ok {
				t.Fatalf("Rescale(%s, %d) = %s, want overflow", Format(a, at.Scale), to, Format(got, to))
			}
			continue
		}
		if !ok || got.BigInt().Cmp(want) != 0 {
			t.Fatalf("Rescale(%s, %d→%d) = %s, %v, want %v", Format(a, at.Scale), at.Scale, to, Format(got, to), ok, want)
		}
	}
}

func TestIntAndFloatConversions(t *testing.T) {
	tenth := 0.1
	r := newRand(t)
	for i := 0; i < 20000; i++ {
		typ := randType(r)
		v := r.Int64() >> r.IntN(64)
		got, ok := FromInt64(v, typ)
		want := new(big.Int).Mul(big.NewInt(v), refPow10(typ.Scale))
		if ok != refFits(want, typ.Precision) || (ok && got.BigInt().Cmp(want) != 0) {
			t.Fatalf("FromInt64(%d, %v) = %s, %v", v, typ, Format(got, typ.Scale), ok)
		}
		a := randValue(r, typ)
		n, ok := ToInt64(a, typ.Scale)
		q := new(big.Int).Quo(a.BigInt(), refPow10(typ.Scale))
		if ok != q.IsInt64() || (ok && n != q.Int64()) {
			t.Fatalf("ToInt64(%s) = %d, %v, want %v", Format(a, typ.Scale), n, ok, q)
		}
		f := ToFloat64(a, typ.Scale)
		wantF, _ := refValue(a, typ.Scale).Float64()
		if f != wantF {
			t.Fatalf("ToFloat64(%s) = %v, want %v", Format(a, typ.Scale), f, wantF)
		}
	}
	for _, c := range []struct {
		f    float64
		t    Type
		want string
	}{
		{1.005, Type{3, 2}, "1.01"},
		{tenth + 0.2, Type{20, 17}, "0.30000000000000004"},
		{-2.5, Type{1, 0}, "-3"},
		{1e20, Type{21, 0}, "100000000000000000000"},
	} {
		got, err := FromFloat64(c.f, c.t)
		if err != nil || Format(got, c.t.Scale) != c.want {
			t.Errorf("FromFloat64(%v, %v) = %s, %v, want %s", c.f, c.t, Format(got, c.t.Scale), err, c.want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), 1e40} {
		if _, err := FromFloat64(f, Type{38, 0}); !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Errorf("FromFloat64(%v) = %v, want an out of range error", f, err)
		}
	}
}

func TestAccAgainstBig(t *testing.T) {
	r := newRand(t)
	for i := 0; i < 500; i++ {
		typ := randType(r)
		var acc, half Acc
		sum := new(big.Int)
		n := 1 + r.IntN(50)
		for j := 0; j < n; j++ {
			v := randValue(r, typ)
			if j%2 == 0 {
				acc.Add(v)
			} else {
				half.Add(v)
			}
			sum.Add(sum, v.BigInt())
		}
		acc.Merge(half)
		// Adding and taking away a value leaves the total unchanged.
		extra := randValue(r, typ)
		acc.Add(extra)
		acc.Add(extra)
		acc.Sub(extra)
		acc.Sub(extra)
		st := SumType(typ)
		got, ok := acc.Total(st)
		if ok != refFits(sum, st.Precision) || (ok && got.BigInt().Cmp(sum) != 0) {
			t.Fatalf("Total = %s, %v, want %v", Format(got, st.Scale), ok, sum)
		}
		at := AvgType(typ)
		avg, ok := acc.Avg(int64(n), typ.Scale, at)
		want := refRound(new(big.Rat).SetFrac(sum, new(big.Int).Mul(big.NewInt(int64(n)), refPow10(typ.Scale))), at.Scale)
		if ok != refFits(want, at.Precision) || (ok && avg.BigInt().Cmp(want) != 0) {
			t.Fatalf("Avg = %s, %v, want %v", Format(avg, at.Scale), ok, want)
		}
	}
	// The total may pass 38 digits on the way and come back.
	var acc Acc
	max38, _ := Parse(strings.Repeat("9", 38), Type{38, 0})
	acc.Add(max38)
	acc.Add(max38)
	acc.Add(max38.Negate())
	if got, ok := acc.Total(Type{38, 0}); !ok || got != max38 {
		t.Errorf("Total after overflow and back = %s, %v", Format(got, 0), ok)
	}
	acc.Add(max38)
	if _, ok := acc.Total(Type{38, 0}); ok {
		t.Error("Total of 2 × (10^38 − 1) fits 38 digits")
	}
	for i := 0; i < 3; i++ {
		acc.Sub(max38)
	}
	if got, ok := acc.Total(Type{38, 0}); !ok || got != max38.Negate() {
		t.Errorf("Total after Sub = %s, %v", Format(got, 0), ok)
	}
}

// TestAccIntsAgainstBig: integers added and subtracted with AddInt and
// SubInt, extremes included, total as math/big does, Int64 saying when
// the total leaves int64 and agreeing with Add of the same values as Num.
func TestAccIntsAgainstBig(t *testing.T) {
	r := newRand(t)
	edges := []int64{math.MaxInt64, math.MinInt64, -1, 0, 1}
	for i := 0; i < 500; i++ {
		var acc, asNum Acc
		sum := new(big.Int)
		for j := 0; j < 1+r.IntN(40); j++ {
			v := int64(r.Uint64())
			if r.IntN(3) == 0 {
				v = edges[r.IntN(len(edges))]
			}
			if r.IntN(4) == 0 {
				acc.SubInt(v)
				asNum.Sub(decimal128.FromI64(v))
				sum.Sub(sum, big.NewInt(v))
			} else {
				acc.AddInt(v)
				asNum.Add(decimal128.FromI64(v))
				sum.Add(sum, big.NewInt(v))
			}
		}
		if acc != asNum {
			t.Fatalf("AddInt/SubInt gave %+v, Add/Sub of the same values %+v", acc, asNum)
		}
		if acc.Big().Cmp(sum) != 0 {
			t.Fatalf("Big = %v, want %v", acc.Big(), sum)
		}
		got, ok := acc.Int64()
		if ok != sum.IsInt64() || (ok && got != sum.Int64()) {
			t.Fatalf("Int64 = %d, %v, want %v", got, ok, sum)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		n     Num
		scale int
		want  string
	}{
		{decimal128.FromI64(5), 2, "0.05"},
		{decimal128.FromI64(-5), 2, "-0.05"},
		{decimal128.FromI64(0), 3, "0.000"},
		{decimal128.FromI64(math.MinInt64), 0, "-9223372036854775808"},
		{decimal128.FromI64(123456), 6, "0.123456"},
		{Pow10(38).Sub(decimal128.FromI64(1)), 38, "0." + strings.Repeat("9", 38)},
		{Pow10(38).Sub(decimal128.FromI64(1)).Negate(), 10, "-" + strings.Repeat("9", 28) + "." + strings.Repeat("9", 10)},
	} {
		if got := Format(c.n, c.scale); got != c.want {
			t.Errorf("Format = %s, want %s", got, c.want)
		}
	}
}

func TestParseExact(t *testing.T) {
	for _, c := range []struct {
		text string
		want Type
		ok   bool
	}{
		{"1.50", Type{3, 2}, true},
		{"2.5e3", Type{4, 0}, true},
		{"1e-3", Type{3, 3}, true},
		{" -12.5E-1 ", Type{3, 2}, true},
		{"1e38", Type{}, false},
		{"1e-39", Type{}, false},
		{"x", Type{}, false},
	} {
		n, typ, ok := ParseExact(c.text)
		if ok != c.ok || typ != c.want {
			t.Errorf("ParseExact(%q) = %v, %v, want %v, %v", c.text, typ, ok, c.want, c.ok)
			continue
		}
		if want, _ := refParse(c.text, typ); ok && want.Cmp(n.BigInt()) != 0 {
			t.Errorf("ParseExact(%q) = %s, want %v", c.text, Format(n, typ.Scale), want)
		}
	}
}

func TestIntQuoAndRoundToAgainstBig(t *testing.T) {
	r := newRand(t)
	for i := 0; i < 20000; i++ {
		at, bt := randType(r), randType(r)
		a, b := randValue(r, at), randValue(r, bt)
		q, st := IntQuo(a, at.Scale, b, bt.Scale)
		x, y := refValue(a, at.Scale), refValue(b, bt.Scale)
		if y.Sign() == 0 {
			if st != StatusDivByZero {
				t.Fatalf("IntQuo by zero: status %d", st)
			}
		} else {
			z := new(big.Rat).Quo(x, y)
			want := new(big.Int).Quo(z.Num(), z.Denom())
			if (st == StatusOK) != want.IsInt64() || (st == StatusOK && q != want.Int64()) {
				t.Fatalf("IntQuo(%s, %s) = %d, %d, want %v", Format(a, at.Scale), Format(b, bt.Scale), q, st, want)
			}
		}
		digits := r.IntN(2*at.Scale+6) - at.Scale - 3
		mode := RoundMode(r.IntN(4))
		got, ok := RoundTo(a, at.Scale, digits, mode, MaxPrecision)
		rs := RoundScale(at.Scale, digits)
		// The reference: scale x by 10^digits, round in mode, scale back.
		sx := new(big.Rat).Mul(x, new(big.Rat).SetFrac(refPow10(max(digits, 0)), refPow10(max(-digits, 0))))
		fl := new(big.Int).Div(sx.Num(), sx.Denom()) // floor: the denominator is positive
		exactInt := new(big.Rat).SetInt(fl).Cmp(sx) == 0
		var w *big.Int
		switch mode {
		case Floor:
			w = fl
		case Ceil:
			w = new(big.Int).Set(fl)
			if !exactInt {
				w.Add(w, big.NewInt(1))
			}
		case Truncate:
			w = new(big.Int).Quo(sx.Num(), sx.Denom())
		case HalfAwayFromZero:
			w = refRound(sx, 0)
		}
		// w is in units of 10^-digits; the result is at scale rs.
		want := new(big.Int).Mul(w, refPow10(max(rs-digits, 0)))
		if digits > at.Scale {
			want = a.BigInt()
		}
		if ok != refFits(want, MaxPrecision) || (ok && got.BigInt().Cmp(want) != 0) {
			t.Fatalf("RoundTo(%s, %d digits, mode %d) = %s, %v, want %v at scale %d", Format(a, at.Scale), digits, mode, Format(got, rs), ok, want, rs)
		}
	}
}

func FuzzParseExact(f *testing.F) {
	for _, s := range []string{"1.50", "-2.5e3", "1e-38", "0.000", "12345678901234567890123456789012345678", "x", "1e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		n, typ, ok := ParseExact(text)
		if !ok {
			return
		}
		if !typ.Valid() || !Fits(n, typ.Precision) {
			t.Fatalf("ParseExact(%q) = %s in %v", text, Format(n, typ.Scale), typ)
		}
		// Exact: the value is the text's, no digit rounded away.
		if _, ok := refParse(text, typ); ok {
			r, _ := new(big.Rat).SetString(strings.TrimSpace(text))
			if r.Cmp(refValue(n, typ.Scale)) != 0 {
				t.Fatalf("ParseExact(%q) = %s, not the text's value", text, Format(n, typ.Scale))
			}
		}
	})
}

// BenchmarkArith measures the per-value cost of the operators on
// DECIMAL(18,2) operands, the fast paths.
func BenchmarkArith(b *testing.B) {
	t := Type{18, 2}
	x, _ := Parse("1234567890123456.78", t)
	y, _ := Parse("-98765.43", t)
	for _, op := range []Op{Add, Mul, Div} {
		b.Run(map[Op]string{Add: "add", Mul: "mul", Div: "div"}[op], func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, st := Arith(op, x, t, y, t); st != StatusOK {
					b.Fatal(st)
				}
			}
		})
	}
	b.Run("parse", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := Parse("1234567890123456.78", t); err != nil {
				b.Fatal(err)
			}
		}
	})
}
