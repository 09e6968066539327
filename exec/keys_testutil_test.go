package exec

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
)

// Test helpers shared by the tests of the blocking operators. A test value
// is a plain Go value: nil (NULL), bool, int64 (integers and temporals),
// float64 (FLOAT widened), decimal128.Num or string.

// parseTestType reads a type as SQL writes it: INT, DECIMAL(10,2),
// DATETIME(6), VARCHAR.
func parseTestType(s string) (schema.Type, error) {
	name, args, _ := strings.Cut(strings.TrimSuffix(s, ")"), "(")
	k, ok := schema.ParseKind(name)
	if !ok {
		return schema.Type{}, fmt.Errorf("unknown type %q", s)
	}
	t := schema.Type{Kind: k}
	if args != "" {
		p, sc, _ := strings.Cut(args, ",")
		t.Precision, _ = strconv.Atoi(p)
		if sc != "" {
			t.Scale, _ = strconv.Atoi(sc)
		}
	}
	if t.Kind == schema.Decimal && t.Precision == 0 {
		t.Precision = 10
	}
	return t, t.Validate()
}

// parseTestSchema reads "name:TYPE ..." into a schema of nullable columns.
func parseTestSchema(line string) (Schema, error) {
	var s Schema
	for _, f := range strings.Fields(line) {
		name, ts, ok := strings.Cut(f, ":")
		if !ok {
			return nil, fmt.Errorf("column %q is not name:TYPE", f)
		}
		t, err := parseTestType(ts)
		if err != nil {
			return nil, err
		}
		s = append(s, Column{Name: name, Type: t, Nullable: true})
	}
	return s, nil
}

// splitTestFields splits a line at spaces; 'quoted text' is one field.
func splitTestFields(line string) []string {
	var out []string
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
		if line[0] == '\'' {
			end := strings.IndexByte(line[1:], '\'')
			if end < 0 {
				end = len(line) - 1
			}
			out = append(out, line[:end+2])
			line = line[min(end+2, len(line)):]
			continue
		}
		i := strings.IndexByte(line, ' ')
		if i < 0 {
			i = len(line)
		}
		out = append(out, line[:i])
		line = line[i:]
	}
	return out
}

func parseTestValue(t schema.Type, s string) (any, error) {
	if s == "NULL" {
		return nil, nil
	}
	if strings.HasPrefix(s, "'") {
		s = strings.TrimSuffix(s[1:], "'")
	}
	switch t.Kind {
	case schema.Boolean:
		return strconv.ParseBool(s)
	case schema.TinyInt, schema.SmallInt, schema.Int, schema.BigInt, schema.TimestampNS:
		return strconv.ParseInt(s, 10, 64)
	case schema.Float, schema.Double:
		f, err := strconv.ParseFloat(s, 64)
		if t.Kind == schema.Float {
			f = float64(float32(f))
		}
		return f, err
	case schema.Decimal:
		return decimal128.FromString(s, int32(t.Precision), int32(t.Scale))
	case schema.String, schema.Varchar, schema.Char:
		return s, nil
	case schema.Date:
		d, err := schema.ParseDate(s)
		return int64(d), err
	case schema.Datetime, schema.TimestampTZ:
		return schema.ParseDatetime(s)
	}
	return nil, fmt.Errorf("no test values of %s", t)
}

func formatTestValue(t schema.Type, v any) string {
	if v == nil {
		return "NULL"
	}
	switch t.Kind {
	case schema.Boolean:
		return strconv.FormatBool(v.(bool))
	case schema.Float:
		return strconv.FormatFloat(v.(float64), 'g', -1, 32)
	case schema.Double:
		return strconv.FormatFloat(v.(float64), 'g', -1, 64)
	case schema.Decimal:
		return v.(decimal128.Num).ToString(int32(t.Scale))
	case schema.String, schema.Varchar, schema.Char:
		if v.(string) == "" {
			return "''"
		}
		return v.(string)
	case schema.Date:
		return schema.FormatDate(int32(v.(int64)))
	case schema.Datetime, schema.TimestampTZ:
		return schema.FormatDatetime(v.(int64), t.Precision)
	}
	return fmt.Sprint(v)
}

// parseTestBatches reads rows of s, one per line; a line "batch" starts a
// new batch.
func parseTestBatches(mem memory.Allocator, s Schema, lines []string) ([]arrow.RecordBatch, error) {
	var batches []arrow.RecordBatch
	var rows [][]any
	flush := func() {
		batches = append(batches, buildTestBatch(mem, s, rows))
		rows = nil
	}
	for _, line := range lines {
		if strings.TrimSpace(line) == "batch" {
			flush()
			continue
		}
		fs := splitTestFields(line)
		if len(fs) != len(s) {
			releaseAll(batches)
			return nil, fmt.Errorf("row %q has %d fields, not %d", line, len(fs), len(s))
		}
		row := make([]any, len(s))
		for i, f := range fs {
			v, err := parseTestValue(s[i].Type, f)
			if err != nil {
				releaseAll(batches)
				return nil, err
			}
			row[i] = v
		}
		rows = append(rows, row)
	}
	flush()
	return batches, nil
}

