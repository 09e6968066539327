package schema

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
	"github.com/rowttl/rowttl"
)

// TestTypesGolden runs testdata/types: each case names a type and lists
// literals, and prints the type's SQL name, whether it is valid, its Arrow
// type, then each literal's Value (or error) and the Value read back from
// an Arrow array it was appended to. Regenerate with
// `go test ./schema -run TestTypesGolden -rewrite`.
//
//	type kind=K [precision=P] [scale=S] [length=L]
//	<one literal per line>
func TestTypesGolden(t *testing.T) {
	datadriven.RunTest(t, "testdata/types", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "type" {
			d.Fatalf(t, "unknown command %s", d.Cmd)
		}
		var name string
		d.ScanArgs(t, "kind", &name)
		k, ok := ParseKind(name)
		if !ok {
			return fmt.Sprintf("unknown kind %s\n", name)
		}
		typ := Type{Kind: k}
		d.MaybeScanArgs(t, "precision", &typ.Precision)
		d.MaybeScanArgs(t, "scale", &typ.Scale)
		d.MaybeScanArgs(t, "length", &typ.Length)
		var out strings.Builder
		fmt.Fprintf(&out, "%s -> arrow %s\n", typ, typ.Arrow())
		if err := typ.Validate(); err != nil {
			if !errors.Is(err, rowttl.ErrInvalidSchema) {
				t.Errorf("%s: %v does not wrap ErrInvalidSchema", typ, err)
			}
			fmt.Fprintf(&out, "invalid: %v\n", err)
			return out.String()
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		for _, lit := range strings.Split(d.Input, "\n") {
			if lit == "" {
				continue
			}
			v, err := ParseLiteral(typ, lit)
			if err != nil {
				if !errors.Is(err, rowttl.ErrInvalidArgument) {
					t.Errorf("%s %q: %v does not wrap ErrInvalidArgument", typ, lit, err)
				}
				fmt.Fprintf(&out, "%q: error: %v\n", lit, err)
				continue
			}
			b := array.NewBuilder(mem, typ.Arrow())
			AppendValue(b, v)
			a := b.NewArray()
			back := ValueAt(a, 0)
			fmt.Fprintf(&out, "%q: %s (arrow %s)", lit, v, a.ValueStr(0))
			if back.Compare(v) != 0 {
				fmt.Fprintf(&out, " reads back as %s", back)
			}
			out.WriteString("\n")
			a.Release()
			b.Release()
		}
		return out.String()
	})
}
