package decimal

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/rowttl/rowttl"
)

// Num is an unscaled DECIMAL value: the value is Num / 10^scale.
type Num = decimal128.Num

// MaxPrecision is the largest precision of a DECIMAL type, and the cap of
// every result precision.
const MaxPrecision = 38

// DivScaleIncrement is Doris's div_precision_increment: a quotient keeps
// this many more fractional digits than its dividend.
const DivScaleIncrement = 4

// AvgMinScale is the smallest scale of avg's result.
const AvgMinScale = 4

// Type is DECIMAL(Precision, Scale).
type Type struct {
	Precision int
	Scale     int
}

func (t Type) String() string { return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale) }

// Valid reports 1 ≤ Precision ≤ MaxPrecision and 0 ≤ Scale ≤ Precision.
func (t Type) Valid() bool {
	return t.Precision >= 1 && t.Precision <= MaxPrecision && t.Scale >= 0 && t.Scale <= t.Precision
}

// IntegerType is the DECIMAL an integer of the given number of decimal
// digits takes in arithmetic with a DECIMAL: DECIMAL(digits, 0).
func IntegerType(digits int) Type { return Type{Precision: min(max(digits, 1), MaxPrecision)} }

// Op is an arithmetic operator.
type Op uint8

// The operators Arith computes.
const (
	Add Op = iota
	Sub
	Mul
	Div
	Mod
)

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", o)
}

var opNames = [...]string{Add: "+", Sub: "-", Mul: "*", Div: "/", Mod: "%"}

// capType caps a derived type at MaxPrecision digits; the scale is kept
// (itself capped at MaxPrecision, the extra digits rounded away).
func capType(p, s int) Type {
	s = min(s, MaxPrecision)
	return Type{Precision: max(min(p, MaxPrecision), s, 1), Scale: s}
}

// ResultType is the type of a op b for DECIMAL operands (Doris decimalv3):
//
//	a ± b  DECIMAL(max(p1-s1, p2-s2) + max(s1, s2) + 1, max(s1, s2))
//	a × b  DECIMAL(p1 + p2, s1 + s2)
//	a ÷ b  DECIMAL(p1 + s2 + 4, s1 + 4)
//	a % b  DECIMAL(max(p1-s1, p2-s2) + max(s1, s2), max(s1, s2))
//
// each capped at MaxPrecision digits of precision and of scale.
func ResultType(op Op, a, b Type) Type {
	s := max(a.Scale, b.Scale)
	ip := max(a.Precision-a.Scale, b.Precision-b.Scale)
	switch op {
	case Add, Sub:
		return capType(ip+s+1, s)
	case Mul:
		return capType(a.Precision+b.Precision, a.Scale+b.Scale)
	case Div:
		return capType(a.Precision+b.Scale+DivScaleIncrement, a.Scale+DivScaleIncrement)
	}
	return capType(ip+s, s)
}

// SumType is the type of sum over DECIMAL(p,s): DECIMAL(38, s).
func SumType(t Type) Type { return Type{Precision: MaxPrecision, Scale: t.Scale} }

// AvgType is the type of avg over DECIMAL(p,s): DECIMAL(38, max(s, 4)).
func AvgType(t Type) Type { return Type{Precision: MaxPrecision, Scale: max(t.Scale, AvgMinScale)} }

// Status is the outcome of Arith.
type Status uint8

const (
	// StatusOK: the result is exact (rounded half away from zero to the
	// result scale) and fits the result type.
	StatusOK Status = iota
	// StatusOverflow: the result needs more digits than its type has.
	StatusOverflow
	// StatusDivByZero: ÷ or % by zero, which SQL answers with NULL.
	StatusDivByZero
	// StatusInvalid: a text that is not a number.
	StatusInvalid
)

var (
	pow10Num [MaxPrecision + 1]Num
	pow10Big [2*MaxPrecision + 2]*big.Int
	pow10U64 [20]uint64
)

func init() {
	p := big.NewInt(1)
	ten := big.NewInt(10)
	for i := range pow10Big {
		pow10Big[i] = new(big.Int).Set(p)
		if i <= MaxPrecision {
			pow10Num[i] = decimal128.FromBigInt(p)
		}
		if i < len(pow10U64) {
			pow10U64[i] = p.Uint64()
		}
		p.Mul(p, ten)
	}
}

// Pow10 returns 10^n for 0 ≤ n ≤ MaxPrecision.
func Pow10(n int) Num { return pow10Num[n] }

