package exec

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/decimal"
	"github.com/rowttl/rowttl/schema"
)

// The states of the aggregates of HashAggregate: one per aggregate and
// partition, column-oriented (one slice entry per group), so that folding
// a batch into them is a tight loop over group ids with no dispatch per
// row.

// argForm is how an aggregate reads its argument.
type argForm uint8

const (
	argNone  argForm = iota // count(*)
	argInt                  // integers, temporals and booleans as int64
	argFloat                // FLOAT and DOUBLE as float64
	// argOrder is FLOAT and DOUBLE as order keys (floatOrder), which min
	// and max compare as integers.
	argOrder
	argDec
	argStr
)

// aggInput is one aggregate's argument over one batch, converted once for
// every partition that folds it.
type aggInput struct {
	arr    arrow.Array
	nulls  bool
	ints   []int64 // the batch's own values, or intBuf
	floats []float64
	decs   []decimal128.Num
	strs   *array.String
	// intBuf and floatBuf hold converted values; ints and floats may
	// instead view the batch, which must never be written.
	intBuf   []int64
	floatBuf []float64
	// keys are the values as intKeys makes them, for a DISTINCT aggregate
	// of a fixed-width argument (pairSet); keyBuf backs them.
	keys   []int64
	keyBuf []int64
	// by and byKey are the ordering column of MaxBy and MinBy and the
	// encoder of its order keys (keys_order.go).
	by    arrow.Array
	byKey func(dst []byte, i int) []byte
}

func (in *aggInput) prepareBy(arr arrow.Array) {
	in.by = arr
	in.byKey = orderEncoder(arr, SortKey{}, true)
}

// prepareKeys fills in.keys from arr, viewing a BIGINT column in place.
func (in *aggInput) prepareKeys(arr arrow.Array) {
	if a, ok := arr.(*array.Int64); ok {
		in.keys = a.Int64Values()
		return
	}
	in.keyBuf = intKeys(in.keyBuf, arr)
	in.keys = in.keyBuf
}

// prepare converts arr for an argument of form f, reusing in's buffers.
func (in *aggInput) prepare(f argForm, arr arrow.Array) {
	in.arr = arr
	in.nulls = arr != nil && arr.NullN() > 0
	switch f {
	case argInt:
		switch a := arr.(type) {
		case *array.Int64:
			in.ints = a.Int64Values()
		case *array.Timestamp:
			ts := a.TimestampValues()
			in.ints = unsafe.Slice((*int64)(unsafe.SliceData(ts)), len(ts))
		default:
			in.intBuf = intKeys(in.intBuf, arr)
			in.ints = in.intBuf
		}
	case argFloat:
		switch a := arr.(type) {
		case *array.Float64:
			in.floats = a.Float64Values()
		case *array.Float32:
			in.floatBuf = resize(in.floatBuf, a.Len())
			for i, v := range a.Float32Values() {
				in.floatBuf[i] = float64(v)
			}
			in.floats = in.floatBuf
		}
	case argOrder:
		in.intBuf = resize(in.intBuf, arr.Len())
		switch a := arr.(type) {
		case *array.Float64:
			for i, v := range a.Float64Values() {
				in.intBuf[i] = floatOrder(v)
			}
		case *array.Float32:
			for i, v := range a.Float32Values() {
				in.intBuf[i] = floatOrder(float64(v))
			}
		}
		in.ints = in.intBuf
	case argDec:
		in.decs = arr.(*array.Decimal128).Values()
	case argStr:
		in.strs = arr.(*array.String)
	}
}

func (in *aggInput) valid(r int32) bool { return !in.nulls || in.arr.IsValid(int(r)) }

// floatOrder maps a float to an int64 whose order is the float order with
// every NaN (made one) after +Inf and -0 just below 0: min and max then
// pick the same value whatever order the rows come in.
func floatOrder(f float64) int64 {
	b := math.Float64bits(f)
	if f != f {
		b = 0x7ff8000000000000
	}
	if b>>63 != 0 {
		b = ^b
	} else {
		b |= 1 << 63
	}
	return int64(b ^ 1<<63)
}

