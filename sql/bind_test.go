package sql

import (
	"errors"
	"testing"
	"time"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/sql/parser"
)

func TestBindParams(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	sh := time.FixedZone("+08:00", 8*3600)
	for _, c := range []struct {
		text string
		args []any
		loc  *time.Location
		want string
	}{
		{"SELECT ?", []any{int64(-3)}, nil, "SELECT -3"},
		{"SELECT ?, ?, ?, ?", []any{nil, true, false, 1.5}, nil, "SELECT NULL, TRUE, FALSE, 1.5e+00"},
		{"SELECT '?', `?`, \"?\", ? -- ?\n, ? # ?\n /* ? */ ?", []any{1, 2, 3}, nil, "SELECT '?', `?`, \"?\", 1 -- ?\n, 2 # ?\n /* ? */ 3"},
		{"SELECT 'it''s ?', 'a\\'?', ?", []any{"x"}, nil, "SELECT 'it''s ?', 'a\\'?', 'x'"},
		{"SELECT ?", []any{"it's a \\ test"}, nil, `SELECT 'it\'s a \\ test'`},
		{"SELECT ?", []any{[]byte("b")}, nil, "SELECT 'b'"},
		{"SELECT ?", []any{at}, nil, "SELECT '2026-01-02 03:04:05.000006'"},
		{"SELECT ?", []any{at}, sh, "SELECT '2026-01-02 11:04:05.000006'"},
		{"SELECT 1", nil, nil, "SELECT 1"},
		{"SELECT?FROM t", []any{1}, nil, "SELECT 1 FROM t"},
		{"SELECT 1-?", []any{-1}, nil, "SELECT 1- -1"},
		{"SELECT ?'x'", []any{"a"}, nil, "SELECT 'a' 'x'"},
	} {
		got, err := BindParams(c.text, c.args, c.loc)
		if err != nil || got != c.want {
			t.Errorf("BindParams(%q) = %q, %v; want %q", c.text, got, err, c.want)
		}
		if n := CountParams(c.text); n != len(c.args) {
			t.Errorf("CountParams(%q) = %d", c.text, n)
		}
	}
	for _, c := range []struct {
		text string
		args []any
	}{
		{"SELECT ?", nil},
		{"SELECT 1", []any{1}},
		{"SELECT ?", []any{struct{}{}}},
		{"SELECT ?", []any{1 / zero()}},
	} {
		if _, err := BindParams(c.text, c.args, nil); !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Errorf("BindParams(%q, %v): %v", c.text, c.args, err)
		}
	}
}

func zero() float64 { return 0 }

// FuzzBindParams checks that a bound statement reads back its values: the
// placeholders of the text are replaced and nothing else changes, so the
// bound text has as many tokens as the text with each ? a literal.
func FuzzBindParams(f *testing.F) {
	for _, s := range []string{"SELECT ?", "SELECT '?', ?", "-- ?\n?", "/* ? */ ?", "`a?b` ?", "'\\'?' ?", "'unterminated ?", "/* open ?"} {
		f.Add(s, "va'l\\ue")
	}
	f.Fuzz(func(t *testing.T, text, arg string) {
		n := CountParams(text)
		args := make([]any, n)
		for i := range args {
			args[i] = arg
		}
		out, err := BindParams(text, args, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 && out != text {
			t.Fatalf("no placeholder, text changed: %q", out)
		}
		// Whatever a value holds it stays one literal: the text parses
		// with it exactly when it parses with a plain one of its type.
		for _, alt := range [][2]any{{arg, "z"}, {int64(-1), int64(7)}, {-2.5, 1.0}} {
			a := make([]any, n)
			b := make([]any, n)
			for i := range a {
				a[i], b[i] = alt[0], alt[1]
			}
			ta, _ := BindParams(text, a, nil)
			tb, _ := BindParams(text, b, nil)
			_, e1 := parser.Parse(ta)
			_, e2 := parser.Parse(tb)
			if (e1 == nil) != (e2 == nil) {
				t.Fatalf("%q parses (%v) but %q does not (%v), or the reverse", ta, e1, tb, e2)
			}
		}
	})
}