func isNeg(n Num) bool { return n.HighBits() < 0 }

// Fits reports whether n has at most p digits (|n| < 10^p), 1 ≤ p ≤ 38.
func Fits(n Num, p int) bool {
	if p > MaxPrecision {
		p = MaxPrecision
	}
	m := pow10Num[p]
	return n.Less(m) && m.Negate().Less(n)
}

// fitsInt64 reports n representable as an int64.
func fitsInt64(n Num) bool { return n.HighBits() == int64(n.LowBits())>>63 }

// abs128 returns |n| as two words; n must not be -2^127.
func abs128(n Num) (hi, lo uint64) {
	if isNeg(n) {
		n = n.Negate()
	}
	return uint64(n.HighBits()), n.LowBits()
}

func fromMagnitude(hi, lo uint64, neg bool) Num {
	n := decimal128.New(int64(hi), lo)
	if neg {
		return n.Negate()
	}
	return n
}

// toBig returns n as a big.Int.
func toBig(n Num) *big.Int { return n.BigInt() }

// fromBig returns b when it has at most p digits.
func fromBig(b *big.Int, p int) (Num, bool) {
	if new(big.Int).Abs(b).Cmp(pow10Big[min(p, MaxPrecision)]) >= 0 {
		return Num{}, false
	}
	return decimal128.FromBigInt(b), true
}

// roundQuo returns num/den rounded half away from zero; den ≠ 0.
func roundQuo(num, den *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if r.Sign() == 0 {
		return q
	}
	r.Abs(r).Lsh(r, 1)
	if r.CmpAbs(den) >= 0 {
		if num.Sign() == den.Sign() {
			q.Add(q, big.NewInt(1))
		} else {
			q.Sub(q, big.NewInt(1))
		}
	}
	return q
}

// mulPow10 returns n × 10^k when the product has at most 38 digits.
func mulPow10(n Num, k int) (Num, bool) {
	if k == 0 || n == (Num{}) {
		return n, true
	}
	if k > MaxPrecision || !Fits(n, MaxPrecision-k) {
		return Num{}, false
	}
	return n.Mul(pow10Num[k]), true
}

// divPow10 returns n / 10^k, rounded half away from zero when round is set
// and truncated towards zero otherwise.
func divPow10(n Num, k int, round bool) Num {
	if k == 0 {
		return n
	}
	if k >= len(pow10U64) {
		b := toBig(n)
		if round {
			return decimal128.FromBigInt(roundQuo(b, pow10Big[k]))
		}
		return decimal128.FromBigInt(b.Quo(b, pow10Big[k]))
	}
	d := pow10U64[k]
	neg := isNeg(n)
	hi, lo := abs128(n)
	qhi, r := hi/d, hi%d
	qlo, r := bits.Div64(r, lo, d)
	if round && r >= d-r {
		var c uint64
		qlo, c = bits.Add64(qlo, 1, 0)
		qhi += c
	}
	return fromMagnitude(qhi, qlo, neg)
}

// Rescale converts an unscaled value from one scale to another, rounding
// half away from zero when the scale shrinks; ok is false when the result
// would need more than 38 digits.
func Rescale(n Num, from, to int) (Num, bool) {
	switch {
	case to > from:
		return mulPow10(n, to-from)
	case to < from:
		return divPow10(n, from-to, true), true
	}
	return n, true
}

// Convert rescales n from scale `from` to type t, ok false when it does not
// fit t's precision.
func Convert(n Num, from int, t Type) (Num, bool) {
	r, ok := Rescale(n, from, t.Scale)
	return r, ok && Fits(r, t.Precision)
}

// Cmp compares a/10^as with b/10^bs exactly: -1, 0 or +1.
func Cmp(a Num, as int, b Num, bs int) int {
	if as == bs {
		return a.Cmp(b)
	}
	if as < bs {
		if x, ok := mulPow10(a, bs-as); ok {
			return x.Cmp(b)
		}
	} else if y, ok := mulPow10(b, as-bs); ok {
		return a.Cmp(y)
	}
	// One side has more integer digits than 38 − the scale difference: the
	// rare case goes through math/big.
	x := new(big.Int).Mul(toBig(a), pow10Big[max(bs-as, 0)])
	y := new(big.Int).Mul(toBig(b), pow10Big[max(as-bs, 0)])
	return x.Cmp(y)
}

// add128 adds with signed overflow detection.
func add128(a, b Num) (Num, bool) {
	r := a.Add(b)
	if isNeg(a) == isNeg(b) && isNeg(r) != isNeg(a) {
		return Num{}, false
	}
	return r, true
}

