package parser

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// TestParse runs the golden files of testdata/parse. Commands:
//
//	parse       parse the input as one statement; print the AST or the error
//	query       parse the input as one statement; print the canonical text
//	            of its query (FormatQuery) and then its AST, or the error
//	expr        parse the input as one expression; print its canonical form
//	            and its tree
//	split       split the input into statements; print each with its line
//
// Every accepted statement is also checked for round-trips (see
// checkRoundTrip). Regenerate with: go test ./sql -rewrite
func TestParse(t *testing.T) {
	paths, err := filepath.Glob("testdata/parse/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
				switch d.Cmd {
				case "parse":
					stmt, err := Parse(d.Input)
					if err != nil {
						return "error: " + err.Error() + "\n"
					}
					if err := checkRoundTrip(d.Input, stmt); err != nil {
						t.Errorf("%s: %v", d.Pos, err)
					}
					return dumpNode(stmt)
				case "query":
					stmt, err := Parse(d.Input)
					if err != nil {
						return "error: " + err.Error() + "\n"
					}
					if err := checkRoundTrip(d.Input, stmt); err != nil {
						t.Errorf("%s: %v", d.Pos, err)
					}
					q := stmtQuery(stmt)
					if q == nil {
						d.Fatalf(t, "%T has no query", stmt)
					}
					return FormatQuery(q) + "\n" + dumpNode(stmt)
				case "expr":
					e, err := ParseExpr(d.Input)
					if err != nil {
						return "error: " + err.Error() + "\n"
					}
					if err := checkExpr(e); err != nil {
						t.Errorf("%s: %v", d.Pos, err)
					}
					var b strings.Builder
					fmt.Fprintf(&b, "%s\n", FormatExpr(e))
					dumpTree(&b, e, 0)
					return b.String()
				case "split":
					var b strings.Builder
					for _, p := range SplitStatements(d.Input) {
						fmt.Fprintf(&b, "%d: %q\n", p.Line, p.Text)
					}
					return b.String()
				}
				d.Fatalf(t, "unknown command %s", d.Cmd)
				return ""
			})
		})
	}
}

// checkExpr checks that the canonical form of e parses back to a tree with
// the same canonical form.
func checkExpr(e Expr) error {
	if _, ok := e.(*DefaultExpr); ok {
		return nil
	}
	s := FormatExpr(e)
	e2, err := ParseExpr(s)
	if err != nil {
		return fmt.Errorf("FormatExpr output %q does not parse: %v", s, err)
	}
	if s2 := FormatExpr(e2); s2 != s {
		return fmt.Errorf("FormatExpr is not stable: %q reparses as %q", s, s2)
	}
	if !sameTree(e, e2) {
		return fmt.Errorf("%q reparses to a different tree", s)
	}
	return nil
}

// stmtQuery returns the query of a SELECT, a set operation or an INSERT ...
// SELECT, nil for other statements.
func stmtQuery(stmt Stmt) QueryExpr {
	switch s := stmt.(type) {
	case QueryExpr:
		return s
	case *Insert:
		return s.Query()
	}
	return nil
}

// checkQuery checks that the canonical form of q parses back to the same
// tree and formats identically.
func checkQuery(q QueryExpr) error {
	s := FormatQuery(q)
	stmt, err := Parse(s)
	if err != nil {
		return fmt.Errorf("FormatQuery output %q does not parse: %v", s, err)
	}
	q2, ok := stmt.(QueryExpr)
	if !ok {
		return fmt.Errorf("FormatQuery output %q parses as a %T", s, stmt)
	}
	if s2 := FormatQuery(q2); s2 != s {
		return fmt.Errorf("FormatQuery is not stable: %q reparses as %q", s, s2)
	}
	if !sameTree(q, q2) {
		return fmt.Errorf("%q reparses to a different tree", s)
	}
	return nil
}

var selectItemType = reflect.TypeFor[SelectItem]()

// sameTree compares two syntax trees, ignoring SelectItem.Text: the text
// as written, which canonical formatting changes.
func sameTree(a, b any) bool {
	return sameValue(reflect.ValueOf(a), reflect.ValueOf(b))
}