func floatFromOrder(k int64) float64 {
	b := uint64(k) ^ 1<<63
	if b>>63 != 0 {
		b &^= 1 << 63
	} else {
		b = ^b
	}
	return math.Float64frombits(b)
}

// aggState accumulates one aggregate over the groups of one partition.
type aggState interface {
	// grow makes room for n groups; new ones are empty.
	grow(n int)
	// update folds row rows[j] of in into group gids[j], for every j.
	update(in *aggInput, gids []uint32, rows []int32)
	// appendTo appends the results of groups g0..g1-1 to b.
	appendTo(b array.Builder, g0, g1 int) error
	bytes() int64
}

func growTo[T any](s []T, n int) []T {
	if n <= len(s) {
		return s
	}
	old := len(s)
	s = slices.Grow(s, n-old)[:n]
	clear(s[old:])
	return s
}

// countState is count(*) (star) and count(x).
type countState struct {
	star bool
	n    []int64
}

func (s *countState) grow(n int)   { s.n = growTo(s.n, n) }
func (s *countState) bytes() int64 { return int64(cap(s.n)) * 8 }
func (s *countState) update(in *aggInput, gids []uint32, rows []int32) {
	if s.star || !in.nulls {
		for _, g := range gids {
			s.n[g]++
		}
		return
	}
	for j, g := range gids {
		if in.arr.IsValid(int(rows[j])) {
			s.n[g]++
		}
	}
}

func (s *countState) appendTo(b array.Builder, g0, g1 int) error {
	b.(*array.Int64Builder).AppendValues(s.n[g0:g1], nil)
	return nil
}

// sumIntState is sum and avg of integers: an exact 128-bit sum, so that
// only a final total outside BIGINT fails, whatever order rows come in.
type sumIntState struct {
	avg  bool
	name string
	s    []sum128
}

type sum128 struct {
	lo uint64
	hi int64
	n  int64
}

func (s *sumIntState) grow(n int)   { s.s = growTo(s.s, n) }
func (s *sumIntState) bytes() int64 { return int64(cap(s.s)) * int64(unsafe.Sizeof(sum128{})) }
func (s *sumIntState) update(in *aggInput, gids []uint32, rows []int32) {
	vals, st := in.ints, s.s
	if !in.nulls {
		for j, g := range gids {
			v := vals[rows[j]]
			a := &st[g]
			lo, c := bits.Add64(a.lo, uint64(v), 0)
			a.lo, a.hi, a.n = lo, a.hi+int64(c)+v>>63, a.n+1
		}
		return
	}
	for j, g := range gids {
		r := rows[j]
		if !in.arr.IsValid(int(r)) {
			continue
		}
		v := vals[r]
		a := &st[g]
		lo, c := bits.Add64(a.lo, uint64(v), 0)
		a.lo, a.hi, a.n = lo, a.hi+int64(c)+v>>63, a.n+1
	}
}

func (s *sumIntState) appendTo(b array.Builder, g0, g1 int) error {
	for _, a := range s.s[g0:g1] {
		switch {
		case a.n == 0:
			b.AppendNull()
		case s.avg:
			b.(*array.Float64Builder).Append(int128Float(a.lo, a.hi) / float64(a.n))
		case a.hi != int64(a.lo)>>63:
			return rowttl.Errorf(rowttl.ErrInvalidArgument, "BIGINT value is out of range in '%s'", s.name)
		default:
			b.(*array.Int64Builder).Append(int64(a.lo))
		}
	}
	return nil
}

func int128Float(lo uint64, hi int64) float64 {
	if hi == int64(lo)>>63 {
		return float64(int64(lo))
	}
	v := new(big.Int).Lsh(big.NewInt(hi), 64)
	v.Add(v, new(big.Int).SetUint64(lo))
	f, _ := new(big.Float).SetInt(v).Float64()
	return f
}

