package exec

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// rel is a relation held as Go values, what the operator tests feed in and
// compare against: per cell nil (NULL), bool, int64 (integers, DATE days,
// DATETIME microseconds), float64, decimal128.Num or string.
type rel struct {
	schema Schema
	rows   [][]any
}

var relTypeRE = regexp.MustCompile(`^([A-Za-z_]+)(?:\((\d+)(?:,(\d+))?\))?$`)

// relParseSchema reads "name:TYPE ..." where a trailing ! on the type means
// NOT NULL.
func relParseSchema(line string) (Schema, error) {
	var s Schema
	for _, f := range strings.Fields(line) {
		name, typ, ok := strings.Cut(f, ":")
		if !ok {
			return nil, fmt.Errorf("column %q is not name:TYPE", f)
		}
		c := Column{Name: name, Nullable: true}
		if strings.HasSuffix(typ, "!") {
			c.Nullable = false
			typ = typ[:len(typ)-1]
		}
		m := relTypeRE.FindStringSubmatch(typ)
		if m == nil {
			return nil, fmt.Errorf("bad type %q", typ)
		}
		k, ok := schema.ParseKind(m[1])
		if !ok {
			return nil, fmt.Errorf("unknown type %q", typ)
		}
		c.Type = schema.Type{Kind: k}
		if m[2] != "" {
			p, _ := strconv.Atoi(m[2])
			switch k {
			case schema.Varchar, schema.Char:
				c.Type.Length = p
			default:
				c.Type.Precision = p
			}
		}
		if m[3] != "" {
			c.Type.Scale, _ = strconv.Atoi(m[3])
		}
		if k == schema.Datetime && m[2] == "" {
			c.Type.Precision = 6
		}
		s = append(s, c)
	}
	return s, nil
}

func relParseValue(t schema.Type, s string) (any, error) {
	if s == "NULL" {
		return nil, nil
	}
	switch t.Kind {
	case schema.Boolean:
		return strconv.ParseBool(s)
	case schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt:
		return strconv.ParseInt(s, 10, 64)
	case schema.Float, schema.Double:
		return strconv.ParseFloat(s, 64)
	case schema.Decimal:
		return decimal128.FromString(s, int32(t.Precision), int32(t.Scale))
	case schema.String, schema.Varchar, schema.Char:
		return s, nil
	case schema.Date:
		d, err := schema.ParseDate(s)
		return int64(d), err
	case schema.Datetime, schema.TimestampTZ:
		us, err := schema.ParseDatetime(strings.ReplaceAll(s, "T", " "))
		return us, err
	}
	return nil, fmt.Errorf("no values of %s", t)
}

// relParse reads a schema line, then one row per line, fields separated by
// spaces.
func relParse(text string) (rel, error) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	s, err := relParseSchema(lines[0])
	if err != nil {
		return rel{}, err
	}
	r := rel{schema: s}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != len(s) {
			return rel{}, fmt.Errorf("row %q has %d fields, not %d", l, len(f), len(s))
		}
		row := make([]any, len(f))
		for i := range f {
			if row[i], err = relParseValue(s[i].Type, f[i]); err != nil {
				return rel{}, err
			}
		}
		r.rows = append(r.rows, row)
	}
	return r, nil
}

func relAppend(b array.Builder, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.Int8Builder:
		b.Append(int8(v.(int64)))
	case *array.Int16Builder:
		b.Append(int16(v.(int64)))
	case *array.Int32Builder:
		b.Append(int32(v.(int64)))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Float32Builder:
		b.Append(float32(v.(float64)))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.Decimal128Builder:
		b.Append(v.(decimal128.Num))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.Date32Builder:
		b.Append(arrow.Date32(v.(int64)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(int64)))
	default:
		panic(fmt.Sprintf("no builder for %T", b))
	}
}

// relValueAt reads row i of a as a rel cell.
func relValueAt(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.Decimal128:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Date32:
		return int64(a.Value(i))
	case *array.Timestamp:
		return int64(a.Value(i))
	}
	panic(fmt.Sprintf("no cells of %s", a.DataType()))
}