// Arith computes a op b exactly, a of type at and b of type bt, in
// ResultType(op, at, bt). The quotient is rounded half away from zero at
// its scale; so is a product whose scale passes 38.
func Arith(op Op, a Num, at Type, b Num, bt Type) (Num, Status) {
	rt := ResultType(op, at, bt)
	switch op {
	case Add, Sub:
		x, ok1 := mulPow10(a, rt.Scale-at.Scale)
		y, ok2 := mulPow10(b, rt.Scale-bt.Scale)
		if ok1 && ok2 {
			if op == Sub {
				y = y.Negate()
			}
			if r, ok := add128(x, y); ok {
				return checked(r, rt)
			}
		}
	case Mul:
		if k := at.Scale + bt.Scale - rt.Scale; k == 0 && fitsInt64(a) && fitsInt64(b) {
			_, al := abs128(a)
			_, bl := abs128(b)
			hi, lo := bits.Mul64(al, bl)
			if hi < 1<<63 {
				return checked(fromMagnitude(hi, lo, isNeg(a) != isNeg(b)), rt)
			}
		}
	case Div, Mod:
		if b == (Num{}) {
			return Num{}, StatusDivByZero
		}
		if op == Div && fitsInt64(b) {
			// a × 10^e / b with e ≥ 0, in 128 bits when the scaled
			// dividend fits: the usual case.
			if x, ok := mulPow10(a, bt.Scale+rt.Scale-at.Scale); ok {
				neg := isNeg(x) != isNeg(b)
				xh, xl := abs128(x)
				_, d := abs128(b)
				qhi, r := xh/d, xh%d
				qlo, r := bits.Div64(r, xl, d)
				if r >= d-r {
					var c uint64
					qlo, c = bits.Add64(qlo, 1, 0)
					qhi += c
				}
				if qhi < 1<<63 {
					return checked(fromMagnitude(qhi, qlo, neg), rt)
				}
				return Num{}, StatusOverflow
			}
		}
	}
	return arithBig(op, a, at, b, bt, rt)
}

func checked(r Num, rt Type) (Num, Status) {
	if !Fits(r, rt.Precision) {
		return Num{}, StatusOverflow
	}
	return r, StatusOK
}

// arithBig is Arith through math/big, for the operands the fast paths do
// not take.
func arithBig(op Op, a Num, at Type, b Num, bt Type, rt Type) (Num, Status) {
	x, y := toBig(a), toBig(b)
	var r *big.Int
	switch op {
	case Add, Sub, Mod:
		s := max(at.Scale, bt.Scale)
		x.Mul(x, pow10Big[s-at.Scale])
		y.Mul(y, pow10Big[s-bt.Scale])
		switch op {
		case Add:
			r = x.Add(x, y)
		case Sub:
			r = x.Sub(x, y)
		default:
			r = x.Rem(x, y)
		}
		r = roundQuo(r, pow10Big[s-rt.Scale])
	case Mul:
		r = roundQuo(x.Mul(x, y), pow10Big[at.Scale+bt.Scale-rt.Scale])
	case Div:
		x.Mul(x, pow10Big[bt.Scale+rt.Scale-at.Scale])
		r = roundQuo(x, y)
	}
	n, ok := fromBig(r, rt.Precision)
	if !ok {
		return Num{}, StatusOverflow
	}
	return n, StatusOK
}

// Neg returns −n (never overflows for a value of at most 38 digits).
func Neg(n Num) Num { return n.Negate() }

// Abs returns |n|.
func Abs(n Num) Num {
	if isNeg(n) {
		return n.Negate()
	}
	return n
}

// Sign returns -1, 0 or +1.
func Sign(n Num) int { return n.Sign() }

// FromInt64 returns the integer v as a value of type t.
func FromInt64(v int64, t Type) (Num, bool) {
	n, ok := mulPow10(decimal128.FromI64(v), t.Scale)
	return n, ok && Fits(n, t.Precision)
}

// ToInt64 returns the integer part of n/10^scale (truncated towards zero,
// as CAST to an integer does), ok false when it does not fit an int64.
func ToInt64(n Num, scale int) (int64, bool) {
	q := divPow10(n, scale, false)
	if !fitsInt64(q) {
		return 0, false
	}
	return int64(q.LowBits()), true
}