// sumFloatState is sum and avg of FLOAT and DOUBLE, added in input order.
type sumFloatState struct {
	avg bool
	s   []sumF
}

type sumF struct {
	sum float64
	n   int64
}

func (s *sumFloatState) grow(n int)   { s.s = growTo(s.s, n) }
func (s *sumFloatState) bytes() int64 { return int64(cap(s.s)) * 16 }
func (s *sumFloatState) update(in *aggInput, gids []uint32, rows []int32) {
	vals, st := in.floats, s.s
	for j, g := range gids {
		r := rows[j]
		if in.nulls && !in.arr.IsValid(int(r)) {
			continue
		}
		st[g].sum += vals[r]
		st[g].n++
	}
}

func (s *sumFloatState) appendTo(b array.Builder, g0, g1 int) error {
	fb := b.(*array.Float64Builder)
	for _, a := range s.s[g0:g1] {
		switch {
		case a.n == 0:
			fb.AppendNull()
		case s.avg:
			fb.Append(a.sum / float64(a.n))
		default:
			fb.Append(a.sum)
		}
	}
	return nil
}

// sumDecState is sum and avg of DECIMAL(p,s) through decimal.Acc, the
// row engine's accumulator: an exact 192-bit sum of the unscaled values, so
// that only the total must fit 38 digits, whatever the order of the rows.
type sumDecState struct {
	avg   bool
	name  string
	scale int // of the argument
	out   schema.Type
	s     []decSum
}

type decSum struct {
	acc decimal.Acc
	n   int64
}

func (s *sumDecState) grow(n int)   { s.s = growTo(s.s, n) }
func (s *sumDecState) bytes() int64 { return int64(cap(s.s)) * int64(unsafe.Sizeof(decSum{})) }
func (s *sumDecState) update(in *aggInput, gids []uint32, rows []int32) {
	vals, st := in.decs, s.s
	for j, g := range gids {
		r := rows[j]
		if in.nulls && !in.arr.IsValid(int(r)) {
			continue
		}
		a := &st[g]
		a.acc.Add(vals[r])
		a.n++
	}
}

func (s *sumDecState) appendTo(b array.Builder, g0, g1 int) error {
	db := b.(*array.Decimal128Builder)
	t := s.out.Decimal()
	for _, a := range s.s[g0:g1] {
		if a.n == 0 {
			db.AppendNull()
			continue
		}
		var v decimal.Num
		var ok bool
		if s.avg {
			v, ok = a.acc.Avg(a.n, s.scale, t)
		} else {
			v, ok = a.acc.Total(t)
		}
		if !ok {
			// The row engine's text, so that both engines fail alike.
			return rowttl.Errorf(rowttl.ErrInvalidArgument, "DECIMAL value is out of range in '%s'", s.name)
		}
		db.Append(v)
	}
	return nil
}

// varianceState is the variances and standard deviations: per group the
// count, the running mean and the sum of squared deviations from it
// (Welford), which never subtracts two large nearly equal sums.
type varianceState struct {
	fn AggFunc
	s  []welford
}

type welford struct {
	n        int64
	mean, m2 float64
}

func (s *varianceState) grow(n int)   { s.s = growTo(s.s, n) }
func (s *varianceState) bytes() int64 { return int64(cap(s.s)) * int64(unsafe.Sizeof(welford{})) }
func (s *varianceState) update(in *aggInput, gids []uint32, rows []int32) {
	vals, st := in.floats, s.s
	for j, g := range gids {
		r := rows[j]
		if in.nulls && !in.arr.IsValid(int(r)) {
			continue
		}
		a := &st[g]
		x := vals[r]
		a.n++
		d := x - a.mean
		a.mean += d / float64(a.n)
		a.m2 += d * (x - a.mean)
	}
}

