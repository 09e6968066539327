package exec

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
)

// TestQuantified checks x > ANY and x > ALL of the extremes the plan sets,
// over no value, values with and without NULLs and only NULLs, against
// SQL's three-valued answers worked out by hand.
func TestQuantified(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	env := &Env{Mem: mem}
	s := Schema{{Name: "x", Type: schema.BigIntType, Nullable: true}}
	b := buildTestBatch(mem, s, [][]any{{int64(1)}, {int64(2)}, {int64(3)}, {nil}})
	defer b.Release()
	x := &ColumnRef{Index: 0, Name: "x", Typ: schema.BigIntType}
	for _, c := range []struct {
		name          string
		all           bool
		rows, nonNull int64
		min, max      schema.Value
		want          []string
	}{
		{"ANY of nothing", false, 0, 0, schema.Null, schema.Null, []string{"false", "false", "false", "false"}},
		{"ALL of nothing", true, 0, 0, schema.Null, schema.Null, []string{"true", "true", "true", "true"}},
		{"ANY of {2}", false, 1, 1, schema.IntVal(2), schema.IntVal(2), []string{"false", "false", "true", "NULL"}},
		{"ALL of {2, 2}", true, 2, 2, schema.IntVal(2), schema.IntVal(2), []string{"false", "false", "true", "NULL"}},
		{"ANY of {2, NULL}", false, 2, 1, schema.IntVal(2), schema.IntVal(2), []string{"NULL", "NULL", "true", "NULL"}},
		{"ALL of {2, NULL}", true, 2, 1, schema.IntVal(2), schema.IntVal(2), []string{"false", "false", "NULL", "NULL"}},
		{"ANY of {NULL}", false, 1, 0, schema.Null, schema.Null, []string{"NULL", "NULL", "NULL", "NULL"}},
		{"ALL of {NULL}", true, 1, 0, schema.Null, schema.Null, []string{"NULL", "NULL", "NULL", "NULL"}},
	} {
		cell := &ScalarCell{Typ: schema.BigIntType, Val: c.min, Text: "min"}
		if c.all {
			cell.Val = c.max
		}
		test, err := NewCompare(Gt, x, cell)
		if err != nil {
			t.Fatal(err)
		}
		q := &Quantified{X: x, Test: test, Op: Gt, All: c.all, Stats: &QuantStats{Rows: c.rows, NonNull: c.nonNull}, Text: "(q)"}
		got, err := q.Eval(env, b)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for i := range got.Len() {
			if got.IsNull(i) {
				lines = append(lines, "NULL")
			} else if got.(*array.Boolean).Value(i) {
				lines = append(lines, "true")
			} else {
				lines = append(lines, "false")
			}
		}
		got.Release()
		if !slices.Equal(lines, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, lines, c.want)
		}
	}
}