var pow10Float = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// ToFloat64 returns the double nearest to n/10^scale.
func ToFloat64(n Num, scale int) float64 {
	if fitsInt64(n) && scale < len(pow10Float) {
		v := int64(n.LowBits())
		if v >= -1<<53 && v <= 1<<53 {
			// Both operands are exact, and IEEE division rounds once.
			return float64(v) / pow10Float[scale]
		}
	}
	f, _ := strconv.ParseFloat(Format(n, scale), 64)
	return f
}

// FromFloat64 converts a double to type t through its shortest decimal
// text (the digits it prints as), rounded half away from zero: 1.005 is
// 1.01 at scale 2, as the same text written in SQL or a CSV file would be.
func FromFloat64(f float64, t Type) (Num, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Num{}, rowttl.Errorf(rowttl.ErrInvalidArgument, "value %v is out of range for %s", f, t)
	}
	return Parse(strconv.FormatFloat(f, 'e', -1, 64), t)
}

// Format renders n/10^scale with exactly scale fractional digits.
func Format(n Num, scale int) string {
	var s string
	neg := isNeg(n)
	if fitsInt64(n) {
		v := int64(n.LowBits())
		if neg {
			s = strconv.FormatUint(uint64(-v), 10)
		} else {
			s = strconv.FormatUint(uint64(v), 10)
		}
	} else {
		s = toBig(Abs(n)).String()
	}
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// number is the parsed text of a decimal: its significant digits (hi then
// lo, two slices of the text so that scanning never allocates; no leading
// zeros, none at all for zero) times 10^exp.
type number struct {
	neg    bool
	hi, lo string
	exp    int
}

func (n number) ndigits() int { return len(n.hi) + len(n.lo) }

func (n number) digit(i int) byte {
	if i < len(n.hi) {
		return n.hi[i]
	}
	return n.lo[i-len(n.hi)]
}

// maxExp bounds exponents: past it a non-zero value is out of every range
// or rounds to zero.
const maxExp = 1000

// scan parses [+-]digits[.digits][(e|E)[+-]digits] with at least one
// mantissa digit.
func scan(s string, allowExp bool) (number, bool) {
	var n number
	if s == "" {
		return n, false
	}
	switch s[0] {
	case '-':
		n.neg, s = true, s[1:]
	case '+':
		s = s[1:]
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart := s[:i]
	fracPart := ""
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		fracPart = s[i+1 : j]
		i = j
	}
	if intPart == "" && fracPart == "" {
		return n, false
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') && allowExp {
		j := i + 1
		eneg := false
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			eneg = s[j] == '-'
			j++
		}
		if j == len(s) {
			return n, false
		}
		for ; j < len(s); j++ {
			c := s[j]
			if c < '0' || c > '9' {
				return n, false
			}
			if exp <= maxExp {
				exp = exp*10 + int(c-'0')
			}
		}
		if eneg {
			exp = -exp
		}
		i = len(s)
	}
	if i != len(s) {
		return n, false
	}
	n.hi = strings.TrimLeft(intPart, "0")
	n.lo = fracPart
	if n.hi == "" {
		n.lo = strings.TrimLeft(fracPart, "0")
	}
	n.exp = exp - len(fracPart)
	return n, true
}

// toScale returns the unscaled value of n at scale s rounded half away from
// zero, ok false when it has more than p digits.
func (n number) toScale(p, s int) (Num, bool) {
	l := n.ndigits()
	if l == 0 {
		return Num{}, true
	}
	shift := n.exp + s
	keep := l // digits kept before padding with shift zeros
	if shift < 0 {
		keep = max(l+shift, 0)
	}
	pad := max(shift, 0)
	if keep+pad > p {
		return Num{}, false
	}
	// Only the first dropped digit decides: ≥ 5 is at least half a unit.
	roundUp := keep < l && l+shift >= 0 && n.digit(keep) >= '5'
	var v Num
	var acc uint64
	k := 0
	for i := 0; i < keep; i++ {
		acc = acc*10 + uint64(n.digit(i)-'0')
		if k++; k == 18 {
			v = v.Mul(pow10Num[18]).Add(decimal128.FromU64(acc))
			acc, k = 0, 0
		}
	}
	v = v.Mul(pow10Num[k]).Add(decimal128.FromU64(acc))
	if pad > 0 {
		v = v.Mul(pow10Num[pad])
	}
	if roundUp {
		v = v.Add(decimal128.FromU64(1))
		if !Fits(v, p) {
			return Num{}, false
		}
	}
	if n.neg {
		v = v.Negate()
	}
	return v, true
}