func (s *varianceState) appendTo(b array.Builder, g0, g1 int) error {
	fb := b.(*array.Float64Builder)
	samp := s.fn == VarSamp || s.fn == StddevSamp
	for _, a := range s.s[g0:g1] {
		d := float64(a.n)
		if samp {
			d--
		}
		if a.n == 0 || d == 0 {
			fb.AppendNull()
			continue
		}
		v := a.m2 / d
		if s.fn == StddevPop || s.fn == StddevSamp {
			v = math.Sqrt(v)
		}
		fb.Append(v)
	}
	return nil
}

// groupConcatState is group_concat: each group's values joined as they
// come. The joined bytes are the group's own: they outlive the batches.
type groupConcatState struct {
	sep   string
	v     [][]byte
	has   []bool
	chars int64
}

func (s *groupConcatState) grow(n int) { s.v, s.has = growTo(s.v, n), growTo(s.has, n) }
func (s *groupConcatState) bytes() int64 {
	return int64(cap(s.v))*24 + int64(cap(s.has)) + s.chars
}

func (s *groupConcatState) update(in *aggInput, gids []uint32, rows []int32) {
	for j, g := range gids {
		r := rows[j]
		if in.nulls && !in.arr.IsValid(int(r)) {
			continue
		}
		v := in.strs.Value(int(r))
		old := cap(s.v[g])
		if s.has[g] {
			s.v[g] = append(s.v[g], s.sep...)
		}
		s.v[g], s.has[g] = append(s.v[g], v...), true
		s.chars += int64(cap(s.v[g]) - old)
	}
}

func (s *groupConcatState) appendTo(b array.Builder, g0, g1 int) error {
	sb := b.(*array.StringBuilder)
	for g := g0; g < g1; g++ {
		if !s.has[g] {
			sb.AppendNull()
		} else {
			sb.BinaryBuilder.Append(s.v[g])
		}
	}
	return nil
}

// maxByState is max_by and min_by: per group the order key of the best
// ordering value so far and the equality encoding (appendEqualKey, NULL
// included) of the argument at its row, both owned by the state.
type maxByState struct {
	min   bool
	best  []string
	val   [][]byte
	has   []bool
	chars int64
	key   []byte
}

func (s *maxByState) grow(n int) {
	s.best, s.val, s.has = growTo(s.best, n), growTo(s.val, n), growTo(s.has, n)
}

func (s *maxByState) bytes() int64 {
	return int64(cap(s.best))*16 + int64(cap(s.val))*24 + int64(cap(s.has)) + s.chars
}

func (s *maxByState) update(in *aggInput, gids []uint32, rows []int32) {
	byNulls := in.by.NullN() > 0
	for j, g := range gids {
		r := int(rows[j])
		if byNulls && in.by.IsNull(r) {
			continue
		}
		s.key = in.byKey(s.key[:0], r)
		k := bytesView(s.key)
		// Strictly better only: a tie keeps the first row.
		if s.has[g] && (s.min && k >= s.best[g] || !s.min && k <= s.best[g]) {
			continue
		}
		old := int64(len(s.best[g]) + cap(s.val[g]))
		s.best[g], s.has[g] = string(s.key), true
		s.val[g] = appendValueKey(s.val[g][:0], in.arr, r)
		s.chars += int64(len(s.best[g])+cap(s.val[g])) - old
	}
}

// appendValueKey is appendEqualKey keeping a float's own bits (-0, the
// NaN's payload): the value comes back as it went in, for decodeEqualKey.
func appendValueKey(dst []byte, a arrow.Array, i int) []byte {
	if a.IsValid(i) {
		switch a := a.(type) {
		case *array.Float32:
			return binary.LittleEndian.AppendUint32(append(dst, 1), math.Float32bits(a.Value(i)))
		case *array.Float64:
			return binary.LittleEndian.AppendUint64(append(dst, 1), math.Float64bits(a.Value(i)))
		}
	}
	return appendEqualKey(dst, a, i)
}

