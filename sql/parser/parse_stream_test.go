package parser

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzParseStream checks that parsing a statement as a stream (the rows of
// INSERT ... VALUES read one by one, the tokens lexed as needed) gives the
// statement Parse gives, or the same error. The seeds (FuzzParse's, and
// INSERTs long enough to slide the token window) run in the normal run.
func FuzzParseStream(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	long := "INSERT INTO t VALUES " + chain("(1, 'a', -2.5, DEFAULT, now() + INTERVAL 1 DAY)", ", ", 400)
	for _, s := range []string{
		"INSERT INTO t VALUES (1), (2);",
		"INSERT INTO t (a, b) VALUES (1, 2), (3, 4) garbage",
		"INSERT INTO t VALUES (1), (2,",
		"INSERT INTO t VALUES ()",
		"INSERT INTO t VALUES (1), ('unterminated",
		long, long + ", (", long + " ;", long + "; SELECT 1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		want, wantErr := Parse(src)
		got, vs, err := ParseStream(src)
		if err == nil && vs != nil {
			ins := got.(*Insert)
			for {
				row, rerr := vs.Next()
				if rerr != nil {
					err = rerr
					break
				}
				if row == nil {
					break
				}
				ins.Rows = append(ins.Rows, row)
			}
		}
		switch {
		case (err == nil) != (wantErr == nil):
			t.Fatalf("%q: stream error %v, Parse error %v", src, err, wantErr)
		case err != nil:
			if err.Error() != wantErr.Error() {
				t.Fatalf("%q: stream error %q, Parse error %q", src, err, wantErr)
			}
		case !reflect.DeepEqual(got, want):
			t.Fatalf("%q: stream parsed %#v, Parse %#v", src, got, want)
		}
	})
}

// chain returns n terms joined by op: "x op x op ... x".
func chain(x, op string, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(op)
		}
		b.WriteString(x)
	}
	return b.String()
}