// Parse reads a decimal text (surrounding spaces allowed, an exponent
// accepted) as a value of type t, rounded half away from zero to t's scale.
// A text that is not a number, or whose value needs more than t's
// precision, is an error wrapping rowttl.ErrInvalidArgument.
func Parse(text string, t Type) (Num, error) {
	v, st := ParseStatus(text, t)
	switch st {
	case StatusInvalid:
		return Num{}, rowttl.Errorf(rowttl.ErrInvalidArgument, "invalid %s value %q", t, text)
	case StatusOverflow:
		return Num{}, outOfRange(strings.TrimSpace(text), t)
	}
	return v, nil
}

// ParseStatus is Parse without building an error: StatusInvalid for a text
// that is not a number, StatusOverflow for one out of t's range.
func ParseStatus(text string, t Type) (Num, Status) {
	n, ok := scan(strings.TrimSpace(text), true)
	if !ok {
		return Num{}, StatusInvalid
	}
	if n.ndigits() > 0 && n.exp > maxExp {
		return Num{}, StatusOverflow
	}
	v, ok := n.toScale(t.Precision, t.Scale)
	if !ok {
		return Num{}, StatusOverflow
	}
	return v, StatusOK
}

func outOfRange(s string, t Type) error {
	return rowttl.Errorf(rowttl.ErrInvalidArgument, "value %s is out of range for %s", s, t)
}

// ParseLiteral reads the text of a SQL numeric literal without an exponent
// ([-]digits[.digits]) as Doris types it: DECIMAL with its digits, the
// scale the number of digits after the point and the precision the
// integer digits (leading zeros dropped) plus the scale: 1.50 is
// DECIMAL(3,2), 0.1 DECIMAL(1,1). ok is false for a text of that form with
// more than 38 digits, which is a DOUBLE, or for any other text.
func ParseLiteral(text string) (Num, Type, bool) {
	n, ok := scan(text, false)
	if !ok {
		return Num{}, Type{}, false
	}
	return n.exact()
}

// ParseExact reads any decimal text (an exponent allowed) exactly, in the
// smallest type that holds it with its written digits: 1.50 is
// DECIMAL(3,2), 2.5e3 DECIMAL(4,0), 1e-3 DECIMAL(3,3). ok is false when that
// takes more than 38 digits or the text is not a number.
func ParseExact(text string) (Num, Type, bool) {
	n, ok := scan(strings.TrimSpace(text), true)
	if !ok || n.exp > maxExp || n.exp < -maxExp {
		return Num{}, Type{}, false
	}
	return n.exact()
}

func (n number) exact() (Num, Type, bool) {
	s := max(-n.exp, 0)
	t := Type{Precision: max(n.ndigits()+max(n.exp, 0), s, 1), Scale: s}
	if t.Precision > MaxPrecision {
		return Num{}, Type{}, false
	}
	v, ok := n.toScale(t.Precision, t.Scale)
	return v, t, ok
}

// Acc accumulates a sum of DECIMAL values of one scale in 192 bits, so
// that only the total must fit its type, whatever the order of the rows
// (up to 2^63 addends).
type Acc struct {
	lo, mid uint64
	hi      int64
}

// Add adds n.
func (a *Acc) Add(n Num) {
	var c uint64
	a.lo, c = bits.Add64(a.lo, n.LowBits(), 0)
	a.mid, c = bits.Add64(a.mid, uint64(n.HighBits()), c)
	a.hi += n.HighBits()>>63 + int64(c)
}

// Sub subtracts n (a sliding window's row leaving the frame).
func (a *Acc) Sub(n Num) {
	var b uint64
	a.lo, b = bits.Sub64(a.lo, n.LowBits(), 0)
	a.mid, b = bits.Sub64(a.mid, uint64(n.HighBits()), b)
	a.hi -= n.HighBits()>>63 + int64(b)
}

// AddInt adds an integer, as an unscaled value: an Acc of BIGINTs (a
// window's sliding sum) needs no conversion to Num per row.
func (a *Acc) AddInt(v int64) {
	var c uint64
	a.lo, c = bits.Add64(a.lo, uint64(v), 0)
	a.mid, c = bits.Add64(a.mid, uint64(v>>63), c)
	a.hi += v>>63 + int64(c)
}

// SubInt subtracts an integer added with AddInt.
func (a *Acc) SubInt(v int64) {
	var b uint64
	a.lo, b = bits.Sub64(a.lo, uint64(v), 0)
	a.mid, b = bits.Sub64(a.mid, uint64(v>>63), b)
	a.hi -= v>>63 + int64(b)
}