func (s *maxByState) appendTo(b array.Builder, g0, g1 int) error {
	for g := g0; g < g1; g++ {
		if !s.has[g] {
			b.AppendNull()
		} else {
			decodeEqualKey(b, s.val[g])
		}
	}
	return nil
}

// minMaxIntState is min and max of everything held as an int64: integers,
// temporals, booleans, and floats as order keys (float set).
type minMaxIntState struct {
	max   bool
	float bool
	v     []int64
	has   []bool
}

func (s *minMaxIntState) grow(n int) { s.v, s.has = growTo(s.v, n), growTo(s.has, n) }
func (s *minMaxIntState) bytes() int64 {
	return int64(cap(s.v))*8 + int64(cap(s.has))
}

func (s *minMaxIntState) update(in *aggInput, gids []uint32, rows []int32) {
	vals, cur, has := in.ints, s.v, s.has
	for j, g := range gids {
		r := rows[j]
		if in.nulls && !in.arr.IsValid(int(r)) {
			continue
		}
		v := vals[r]
		if !has[g] || (v < cur[g]) != s.max && v != cur[g] {
			cur[g], has[g] = v, true
		}
	}
}

func (s *minMaxIntState) appendTo(b array.Builder, g0, g1 int) error {
	for g := g0; g < g1; g++ {
		switch {
		case !s.has[g]:
			b.AppendNull()
		case !s.float:
			appendIntKey(b, s.v[g])
		default:
			f := floatFromOrder(s.v[g])
			if fb, ok := b.(*array.Float32Builder); ok {
				fb.Append(float32(f))
			} else {
				b.(*array.Float64Builder).Append(f)
			}
		}
	}
	return nil
}

// minMaxDecState is min and max of DECIMAL.
type minMaxDecState struct {
	max bool
	v   []decimal128.Num
	has []bool
}

func (s *minMaxDecState) grow(n int) { s.v, s.has = growTo(s.v, n), growTo(s.has, n) }
func (s *minMaxDecState) bytes() int64 {
	return int64(cap(s.v))*16 + int64(cap(s.has))
}

func (s *minMaxDecState) update(in *aggInput, gids []uint32, rows []int32) {
	for j, g := range gids {
		r := rows[j]
		if in.nulls && !in.arr.IsValid(int(r)) {
			continue
		}
		v := in.decs[r]
		if c := v.Cmp(s.v[g]); !s.has[g] || (c < 0) != s.max && c != 0 {
			s.v[g], s.has[g] = v, true
		}
	}
}

func (s *minMaxDecState) appendTo(b array.Builder, g0, g1 int) error {
	db := b.(*array.Decimal128Builder)
	for g := g0; g < g1; g++ {
		if !s.has[g] {
			db.AppendNull()
		} else {
			db.Append(s.v[g])
		}
	}
	return nil
}

// minMaxStrState is min and max of strings, by bytes. A kept value is a
// copy: it outlives the batch it came from.
type minMaxStrState struct {
	max   bool
	v     []string
	has   []bool
	chars int64
}

func (s *minMaxStrState) grow(n int) { s.v, s.has = growTo(s.v, n), growTo(s.has, n) }
func (s *minMaxStrState) bytes() int64 {
	return int64(cap(s.v))*16 + int64(cap(s.has)) + s.chars
}

func (s *minMaxStrState) update(in *aggInput, gids []uint32, rows []int32) {
	for j, g := range gids {
		r := rows[j]
		if in.nulls && !in.arr.IsValid(int(r)) {
			continue
		}
		v := in.strs.Value(int(r))
		if !s.has[g] || (v < s.v[g]) != s.max && v != s.v[g] {
			s.chars += int64(len(v) - len(s.v[g]))
			s.v[g], s.has[g] = string([]byte(v)), true
		}
	}
}