// relBatches cuts r into batches at the given row counts (cycled; nil: one
// batch).
func relBatches(mem memory.Allocator, r rel, split []int) []arrow.RecordBatch {
	as := r.schema.Arrow()
	mk := func(rows [][]any) arrow.RecordBatch {
		b := array.NewRecordBuilder(mem, as)
		defer b.Release()
		for _, row := range rows {
			for c, v := range row {
				relAppend(b.Field(c), v)
			}
		}
		return b.NewRecordBatch()
	}
	if len(r.rows) == 0 {
		return []arrow.RecordBatch{mk(nil)}
	}
	var out []arrow.RecordBatch
	for start, k := 0, 0; start < len(r.rows); k++ {
		n := len(r.rows) - start
		if len(split) > 0 {
			n = min(n, split[k%len(split)])
		}
		out = append(out, mk(r.rows[start:start+n]))
		start += n
	}
	return out
}

func relSource(mem memory.Allocator, r rel, split []int) Operator {
	return NewSliceSource(r.schema, relBatches(mem, r, split))
}

// relDrain reads op to its end, checking the operator contract on every
// batch: its schema, no empty batch, at most BatchRows rows, no NULL in a
// column declared NOT NULL.
func relDrain(ctx context.Context, op Operator) (rel, error) {
	s := op.Schema()
	r := rel{schema: s}
	bs, err := Drain(ctx, op)
	if err != nil {
		return r, err
	}
	as := s.Arrow()
	for _, b := range bs {
		defer b.Release()
		if !b.Schema().Equal(as) {
			return r, fmt.Errorf("batch schema %s, operator schema %s", b.Schema(), as)
		}
		if b.NumRows() == 0 || b.NumRows() > BatchRows {
			return r, fmt.Errorf("batch of %d rows", b.NumRows())
		}
		for i := 0; i < int(b.NumRows()); i++ {
			row := make([]any, len(s))
			for c := range s {
				row[c] = relValueAt(b.Column(c), i)
				if row[c] == nil && !s[c].Nullable {
					return r, fmt.Errorf("NULL in NOT NULL column %s", s[c].Name)
				}
			}
			r.rows = append(r.rows, row)
		}
	}
	return r, nil
}

