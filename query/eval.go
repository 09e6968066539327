package query

import (
	"cmp"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
)

// A bound expression works on logical column slots, with constants already
// converted to the physical domain of the column as stored.
type bound interface {
	// may reports whether some row of a page with these statistics could
	// make the expression evaluate to want (TRUE or FALSE; NULL is neither).
	may(st func(slot int) segment.ZoneMap, want bool) bool
	// eval sets bit i of t where row i is TRUE and of f where it is FALSE;
	// both start cleared.
	eval(col func(slot int) arrow.Array, n int, t, f []byte)
	slots(add func(int))
}

func (s *Snapshot) bind(e Expr) (bound, error) {
	switch x := e.(type) {
	case nil:
		return nil, nil
	case Cmp:
		slot, typ, err := s.resolve(x.Column)
		if err != nil {
			return nil, err
		}
		if typ.Kind == schema.Decimal && slot != s.ttlSlot() {
			return bindDecimalCmp(slot, typ, x)
		}
		v, err := ToValue(typ, x.Value)
		if err != nil {
			return nil, err
		}
		if slot == s.ttlSlot() {
			if v, err = s.toStoredTTL(v); err != nil {
				return nil, err
			}
		}
		if v.IsNull() {
			if x.Op == NullSafeEq {
				return &boundIsNull{slot: slot}, nil
			}
			return boundConst{}, nil
		}
		return &boundCmp{slot: slot, op: x.Op, c: v}, nil
	case IsNull:
		slot, _, err := s.resolve(x.Column)
		if err != nil {
			return nil, err
		}
		return &boundIsNull{slot: slot, negate: x.Negate}, nil
	case In:
		var ors []Expr
		for _, v := range x.Values {
			ors = append(ors, Cmp{Column: x.Column, Op: Eq, Value: v})
		}
		if len(ors) == 0 {
			return boundConst{}, nil
		}
		return s.bind(Or{Exprs: ors})
	case Like:
		slot, typ, err := s.resolve(x.Column)
		if err != nil {
			return nil, err
		}
		if !typ.IsString() {
			return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "LIKE over the %s column %s", typ, x.Column)
		}
		return bindLike(slot, x.Pattern)
	case And, Or:
		var kids []Expr
		and := false
		if a, ok := x.(And); ok {
			kids, and = a.Exprs, true
		} else {
			kids = x.(Or).Exprs
		}
		b := &boundLogic{and: and}
		for _, k := range kids {
			bk, err := s.bind(k)
			if err != nil {
				return nil, err
			}
			if bk != nil {
				b.kids = append(b.kids, bk)
			}
		}
		return b, nil
	case Not:
		k, err := s.bind(x.Expr)
		if err != nil {
			return nil, err
		}
		return &boundNot{k}, nil
	}
	return nil, rowttl.Errorf(rowttl.ErrNotSupported, "unsupported filter %T", e)
}

// boundConst is a comparison with NULL: NULL for every row.
type boundConst struct{}

func (boundConst) may(func(int) segment.ZoneMap, bool) bool        { return false }
func (boundConst) eval(func(int) arrow.Array, int, []byte, []byte) {}
func (boundConst) slots(func(int))                                 {}

type boundLogic struct {
	and  bool
	kids []bound
}

func (b *boundLogic) may(st func(int) segment.ZoneMap, want bool) bool {
	if len(b.kids) == 0 {
		// An empty AND is TRUE, an empty OR is FALSE.
		return want == b.and
	}
	// AND is TRUE only if all kids can be TRUE, FALSE if any can be FALSE;
	// OR is the dual.
	all := b.and == want
	for _, k := range b.kids {
		m := k.may(st, want)
		if all && !m {
			return false
		}
		if !all && m {
			return true
		}
	}
	return all
}

func (b *boundLogic) eval(col func(int) arrow.Array, n int, t, f []byte) {
	if len(b.kids) == 0 {
		if b.and {
			setAll(t, n)
		} else {
			setAll(f, n)
		}
		return
	}
	b.kids[0].eval(col, n, t, f)
	kt, kf := make([]byte, len(t)), make([]byte, len(f))
	for _, k := range b.kids[1:] {
		clear(kt)
		clear(kf)
		k.eval(col, n, kt, kf)
		for i := range t {
			if b.and {
				t[i] &= kt[i]
				f[i] |= kf[i]
			} else {
				t[i] |= kt[i]
				f[i] &= kf[i]
			}
		}
	}
}