func (s *minMaxStrState) appendTo(b array.Builder, g0, g1 int) error {
	sb := b.(*array.StringBuilder)
	for g := g0; g < g1; g++ {
		if !s.has[g] {
			sb.AppendNull()
		} else {
			sb.Append(s.v[g])
		}
	}
	return nil
}

// distinctState feeds its inner state only the first occurrence of each
// (group, value) pair, kept in a set keyed by the group id and the
// value's equality encoding.
type distinctState struct {
	inner aggState
	seen  *groupMap
	key   []byte
	gids  []uint32
	rows  []int32
}

func (s *distinctState) grow(n int) { s.inner.grow(n) }
func (s *distinctState) bytes() int64 {
	return s.inner.bytes() + s.seen.bytes() + int64(cap(s.gids))*4 + int64(cap(s.rows))*4
}

func (s *distinctState) update(in *aggInput, gids []uint32, rows []int32) {
	s.gids, s.rows = s.gids[:0], s.rows[:0]
	for j, g := range gids {
		r := rows[j]
		if in.nulls && !in.arr.IsValid(int(r)) {
			continue
		}
		s.key = binary.LittleEndian.AppendUint32(s.key[:0], g)
		s.key = appendEqualValue(s.key, in.arr, int(r))
		k := bytesView(s.key)
		if _, inserted := s.seen.findBytes(k, hashBytes(k)); inserted {
			s.gids = append(s.gids, g)
			s.rows = append(s.rows, r)
		}
	}
	s.inner.update(in, s.gids, s.rows)
}

func (s *distinctState) appendTo(b array.Builder, g0, g1 int) error {
	return s.inner.appendTo(b, g0, g1)
}

// distinctIntState is distinctState over a fixed-width argument: the seen
// (group, value) pairs are a pairSet of the values' int64 keys, with no
// encoding or byte hashing per row.
type distinctIntState struct {
	inner aggState
	seen  *pairSet
	gids  []uint32
	rows  []int32
}

func (s *distinctIntState) grow(n int) { s.inner.grow(n) }
func (s *distinctIntState) bytes() int64 {
	return s.inner.bytes() + s.seen.bytes() + int64(cap(s.gids))*4 + int64(cap(s.rows))*4
}

func (s *distinctIntState) update(in *aggInput, gids []uint32, rows []int32) {
	s.gids, s.rows = s.gids[:0], s.rows[:0]
	keys := in.keys
	for j, g := range gids {
		r := rows[j]
		if in.nulls && !in.arr.IsValid(int(r)) {
			continue
		}
		if s.seen.add(g, keys[r]) {
			s.gids = append(s.gids, g)
			s.rows = append(s.rows, r)
		}
	}
	s.inner.update(in, s.gids, s.rows)
}

func (s *distinctIntState) appendTo(b array.Builder, g0, g1 int) error {
	return s.inner.appendTo(b, g0, g1)
}

// aggPlan is one aggregate resolved against its input: its result type,
// how it reads its argument, and a maker of its per-partition state.
type aggPlan struct {
	Aggregate
	arg   argForm
	out   schema.Type
	state func() aggState
	// intKeys is set for a DISTINCT aggregate whose argument's values are
	// int64 keys (aggInput.prepareKeys).
	intKeys bool
}