func sameValue(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Interface, reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameValue(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type() == selectItemType && a.Type().Field(i).Name == "Text" {
				continue
			}
			if !sameValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !sameValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// checkRoundTrip checks the query of stmt with checkQuery, every
// expression of stmt with checkExpr, and that each select item's Text is
// part of the source and parses to the item's expression.
func checkRoundTrip(src string, stmt Stmt) error {
	var errs []error
	if q := stmtQuery(stmt); q != nil {
		if err := checkQuery(q); err != nil {
			errs = append(errs, err)
		}
	}
	walkNodes(reflect.ValueOf(stmt), func(v any) {
		switch v := v.(type) {
		case Expr:
			if err := checkExpr(v); err != nil {
				errs = append(errs, err)
			}
		case *SelectItem:
			if !strings.Contains(src, v.Text) {
				errs = append(errs, fmt.Errorf("select item text %q is not in the source", v.Text))
			}
			if v.Star {
				return
			}
			e, err := ParseExpr(v.Text)
			if err != nil {
				errs = append(errs, fmt.Errorf("select item text %q does not parse: %v", v.Text, err))
			} else if FormatExpr(e) != FormatExpr(v.Expr) {
				errs = append(errs, fmt.Errorf("select item text %q parses as %q, not %q", v.Text, FormatExpr(e), FormatExpr(v.Expr)))
			}
		}
	})
	return errors.Join(errs...)
}

var exprType = reflect.TypeFor[Expr]()

// walkNodes calls fn for every expression (not descending into it) and every
// *SelectItem reachable from v.
func walkNodes(v reflect.Value, fn func(any)) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			walkNodes(v.Elem(), fn)
		}
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		if v.Type().Implements(exprType) {
			fn(v.Interface())
			return
		}
		if it, ok := v.Interface().(*SelectItem); ok {
			fn(it)
		}
		walkNodes(v.Elem(), fn)
	case reflect.Struct:
		for i := range v.NumField() {
			walkNodes(v.Field(i), fn)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walkNodes(v.Index(i), fn)
		}
	}
}

// dumpNode renders a statement as an indented list of its non-zero fields;
// expressions are shown in their canonical form.
func dumpNode(n any) string {
	var b strings.Builder
	v := reflect.ValueOf(n)
	fmt.Fprintf(&b, "%s\n", reflect.Indirect(v).Type().Name())
	dumpFields(&b, reflect.Indirect(v), 1)
	return b.String()
}

var defaultKinds = map[schema.DefaultKind]string{
	schema.NoDefault: "none", schema.DefaultNull: "NULL",
	schema.DefaultLiteral: "literal", schema.DefaultCurrentTimestamp: "CURRENT_TIMESTAMP",
}

func dumpFields(b *strings.Builder, v reflect.Value, depth int) {
	ind := strings.Repeat("  ", depth)
	for i := range v.NumField() {
		f := v.Field(i)
		if f.IsZero() {
			continue
		}
		name := v.Type().Field(i).Name
		if inline, ok := dumpInline(f); ok {
			fmt.Fprintf(b, "%s%s: %s\n", ind, name, inline)
			continue
		}
		fmt.Fprintf(b, "%s%s:\n", ind, name)
		dumpBlock(b, f, depth+1)
	}
}

// dumpInline renders values that fit on one line.
func dumpInline(f reflect.Value) (string, bool) {
	if f.Kind() == reflect.Interface && f.Type() == exprType {
		return FormatExpr(f.Interface().(Expr)), true
	}
	if f.Kind() == reflect.Pointer && f.Type().Implements(exprType) {
		return FormatExpr(f.Interface().(Expr)), true
	}
	switch x := f.Interface().(type) {
	case schema.Type:
		return x.String(), true
	case schema.DefaultKind:
		return defaultKinds[x], true
	case TableName:
		return x.String(), true
	case string:
		return strconv.Quote(x), true
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]", true
	case []Expr:
		return "[" + formatExprs(x) + "]", true
	case fmt.Stringer:
		return x.String(), true
	}
	switch f.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int64:
		return fmt.Sprint(f.Interface()), true
	}
	return "", false
}