// buildTestBatch builds a batch of s from rows of test values.
func buildTestBatch(mem memory.Allocator, s Schema, rows [][]any) arrow.RecordBatch {
	rb := array.NewRecordBuilder(mem, s.Arrow())
	defer rb.Release()
	for _, row := range rows {
		for i, v := range row {
			appendTestValue(rb.Field(i), v)
		}
	}
	return rb.NewRecordBatch()
}

func appendTestValue(b array.Builder, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.Float32Builder:
		b.Append(float32(v.(float64)))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.Decimal128Builder:
		b.Append(v.(decimal128.Num))
	case *array.StringBuilder:
		b.Append(v.(string))
	default:
		appendIntKey(b, v.(int64))
	}
}

// testValueAt returns row i of a as a test value.
func testValueAt(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.Decimal128:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Date32:
		return int64(a.Value(i))
	case *array.Timestamp:
		return int64(a.Value(i))
	}
	panic("testValueAt of " + a.DataType().String())
}

// testRows returns the rows of batches as test values, checking each
// batch against the operator contract (schema, non-empty, BatchRows).
func testRows(t testing.TB, s Schema, batches []arrow.RecordBatch) [][]any {
	t.Helper()
	var rows [][]any
	want := s.Arrow()
	for _, b := range batches {
		if !b.Schema().Equal(want) {
			t.Fatalf("batch schema %s, want %s", b.Schema(), want)
		}
		if b.NumRows() == 0 || b.NumRows() > BatchRows {
			t.Fatalf("batch of %d rows", b.NumRows())
		}
		for i := range int(b.NumRows()) {
			row := make([]any, b.NumCols())
			for c := range row {
				row[c] = testValueAt(b.Column(c), i)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

func formatTestRows(s Schema, rows [][]any) []string {
	out := make([]string, len(rows))
	for i, row := range rows {
		fs := make([]string, len(row))
		for c, v := range row {
			fs[c] = formatTestValue(s[c].Type, v)
		}
		out[i] = strings.Join(fs, "\t")
	}
	return out
}

func testHeader(s Schema) string {
	names := make([]string, len(s))
	for i, c := range s {
		names[i] = c.Name
	}
	return strings.Join(names, "\t")
}

// drainTest drains op, returning its rows, or the error.
func drainTest(t testing.TB, op Operator) ([][]any, error) {
	t.Helper()
	bs, err := Drain(context.Background(), op)
	if err != nil {
		return nil, err
	}
	defer releaseAll(bs)
	return testRows(t, op.Schema(), bs), nil
}

// compareTestValues orders test values of one type: NULL first, floats
// with NaN after every number and -0 equal to 0, strings by bytes.
func compareTestValues(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	switch a := a.(type) {
	case bool:
		return cmp.Compare(b2i(a), b2i(b.(bool)))
	case int64:
		return cmp.Compare(a, b.(int64))
	case float64:
		return sqlFloatCompare(a, b.(float64))
	case decimal128.Num:
		return a.Cmp(b.(decimal128.Num))
	case string:
		return strings.Compare(a, b.(string))
	}
	panic(fmt.Sprintf("compareTestValues of %T", a))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sqlFloatCompare orders floats as SQL does here: NaN after every number.
func sqlFloatCompare(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

// randomType draws a column type of every kind the operators take.
func randomType(rng *rand.Rand) schema.Type {
	types := []schema.Type{
		schema.BooleanType, schema.TinyIntType, schema.SmallIntType, schema.IntType, schema.BigIntType,
		schema.FloatType, schema.DoubleType, {Kind: schema.Decimal, Precision: 18, Scale: 2},
		{Kind: schema.Decimal, Precision: 38, Scale: 6}, schema.StringType, schema.VarcharType(20),
		schema.DateType, schema.DatetimeType(6), schema.TimestampTZType(3), {Kind: schema.TimestampNS},
	}
	return types[rng.IntN(len(types))]
}

// randomValue draws a value of t from a small domain (so that keys
// repeat), NULL with probability nullP.
func randomValue(rng *rand.Rand, t schema.Type, domain int, nullP float64) any {
	if rng.Float64() < nullP {
		return nil
	}
	n := int64(rng.IntN(domain)) - int64(domain/2)
	switch t.Kind {
	case schema.Boolean:
		return n%2 == 0
	case schema.TinyInt:
		return n % 100
	case schema.SmallInt, schema.Int:
		return n * 997
	case schema.Float, schema.Double:
		switch rng.IntN(20) {
		case 0:
			return math.NaN()
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return math.Inf(1 - 2*rng.IntN(2))
		}
		return float64(n) / 4
	case schema.Decimal:
		if t.Precision == 38 && rng.IntN(10) == 0 {
			return decimal128.New(int64(n)<<40, uint64(rng.Uint64()))
		}
		return decimal128.FromI64(n * 1001)
	case schema.String, schema.Varchar, schema.Char:
		return strings.Repeat("ab\x00", int(n+int64(domain))%3) + strconv.FormatInt(n, 36)
	case schema.Date:
		return 19000 + n
	}
	return n * 3_600_000_000
}

// diffLines describes the first difference between got and want, or
// returns "" when they are equal.
func diffLines(got, want []string) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w || i >= len(got) || i >= len(want) {
			return fmt.Sprintf("%d lines, want %d; line %d is %q, want %q", len(got), len(want), i, g, w)
		}
	}
	return ""
}