// planAggregate checks a against the input schema in.
func planAggregate(in Schema, a Aggregate) (aggPlan, error) {
	p := aggPlan{Aggregate: a}
	if a.Func == CountStar {
		p.out = schema.BigIntType
		p.state = func() aggState { return &countState{star: true} }
		return p, nil
	}
	if a.Func < CountStar || a.Func > MinBy {
		return p, rowttl.Errorf(rowttl.ErrInvalidArgument, "HashAggregate: unknown aggregate function %d in %q", a.Func, a.Name)
	}
	if a.Arg < 0 || a.Arg >= len(in) {
		return p, rowttl.Errorf(rowttl.ErrInvalidArgument, "HashAggregate: %s names column %d of an input of %d columns", a.Name, a.Arg, len(in))
	}
	t := in[a.Arg].Type
	if err := checkKeyType("HashAggregate", t); err != nil {
		return p, err
	}
	isFloat := t.Kind == schema.Float || t.Kind == schema.Double
	switch a.Func {
	case Count:
		p.out, p.arg = schema.BigIntType, argNone
		p.state = func() aggState { return &countState{} }
	case Sum, Avg:
		avg := a.Func == Avg
		switch {
		case t.IsInteger():
			p.arg, p.out = argInt, schema.BigIntType
			if avg {
				p.out = schema.DoubleType
			}
			p.state = func() aggState { return &sumIntState{avg: avg, name: a.Name} }
		case isFloat:
			p.arg, p.out = argFloat, schema.DoubleType
			p.state = func() aggState { return &sumFloatState{avg: avg} }
		case t.Kind == schema.Decimal:
			rt := decimal.SumType(t.Decimal())
			if avg {
				rt = decimal.AvgType(t.Decimal())
			}
			p.arg, p.out = argDec, schema.DecimalType(rt.Precision, rt.Scale)
			out := p.out
			p.state = func() aggState { return &sumDecState{avg: avg, name: a.Name, scale: t.Scale, out: out} }
		default:
			return p, rowttl.Errorf(rowttl.ErrInvalidArgument, "%s() does not take a %s argument: %s", a.Func, t, a.Name)
		}
	case VarPop, VarSamp, StddevPop, StddevSamp:
		if !isFloat {
			return p, rowttl.Errorf(rowttl.ErrInvalidArgument, "%s() does not take a %s argument: %s", a.Func, t, a.Name)
		}
		f := a.Func
		p.arg, p.out = argFloat, schema.DoubleType
		p.state = func() aggState { return &varianceState{fn: f} }
	case MaxBy, MinBy:
		if a.By < 0 || a.By >= len(in) {
			return p, rowttl.Errorf(rowttl.ErrInvalidArgument, "HashAggregate: %s orders by column %d of an input of %d columns", a.Name, a.By, len(in))
		}
		if err := checkKeyType("HashAggregate", in[a.By].Type); err != nil {
			return p, err
		}
		if a.Distinct {
			return p, rowttl.Errorf(rowttl.ErrInvalidArgument, "%s() does not take DISTINCT: %s", a.Func, a.Name)
		}
		isMin := a.Func == MinBy
		p.arg, p.out = argNone, t
		p.state = func() aggState { return &maxByState{min: isMin} }
	case GroupConcat:
		if !t.IsString() {
			return p, rowttl.Errorf(rowttl.ErrInvalidArgument, "%s() does not take a %s argument: %s", a.Func, t, a.Name)
		}
		sep := a.Sep
		p.arg, p.out = argStr, schema.StringType
		p.state = func() aggState { return &groupConcatState{sep: sep} }
	case Min, Max:
		isMax := a.Func == Max
		p.out = t
		switch {
		case isFloat:
			p.arg = argOrder
			p.state = func() aggState { return &minMaxIntState{max: isMax, float: true} }
		case t.Kind == schema.Decimal:
			p.arg = argDec
			p.state = func() aggState { return &minMaxDecState{max: isMax} }
		case t.IsString():
			p.arg = argStr
			p.state = func() aggState { return &minMaxStrState{max: isMax} }
		default:
			p.arg = argInt
			p.state = func() aggState { return &minMaxIntState{max: isMax} }
		}
	}
	if a.Distinct && a.Func != Min && a.Func != Max {
		inner := p.state
		if keyFormOf([]schema.Type{t}) == keyInt {
			p.intKeys = true
			p.state = func() aggState { return &distinctIntState{inner: inner(), seen: newPairSet()} }
		} else {
			p.state = func() aggState { return &distinctState{inner: inner(), seen: newGroupMap(keyEncoded)} }
		}
	}
	return p, nil
}