func formatExprs(list []Expr) string {
	s := make([]string, len(list))
	for i, e := range list {
		s[i] = FormatExpr(e)
	}
	return strings.Join(s, ", ")
}

// dumpBlock renders structs, pointers to structs and slices over several
// lines.
func dumpBlock(b *strings.Builder, f reflect.Value, depth int) {
	ind := strings.Repeat("  ", depth)
	switch f.Kind() {
	case reflect.Interface, reflect.Pointer:
		e := f.Elem()
		if e.Kind() == reflect.Pointer {
			e = e.Elem()
		}
		if f.Kind() == reflect.Pointer {
			// The field's name says what it is.
			dumpFields(b, e, depth)
			return
		}
		fmt.Fprintf(b, "%s%s\n", ind, e.Type().Name())
		dumpFields(b, e, depth+1)
	case reflect.Slice:
		for i := range f.Len() {
			el := f.Index(i)
			switch x := el.Interface().(type) {
			case Property:
				fmt.Fprintf(b, "%s%q = %q\n", ind, x.Key, x.Value)
			case []Expr:
				fmt.Fprintf(b, "%s(%s)\n", ind, formatExprs(x))
			default:
				if s, ok := dumpInline(el); ok {
					fmt.Fprintf(b, "%s- %s\n", ind, s)
					continue
				}
				e := reflect.Indirect(el)
				if el.Kind() == reflect.Interface {
					e = reflect.Indirect(el.Elem())
				}
				fmt.Fprintf(b, "%s- %s\n", ind, e.Type().Name())
				dumpFields(b, e, depth+1)
			}
		}
	default:
		fmt.Fprintf(b, "%s%v\n", ind, f.Interface())
	}
}

// dumpTree renders an expression as an indented tree, one node a line.
func dumpTree(b *strings.Builder, e Expr, depth int) {
	ind := strings.Repeat("  ", depth)
	v := reflect.ValueOf(e).Elem()
	var attrs []string
	var kids []struct {
		name string
		e    Expr
	}
	for i := range v.NumField() {
		f := v.Field(i)
		name := v.Type().Field(i).Name
		switch x := f.Interface().(type) {
		case Expr:
			if x != nil {
				kids = append(kids, struct {
					name string
					e    Expr
				}{name, x})
			}
		case []Expr:
			for j, k := range x {
				kids = append(kids, struct {
					name string
					e    Expr
				}{fmt.Sprintf("%s[%d]", name, j), k})
			}
		case []*When:
			for j, w := range x {
				kids = append(kids, struct {
					name string
					e    Expr
				}{fmt.Sprintf("When[%d]", j), w.Cond}, struct {
					name string
					e    Expr
				}{fmt.Sprintf("Then[%d]", j), w.Result})
			}
		case QueryExpr:
			attrs = append(attrs, name+"=("+FormatQuery(x)+")")
		case *WindowSpec:
			var b strings.Builder
			formatWindowSpec(&b, x)
			attrs = append(attrs, name+"=("+b.String()+")")
		default:
			if f.IsZero() && v.NumField() > 1 {
				continue
			}
			if s, ok := dumpInline(f); ok {
				attrs = append(attrs, name+"="+s)
			}
		}
	}
	fmt.Fprintf(b, "%s%s", ind, v.Type().Name())
	if len(attrs) > 0 {
		fmt.Fprintf(b, " %s", strings.Join(attrs, " "))
	}
	b.WriteByte('\n')
	for _, k := range kids {
		fmt.Fprintf(b, "%s  %s:\n", ind, k.name)
		dumpTree(b, k.e, depth+2)
	}
}

func TestParseErrorSentinels(t *testing.T) {
	for _, tc := range []struct {
		src      string
		sentinel error
	}{
		{"SELECT * FROM", rowttl.ErrInvalidArgument},
		{"CREATE TABLE t (a FOO)", rowttl.ErrInvalidSchema},
		{"SELECT 'abc", rowttl.ErrInvalidArgument},
	} {
		_, err := Parse(tc.src)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q: got %v, want a *ParseError", tc.src, err)
			continue
		}
		if !errors.Is(err, tc.sentinel) {
			t.Errorf("%q: %v does not wrap %v", tc.src, err, tc.sentinel)
		}
	}
}

