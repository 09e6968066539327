package exec

import (
	"testing"
	"unicode/utf8"
)

// FuzzLike checks the compiled LIKE matcher (its fast paths included)
// against the general backtracking matcher on any pattern and text.
func FuzzLike(f *testing.F) {
	for _, seed := range [][2]string{
		{"abc", "abc"}, {"a%", "abc"}, {"%c", "abc"}, {"%b%", "abc"}, {"%", ""},
		{"a_c", "abc"}, {`a\%`, "a%"}, {"%%", "x"}, {"é%", "été"}, {"%a%b%", "xaxb"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if !utf8.ValidString(pattern) || !utf8.ValidString(s) {
			return
		}
		g, err := NewLike(col(0, str), pattern, '\\', false)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := g.match(s), LikeMatch([]rune(s), []rune(pattern), '\\'); got != want {
			t.Fatalf("%q LIKE %q = %v (kind %d), want %v", s, pattern, got, g.kind, want)
		}
	})
}
