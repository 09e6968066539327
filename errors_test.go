package rowttl

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

func TestErrorfAndMessage(t *testing.T) {
	inner := fmt.Errorf("open x: %w", ErrCorruption)
	for _, c := range []struct {
		err     error
		is      error
		message string
	}{
		{Errorf(ErrInvalidProperty, "row ttl duration must not be negative"), ErrInvalidProperty, "row ttl duration must not be negative"},
		{Errorf(ErrInvalidArgument, "row %d: %w", 3, inner), ErrCorruption, "row 3: open x"},
		{fmt.Errorf("Unknown table 't': %w", ErrNotFound), ErrNotFound, "Unknown table 't'"},
		{errors.New("plain"), nil, "plain"},
	} {
		if c.is != nil && !errors.Is(c.err, c.is) {
			t.Errorf("%v does not wrap %v", c.err, c.is)
		}
		if got := Message(c.err); got != c.message {
			t.Errorf("Message(%q) = %q, want %q", c.err, got, c.message)
		}
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