func (b *boundLogic) slots(add func(int)) {
	for _, k := range b.kids {
		k.slots(add)
	}
}

type boundNot struct{ k bound }

func (b *boundNot) may(st func(int) segment.ZoneMap, want bool) bool { return b.k.may(st, !want) }
func (b *boundNot) eval(col func(int) arrow.Array, n int, t, f []byte) {
	b.k.eval(col, n, f, t)
}
func (b *boundNot) slots(add func(int)) { b.k.slots(add) }

type boundIsNull struct {
	slot   int
	negate bool
}

func (b *boundIsNull) may(st func(int) segment.ZoneMap, want bool) bool {
	z := st(b.slot)
	someNull, someValue := z.NullCount > 0, z.NullCount < z.Rows
	if want != b.negate {
		return someNull
	}
	return someValue
}

func (b *boundIsNull) eval(col func(int) arrow.Array, n int, t, f []byte) {
	a := col(b.slot)
	isNull, notNull := t, f
	if b.negate {
		isNull, notNull = f, t
	}
	for i := 0; i < n; i++ {
		if a.IsNull(i) {
			bitutil.SetBit(isNull, i)
		} else {
			bitutil.SetBit(notNull, i)
		}
	}
}

func (b *boundIsNull) slots(add func(int)) { add(b.slot) }

type boundCmp struct {
	slot int
	op   Op
	c    schema.Value
}

func (b *boundCmp) slots(add func(int)) { add(b.slot) }

func (b *boundCmp) may(st func(int) segment.ZoneMap, want bool) bool {
	z := st(b.slot)
	if b.op == NullSafeEq && !want && z.NullCount > 0 {
		return true
	}
	if z.NullCount >= z.Rows {
		return false
	}
	if z.Min.IsNull() || z.Max.IsNull() || z.Min.Kind != z.Max.Kind {
		return true
	}
	lo, hi := z.Min.Compare(b.c), z.Max.Compare(b.c)
	exact := lo == 0 && hi == 0
	inRange := lo <= 0 && hi >= 0
	switch b.op {
	case Eq, NullSafeEq:
		if want {
			return inRange
		}
		return !exact
	case Ne:
		if want {
			return !exact
		}
		return inRange
	case Lt:
		if want {
			return lo < 0
		}
		return hi >= 0
	case Le:
		if want {
			return lo <= 0
		}
		return hi > 0
	case Gt:
		if want {
			return hi > 0
		}
		return lo <= 0
	case Ge:
		if want {
			return hi >= 0
		}
		return lo < 0
	}
	return true
}

func test(op Op, c int) bool {
	switch op {
	case Eq, NullSafeEq:
		return c == 0
	case Ne:
		return c != 0
	case Lt:
		return c < 0
	case Le:
		return c <= 0
	case Gt:
		return c > 0
	case Ge:
		return c >= 0
	}
	return false
}

func (b *boundCmp) eval(col func(int) arrow.Array, n int, t, f []byte) {
	a := col(b.slot)
	switch x := a.(type) {
	case *array.Int64:
		if b.c.Kind == schema.IntValue {
			cmpInts(x.Int64Values(), b.c.Int, b.op, t, f)
			fixNulls(a, b.op, n, t, f)
			return
		}
	case *array.Timestamp:
		if b.c.Kind == schema.IntValue {
			cmpInts(arrow.Int64Traits.CastFromBytes(x.Data().Buffers()[1].Bytes())[x.Data().Offset():][:n], b.c.Int, b.op, t, f)
			fixNulls(a, b.op, n, t, f)
			return
		}
	case *array.Int32:
		if b.c.Kind == schema.IntValue {
			cmpSliceWide(x.Int32Values(), b.c.Int, b.op, a, t, f)
			return
		}
	case *array.Float64:
		// cmpFloats takes every constant but NaN, which cmpSlice orders.
		if cmpFloats(x.Float64Values(), b.c.Kind, b.c.Float, b.c.Int, b.op, t, f) {
			fixNulls(a, b.op, n, t, f)
			return
		}
		if b.c.Kind == schema.FloatValue {
			cmpSlice(x.Float64Values(), b.c.Float, b.op, a, t, f)
			return
		}
	case *array.String:
		if b.c.Kind == schema.BytesValue {
			cmpStrings(x, string(b.c.Bytes), b.op, n, t, f)
			fixNulls(a, b.op, n, t, f)
			return
		}
	}
	for i := 0; i < n; i++ {
		v := schema.ValueAt(a, i)
		if v.IsNull() {
			if b.op == NullSafeEq {
				bitutil.SetBit(f, i)
			}
			continue
		}
		setOne(test(b.op, v.Compare(b.c)), i, t, f)
	}
}