// fuzzSeeds are statements for the fuzz corpus beyond the golden files.
var fuzzSeeds = []string{
	"SELECT 1",
	"SELECT a, b AS c, count(*) FROM db.t AS x WHERE a > 1 AND b IS NOT NULL GROUP BY a HAVING count(*) > 1 ORDER BY 1 DESC LIMIT 10 OFFSET 2",
	"SELECT -9223372036854775808, 9223372036854775808, 1.5e300, 'a''b\\n', `we``ird`",
	"SELECT CASE WHEN a THEN 1 ELSE 2 END, CAST(x AS DATETIME(6)), NOW(6) - INTERVAL 2 DAY",
	"INSERT INTO t (a, __TTL__) VALUES (1, DEFAULT), (2, NULL)",
	"UPDATE t SET a = a + 1 WHERE b IN (1, 2, 3)",
	"DELETE FROM t WHERE a BETWEEN 1 AND 2 OR NOT a LIKE 'x%'",
	"CREATE TABLE t (a INT KEY, b DATETIME(3) REPLACE NULL DEFAULT CURRENT_TIMESTAMP(3)) AGGREGATE KEY(a)",
	"ALTER TABLE t ADD COLUMN c INT NULL DEFAULT '0' AFTER b, DROP COLUMN d",
	"SET time_zone = '+08:00', show_hidden_columns = true",
	"ADMIN COMPACT TABLE t WHERE type = 'full'",
	"SELECT a <=> b, !a, a DIV 2 % 3, - - a, - -1, date_add(d, INTERVAL 1 HOUR), days_sub(d, 2)",
	"WITH c (x) AS (SELECT a FROM t) SELECT c.x, u.* FROM c LEFT JOIN (u, v) ON c.x = u.x, w JOIN (SELECT 1) AS s USING (k) WHERE EXISTS (SELECT 1) AND c.x NOT IN ((SELECT 1) UNION SELECT 2)",
	"(SELECT a FROM t ORDER BY a LIMIT 1) UNION ALL SELECT b FROM u INTERSECT (SELECT c FROM v) EXCEPT SELECT d ORDER BY 1 DESC LIMIT 2, 3",
	"SELECT rank() OVER (w ORDER BY b ROWS BETWEEN 2 PRECEDING AND UNBOUNDED FOLLOWING), lag(a, 1, NULL) OVER w FROM t WINDOW w AS (PARTITION BY a)",
	"SELECT a REGEXP 'x', timestampdiff(QUARTER, a, b), EXTRACT(WEEK FROM a), ((SELECT 1) + 1) FROM t",
	"SELECT ~a & b | c ^ d << 2 >> e, TRIM(LEADING 'x' FROM a), POSITION(b IN a), group_concat(DISTINCT a SEPARATOR '-') FROM t",
}

// FuzzParse checks that Parse never panics and that every expression of an
// accepted statement formats to text that parses back to the same tree. The
// seed corpus (fuzzSeeds and every input of the golden files) runs in the
// normal test run.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	paths, _ := filepath.Glob("testdata/parse/*.txt")
	for _, path := range paths {
		datadriven.RunTestAny(f, path, func(t testing.TB, d *datadriven.TestData) string {
			f.Add(d.Input)
			return d.Expected
		})
	}
	f.Fuzz(func(t *testing.T, src string) {
		stmt, err := Parse(src)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) returned %T, want *ParseError", src, err)
			}
			return
		}
		if err := checkRoundTrip(src, stmt); err != nil {
			t.Fatalf("Parse(%q): %v", src, err)
		}
		for _, p := range SplitStatements(src) {
			if !strings.Contains(src, p.Text) {
				t.Fatalf("SplitStatements(%q): piece %q not in the source", src, p.Text)
			}
		}
	})
}

func TestParseErrorReturnsNil(t *testing.T) {
	if stmt, err := Parse("SELECT 1 garbage more"); stmt != nil || err == nil {
		t.Errorf("Parse = %v, %v; want nil and an error", stmt, err)
	}
	if e, err := ParseExpr("1 2"); e != nil || err == nil {
		t.Errorf("ParseExpr = %v, %v; want nil and an error", e, err)
	}
}
