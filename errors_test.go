package rowttl

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestErrorf(t *testing.T) {
	inner := fmt.Errorf("open x: %w", Errorf(ErrCorruption, "bad checksum"))
	for _, c := range []struct {
		err     error
		is      []error
		message string
	}{
		{Errorf(ErrInvalidProperty, "row ttl duration must not be negative"), []error{ErrInvalidProperty}, "row ttl duration must not be negative"},
		{Errorf(ErrInvalidArgument, "row %d: %w", 3, inner), []error{ErrInvalidArgument, ErrCorruption}, "row 3: open x: bad checksum"},
		{errors.New("plain"), nil, "plain"},
	} {
		for _, s := range c.is {
			if !errors.Is(c.err, s) {
				t.Errorf("%v does not wrap %v", c.err, s)
			}
		}
		if got := c.err.Error(); got != c.message {
			t.Errorf("message %q, want %q", got, c.message)
		}
	}
}

// TestGoldenMessagesCarryNoSentinelText: the error messages the golden
// files of every package hold (statements' ERROR lines, the MySQL
// protocol's, the command's) never carry a sentinel's own text, which is
// for errors.Is and would repeat what the message already says. Callers
// print err.Error() as it is.
func TestGoldenMessagesCarryNoSentinelText(t *testing.T) {
	sentinels := []error{ErrCorruption, ErrInvalidProperty, ErrInvalidSchema, ErrInvalidArgument,
		ErrNotSupported, ErrExists, ErrNotFound, ErrClosed, ErrMemLimit, ErrLabelExists}
	if len(sentinels) != len(rootSentinels) {
		t.Fatalf("%d sentinels here, %d in rootSentinels: list the new one in both", len(sentinels), len(rootSentinels))
	}
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.Contains(filepath.ToSlash(path), "testdata/") || strings.Contains(path, "/corpus/") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for i, line := range strings.Split(string(b), "\n") {
			for _, s := range sentinels {
				if strings.Contains(line, s.Error()) {
					t.Errorf("%s:%d carries the text of a sentinel (%q): %s", path, i+1, s.Error(), line)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("only %d golden files found", files)
	}
}

// TestNoSentinelText holds the engine to one way of making an error: a
// sentinel of this package is wrapped with Errorf, never with fmt.Errorf's
// %w, which would append the sentinel's text ("rowttl: not found") to the
// message a user reads.
func TestNoSentinelText(t *testing.T) {
	fset := token.NewFileSet()
	var bad []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "." && (n == "testdata" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fn, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || fn.Sel.Name != "Errorf" {
				return true
			}
			if pkg, ok := fn.X.(*ast.Ident); !ok || pkg.Name != "fmt" {
				return true
			}
			for _, a := range call.Args {
				if isSentinel(a, f.Name.Name) {
					bad = append(bad, fset.Position(call.Pos()).String())
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: fmt.Errorf wraps a rowttl sentinel; use rowttl.Errorf(sentinel, ...)", b)
	}
}

// isSentinel reports an expression naming one of this package's sentinels:
// rowttl.ErrX anywhere, ErrX inside this package.
func isSentinel(e ast.Expr, pkg string) bool {
	var name string
	switch x := e.(type) {
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok && id.Name == "rowttl" {
			name = x.Sel.Name
		}
	case *ast.Ident:
		if pkg == "rowttl" {
			name = x.Name
		}
	}
	return rootSentinels[name]
}

var rootSentinels = map[string]bool{
	"ErrCorruption": true, "ErrInvalidProperty": true, "ErrInvalidSchema": true, "ErrInvalidArgument": true,
	"ErrNotSupported": true, "ErrExists": true, "ErrNotFound": true, "ErrClosed": true, "ErrMemLimit": true,
	"ErrLabelExists": true,
}