// Int64 returns the unscaled sum, ok false when it does not fit an int64.
func (a *Acc) Int64() (int64, bool) {
	v := int64(a.lo)
	ext := v >> 63
	return v, a.mid == uint64(ext) && a.hi == ext
}

// Big returns the unscaled sum exactly.
func (a *Acc) Big() *big.Int { return a.big() }

// Merge adds the total of another accumulator.
func (a *Acc) Merge(o Acc) {
	var c uint64
	a.lo, c = bits.Add64(a.lo, o.lo, 0)
	a.mid, c = bits.Add64(a.mid, o.mid, c)
	a.hi += o.hi + int64(c)
}

func (a *Acc) big() *big.Int {
	neg := a.hi < 0
	lo, mid, hi := a.lo, a.mid, uint64(a.hi)
	if neg {
		var b uint64
		lo, b = bits.Sub64(0, lo, 0)
		mid, b = bits.Sub64(0, mid, b)
		hi, _ = bits.Sub64(0, hi, b)
	}
	x := new(big.Int).SetBits([]big.Word{big.Word(lo), big.Word(mid), big.Word(hi)})
	if neg {
		x.Neg(x)
	}
	return x
}

// Total returns the sum as a value of type t (of the addends' scale), ok
// false when it needs more than t's precision.
func (a *Acc) Total(t Type) (Num, bool) {
	if a.hi != int64(a.mid)>>63 {
		return Num{}, false
	}
	n := decimal128.New(int64(a.mid), a.lo)
	return n, Fits(n, t.Precision)
}

// Avg returns the sum divided by count as a value of type t, the addends
// being at scale `from` ≤ t.Scale, rounded half away from zero; ok is false
// when count is not positive or the mean does not fit t.
func (a *Acc) Avg(count int64, from int, t Type) (Num, bool) {
	if count <= 0 || from > t.Scale {
		return Num{}, false
	}
	x := a.big()
	x.Mul(x, pow10Big[t.Scale-from])
	return fromBig(roundQuo(x, big.NewInt(count)), t.Precision)
}

// IntQuo returns the integer quotient of a/10^as by b/10^bs truncated
// towards zero (SQL's DIV): StatusDivByZero when b is zero, StatusOverflow
// when it does not fit an int64.
func IntQuo(a Num, as int, b Num, bs int) (int64, Status) {
	if b == (Num{}) {
		return 0, StatusDivByZero
	}
	x := new(big.Int).Mul(toBig(a), pow10Big[bs])
	y := new(big.Int).Mul(toBig(b), pow10Big[as])
	q := x.Quo(x, y)
	if !q.IsInt64() {
		return 0, StatusOverflow
	}
	return q.Int64(), StatusOK
}

// RoundMode says how RoundTo drops digits.
type RoundMode uint8

// The rounding modes of round, floor, ceil and truncate.
const (
	HalfAwayFromZero RoundMode = iota
	Floor
	Ceil
	Truncate
)

// RoundScale is the scale of RoundTo's result: digits within 0..scale.
func RoundScale(scale, digits int) int { return min(max(digits, 0), scale) }

// RoundTo rounds n/10^scale to `digits` fractional digits (a negative
// digits rounds to a multiple of 10^-digits) and returns it at scale
// RoundScale(scale, digits); ok is false when the result needs more than p
// digits.
func RoundTo(n Num, scale, digits int, mode RoundMode, p int) (Num, bool) {
	if digits >= scale {
		return n, Fits(n, p)
	}
	k := scale - digits
	if k > 2*MaxPrecision {
		// Every digit goes: the result is 0, or ±10^-digits for floor and
		// ceil of a value beyond 0, which no type holds.
		k = 2 * MaxPrecision
	}
	x := toBig(n)
	d := pow10Big[min(k, len(pow10Big)-1)]
	var q *big.Int
	switch mode {
	case HalfAwayFromZero:
		q = roundQuo(x, d)
	case Truncate:
		q = new(big.Int).Quo(x, d)
	case Floor:
		q = new(big.Int).Div(x, d) // Euclidean: floor for a positive divisor
	case Ceil:
		q = new(big.Int).Neg(new(big.Int).Div(new(big.Int).Neg(x), d))
	}
	if digits < 0 {
		q.Mul(q, pow10Big[min(-digits, len(pow10Big)-1)])
	}
	return fromBig(q, p)
}