// boundDecCmp compares a DECIMAL column with a constant exactly, whatever
// the constant's scale: 1.005 against a DECIMAL(5,2) column is neither
// rounded to 1.01 nor truncated to 1.00.
type boundDecCmp struct {
	slot     int
	op       Op
	colScale int
	c        decimal.Num
	cScale   int
}

func bindDecimalCmp(slot int, typ schema.Type, x Cmp) (bound, error) {
	n, scale, null, err := exactConst(typ, x.Value)
	if err != nil {
		return nil, err
	}
	if null {
		if x.Op == NullSafeEq {
			return &boundIsNull{slot: slot}, nil
		}
		return boundConst{}, nil
	}
	return &boundDecCmp{slot: slot, op: x.Op, colScale: typ.Scale, c: n, cScale: scale}, nil
}

// Decimal pages carry no zone map bounds, so every page may match.
func (b *boundDecCmp) may(func(int) segment.ZoneMap, bool) bool { return true }
func (b *boundDecCmp) slots(add func(int))                      { add(b.slot) }

func (b *boundDecCmp) eval(col func(int) arrow.Array, n int, t, f []byte) {
	a := col(b.slot)
	d, _ := a.(*array.Decimal128)
	for i := 0; i < n; i++ {
		if a.IsNull(i) {
			if b.op == NullSafeEq {
				bitutil.SetBit(f, i)
			}
			continue
		}
		var v decimal.Num
		if d != nil {
			v = d.Value(i)
		} else {
			v = schema.ValueAt(a, i).Decimal()
		}
		setOne(test(b.op, decimal.Cmp(v, b.colScale, b.c, b.cScale)), i, t, f)
	}
}

func setOne(ok bool, i int, t, f []byte) {
	if ok {
		bitutil.SetBit(t, i)
	} else {
		bitutil.SetBit(f, i)
	}
}

// cmpStrings compares the first n values of a string column with c,
// NULLs as if they held their (meaningless) bytes: fixNulls follows. An
// equality is a string ==, which a length mismatch decides without
// touching the bytes, where a three-way compare would read them: the
// common filter is an equality on a short low-cardinality column.
func cmpStrings(x *array.String, c string, op Op, n int, t, f []byte) {
	switch op {
	case Eq, NullSafeEq, Ne:
		want := op != Ne
		for i := 0; i < n; i++ {
			setOne((x.Value(i) == c) == want, i, t, f)
		}
	default:
		for i := 0; i < n; i++ {
			setOne(test(op, strings.Compare(x.Value(i), c)), i, t, f)
		}
	}
}

func cmpSlice[T int64 | float64](vals []T, c T, op Op, a arrow.Array, t, f []byte) {
	for i, v := range vals {
		setOne(test(op, cmp.Compare(v, c)), i, t, f)
	}
	fixNulls(a, op, len(vals), t, f)
}

func cmpSliceWide(vals []int32, c int64, op Op, a arrow.Array, t, f []byte) {
	for i, v := range vals {
		setOne(test(op, cmp.Compare(int64(v), c)), i, t, f)
	}
	fixNulls(a, op, len(vals), t, f)
}

// fixNulls turns the bits of NULL rows into NULL (neither TRUE nor FALSE),
// or FALSE for <=> against a value.
func fixNulls(a arrow.Array, op Op, n int, t, f []byte) {
	if a.NullN() == 0 {
		return
	}
	for i := 0; i < n; i++ {
		if a.IsNull(i) {
			bitutil.ClearBit(t, i)
			if op == NullSafeEq {
				bitutil.SetBit(f, i)
			} else {
				bitutil.ClearBit(f, i)
			}
		}
	}
}

func setAll(bm []byte, n int) {
	bitutil.SetBitsTo(bm, 0, int64(n), true)
}