func relCell(t schema.Type, v any) string {
	if v == nil {
		return "NULL"
	}
	switch t.Kind {
	case schema.Decimal:
		return v.(decimal128.Num).ToString(int32(t.Scale))
	case schema.Date:
		return schema.FormatDate(int32(v.(int64)))
	case schema.Datetime, schema.TimestampTZ:
		return strings.ReplaceAll(schema.FormatDatetime(v.(int64), t.Precision), " ", "T")
	case schema.Float, schema.Double:
		return strconv.FormatFloat(v.(float64), 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

func relRowString(s Schema, row []any) string {
	f := make([]string, len(row))
	for i, v := range row {
		f[i] = relCell(s[i].Type, v)
	}
	return strings.Join(f, " ")
}

// relFormat prints the schema line, then the rows in order.
func relFormat(r rel) string {
	var b strings.Builder
	for i, c := range r.schema {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.Name + ":" + c.Type.String())
		if !c.Nullable {
			b.WriteByte('!')
		}
	}
	b.WriteByte('\n')
	for _, row := range r.rows {
		b.WriteString(relRowString(r.schema, row) + "\n")
	}
	return b.String()
}

// relSorted returns the rows as strings, sorted: the multiset to compare.
func relSorted(s Schema, rows [][]any) []string {
	out := make([]string, len(rows))
	for i, row := range rows {
		out[i] = relRowString(s, row)
	}
	slices.Sort(out)
	return out
}

// relEqualCells is SQL equality of two non-NULL cells of one type.
func relCompare(a, b any) int {
	switch a := a.(type) {
	case bool:
		bb := b.(bool)
		switch {
		case a == bb:
			return 0
		case !a:
			return -1
		}
		return 1
	case int64:
		return cmpOrdered(a, b.(int64))
	case float64:
		return cmpOrdered(a, b.(float64))
	case string:
		return strings.Compare(a, b.(string))
	case decimal128.Num:
		return a.Cmp(b.(decimal128.Num))
	}
	panic(fmt.Sprintf("compare %T", a))
}

func cmpOrdered[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpExpr compares two columns of one type (or a column with a constant):
// the residual predicate of the tests. NULL on either side gives NULL.
type cmpExpr struct {
	l, r  int
	op    string
	konst any // compare column l with konst when r < 0
}

func (e *cmpExpr) Type() schema.Type { return schema.BooleanType }

func (e *cmpExpr) String() string {
	if e.r < 0 {
		return fmt.Sprintf("#%d %s %v", e.l, e.op, e.konst)
	}
	return fmt.Sprintf("#%d %s #%d", e.l, e.op, e.r)
}

func (e *cmpExpr) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	bb := array.NewBooleanBuilder(env.Mem)
	defer bb.Release()
	for i := 0; i < int(b.NumRows()); i++ {
		x := relValueAt(b.Column(e.l), i)
		y := e.konst
		if e.r >= 0 {
			y = relValueAt(b.Column(e.r), i)
		}
		v := relCmpOp(e.op, x, y)
		if v == nil {
			bb.AppendNull()
		} else {
			bb.Append(*v)
		}
	}
	return bb.NewArray(), nil
}

func relCmpOp(op string, x, y any) *bool {
	if x == nil || y == nil {
		return nil
	}
	c := relCompare(x, y)
	var v bool
	switch op {
	case "<":
		v = c < 0
	case "<=":
		v = c <= 0
	case "=":
		v = c == 0
	case "!=":
		v = c != 0
	case ">":
		v = c > 0
	case ">=":
		v = c >= 0
	default:
		panic(op)
	}
	return &v
}

// failExpr fails on its nth evaluation.
type failExpr struct{ n int }

func (e *failExpr) Type() schema.Type { return schema.BooleanType }
func (e *failExpr) String() string    { return "fail" }
func (e *failExpr) Eval(env *Env, b arrow.RecordBatch) (arrow.Array, error) {
	if e.n--; e.n <= 0 {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "fail: evaluated")
	}
	return schemaConstBool(env.Mem, true, int(b.NumRows())), nil
}

func schemaConstBool(mem memory.Allocator, v bool, n int) arrow.Array {
	return schema.ConstArray(mem, arrow.FixedWidthTypes.Boolean, schema.IntVal(map[bool]int64{false: 0, true: 1}[v]), n)
}

// relRandomTypes are the column types of the randomized tests.
var relRandomTypes = []schema.Type{
	schema.BigIntType, schema.IntType, schema.SmallIntType, schema.StringType, schema.VarcharType(8),
	{Kind: schema.Decimal, Precision: 12, Scale: 2}, {Kind: schema.Decimal, Precision: 30, Scale: 4},
	schema.DateType, schema.DatetimeType(6), schema.DoubleType, schema.BooleanType, schema.TinyIntType,
}

// relRandomValue draws from a domain of about dom values, NULL with
// probability pNull, so that keys collide.
func relRandomValue(rng *rand.Rand, t schema.Type, dom int, pNull float64) any {
	if rng.Float64() < pNull {
		return nil
	}
	k := rng.IntN(dom) - dom/3
	switch t.Kind {
	case schema.Boolean:
		return k%2 == 0
	case schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt:
		if t.Kind == schema.BigInt && rng.IntN(8) == 0 {
			return int64(k) * (math.MaxInt64 / 64)
		}
		return int64(k)
	case schema.Float, schema.Double:
		return float64(k) / 4
	case schema.Decimal:
		n := decimal128.FromI64(int64(k) * 25)
		if t.Precision > 20 && rng.IntN(4) == 0 {
			n = n.Mul(decimal128.FromI64(1_000_000_000_000_000))
		}
		return n
	case schema.String, schema.Varchar, schema.Char:
		if k < 0 {
			return strings.Repeat("z", -k)
		}
		return fmt.Sprintf("s%d", k)
	case schema.Date:
		return int64(20000 + k)
	case schema.Datetime, schema.TimestampTZ:
		return int64(1_767_225_600_000_000 + int64(k)*1_000_000)
	}
	panic(t)
}

func relRandomSplit(rng *rand.Rand) []int {
	switch rng.IntN(4) {
	case 0:
		return nil
	case 1:
		return []int{1}
	}
	s := make([]int, 1+rng.IntN(4))
	for i := range s {
		s[i] = 1 + rng.IntN(40)
	}
	return s
}

func newTestEnv(mem memory.Allocator) *Env {
	return &Env{Mem: mem, Budget: NewBudget(0)}
}

// relMem returns a checked allocator that the test checks for leaks at
// its end.
func relMem(t testing.TB) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// relSeed returns the seed of a randomized test, ROWTTL_SEED when set (to
// replay a failure), and logs it.
func relSeed(t testing.TB) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ROWTTL_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("ROWTTL_SEED: %v", err)
		}
		seed = n
	}
	t.Logf("seed %d (replay with ROWTTL_SEED=%d)", seed, seed)
	return seed
}

// relIters is how many cases a randomized test runs: quick, or a hundred
// times more when ROWTTL_SOAK is set.
func relIters(quick int) int {
	if os.Getenv("ROWTTL_SOAK") != "" {
		return 100 * quick
	}
	return quick
}
