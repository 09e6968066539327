package exec

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

func TestLikeRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	env := &Env{Mem: mem}
	b := batchOf(mem, []schema.Type{str, str}, [][]schema.Value{
		{sv("abc"), sv("a%")}, {sv("abd"), sv("a%")}, {sv("abc"), sv("%d")},
		{schema.Null, sv("%")}, {sv("a_c"), sv("a!_c")}, {sv("abc"), schema.Null}, {sv("héllo"), sv("h_llo")},
	})
	defer b.Release()
	for _, c := range []struct {
		esc  rune
		not  bool
		want string
	}{
		{'\\', false, "true,true,false,NULL,false,NULL,true"},
		{'\\', true, "false,false,true,NULL,true,NULL,false"},
		{'!', false, "true,true,false,NULL,true,NULL,true"},
	} {
		k, err := NewLikeRows(col(0, str), col(1, str), c.esc, c.not)
		if err != nil {
			t.Fatal(err)
		}
		out, err := k.Eval(env, b)
		if err != nil {
			t.Fatal(err)
		}
		if got := show(out, schema.BooleanType); got != c.want {
			t.Errorf("%s ESCAPE %q = %s, want %s", k, c.esc, got, c.want)
		}
		out.Release()
	}
	if _, err := NewLikeRows(col(0, i64), col(1, str), '\\', false); !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Errorf("a BIGINT subject: %v", err)
	}
}
