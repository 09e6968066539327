package parser

import (
	"reflect"
	"strings"
	"testing"
)

// tl is a piece's text and line.
type tl struct {
	text string
	line int
}

func TestSplitStatements(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []tl
	}{
		{"empty", "", nil},
		{"only spaces and comments", "  \n-- c;\n# d;\n/* e; */ ;; ;\n", nil},
		{"one without semicolon", "SELECT 1", []tl{{"SELECT 1", 1}}},
		{"one with semicolon", "SELECT 1;", []tl{{"SELECT 1", 1}}},
		{"two on one line", "SELECT 1; SELECT 2;", []tl{{"SELECT 1", 1}, {"SELECT 2", 1}}},
		{"empty statements dropped", ";;SELECT 1;;;SELECT 2;;", []tl{{"SELECT 1", 1}, {"SELECT 2", 1}}},
		{"line numbers", "SELECT 1;\n\nSELECT\n  2;\n\n\nSELECT 3", []tl{{"SELECT 1", 1}, {"SELECT\n  2", 3}, {"SELECT 3", 7}}},
		{"leading comment is not part of the text", "-- header; not a statement\nSELECT 1;", []tl{{"SELECT 1", 2}}},
		{"block comment lines counted", "/* a\nb\nc; */ SELECT 1;\nSELECT 2", []tl{{"SELECT 1", 3}, {"SELECT 2", 4}}},
		{"hash comment", "SELECT 1 # x; y\n, 2;", []tl{{"SELECT 1 # x; y\n, 2", 1}}},
		{"inner comment kept", "SELECT 1 -- x; y\n;", []tl{{"SELECT 1 -- x; y", 1}}},
		{"semicolon in single quotes", "INSERT INTO t VALUES ('a;b');SELECT 2", []tl{{"INSERT INTO t VALUES ('a;b')", 1}, {"SELECT 2", 1}}},
		{"semicolon in double quotes", `SELECT "a;b"; SELECT 2`, []tl{{`SELECT "a;b"`, 1}, {"SELECT 2", 1}}},
		{"semicolon in backquotes", "SELECT `a;b` FROM t; SELECT 2", []tl{{"SELECT `a;b` FROM t", 1}, {"SELECT 2", 1}}},
		{"escaped quote", `SELECT 'it\'s; fine'; SELECT 2`, []tl{{`SELECT 'it\'s; fine'`, 1}, {"SELECT 2", 1}}},
		{"doubled quote", `SELECT 'it''s; fine'; SELECT 2`, []tl{{`SELECT 'it''s; fine'`, 1}, {"SELECT 2", 1}}},
		{"doubled backquote", "SELECT `a``;b`; SELECT 2", []tl{{"SELECT `a``;b`", 1}, {"SELECT 2", 1}}},
		{"backslash in backquotes is plain", "SELECT `a\\`; SELECT 2", []tl{{"SELECT `a\\`", 1}, {"SELECT 2", 1}}},
		{"comment markers in strings", "SELECT '-- no', '/* no', '# no'; SELECT 2", []tl{{"SELECT '-- no', '/* no', '# no'", 1}, {"SELECT 2", 1}}},
		{"quote in comment", "SELECT 1 -- it's\n; SELECT 2", []tl{{"SELECT 1 -- it's", 1}, {"SELECT 2", 2}}},
		{"newline in string counted", "SELECT 'a\nb';\nSELECT 2", []tl{{"SELECT 'a\nb'", 1}, {"SELECT 2", 3}}},
		{"statement starting with a string", "'x'; SELECT 1", []tl{{"'x'", 1}, {"SELECT 1", 1}}},
		{"unterminated string runs to the end", "SELECT 'a; SELECT 2", []tl{{"SELECT 'a; SELECT 2", 1}}},
		{"unterminated comment runs to the end", "SELECT 1 /* ; SELECT 2", []tl{{"SELECT 1 /* ; SELECT 2", 1}}},
		{"hint", "SELECT /*+ SET_VAR(a = 1); */ 1; SELECT 2", []tl{{"SELECT /*+ SET_VAR(a = 1); */ 1", 1}, {"SELECT 2", 1}}},
		{"crlf", "SELECT 1;\r\nSELECT 2;\r\n", []tl{{"SELECT 1", 1}, {"SELECT 2", 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []tl
			for _, p := range SplitStatements(tc.src) {
				got = append(got, tl{p.Text, p.Line})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("SplitStatements(%q)\n got %+v\nwant %+v", tc.src, got, tc.want)
			}
		})
	}
}

// TestSplitPositions: each piece knows the column and offset of its first
// token, so that an error inside it maps back to the script.
func TestSplitPositions(t *testing.T) {
	src := "SELECT 1;  SELECT 2;\n  /* c */ SELECT\n 3; \u00e9; SELECT 4"
	got := SplitStatements(src)
	want := []Piece{
		{Text: "SELECT 1", Line: 1, Column: 1, Offset: 0},
		{Text: "SELECT 2", Line: 1, Column: 12, Offset: 11},
		{Text: "SELECT\n 3", Line: 2, Column: 11, Offset: 31},
		{Text: "\u00e9", Line: 3, Column: 5, Offset: 42},
		{Text: "SELECT 4", Line: 3, Column: 8, Offset: 46},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

// TestCompleteStatements: statements a ';' ends are complete; the text
// after the last ';' is the rest, empty when only comments follow.
func TestCompleteStatements(t *testing.T) {
	for _, tc := range []struct {
		src  string
		done []string
		rest string
	}{
		{"", nil, ""},
		{"SELECT 1", nil, "SELECT 1"},
		{"SELECT 1;", []string{"SELECT 1"}, ""},
		{"select 3 as c; select 4", []string{"select 3 as c"}, " select 4"},
		{"SELECT 1; -- done\n", []string{"SELECT 1"}, ""},
		{"SELECT 'a;", nil, "SELECT 'a;"},
		{"SELECT 'a;';\nSELECT\n", []string{"SELECT 'a;'"}, "\nSELECT\n"},
		{"SELECT 1 /* ; */", nil, "SELECT 1 /* ; */"},
	} {
		done, rest := CompleteStatements(tc.src)
		var texts []string
		for _, p := range done {
			texts = append(texts, p.Text)
		}
		if !reflect.DeepEqual(texts, tc.done) || rest != tc.rest {
			t.Errorf("CompleteStatements(%q) = %q, %q; want %q, %q", tc.src, texts, rest, tc.done, tc.rest)
		}
	}
}

// TestSplitThenParse runs a whole Doris-style script through the splitter
// and the parser.
func TestSplitThenParse(t *testing.T) {
	script := `-- row TTL demo
CREATE TABLE IF NOT EXISTS events (
  id BIGINT NOT NULL,
  event_time DATETIME(6) NOT NULL COMMENT 'event time; UTC+8',
  msg VARCHAR(100) NULL DEFAULT "x"
) DUPLICATE KEY(id)
DISTRIBUTED BY HASH(id) BUCKETS 1
PROPERTIES (
  "replication_num" = "1",
  "function_column.enable_row_ttl" = "true",
  "function_column.ttl_col" = "event_time",
  "function_column.ttl" = "1 day",
  "function_column.ttl_time_zone" = "+08:00"
);
SET session_now = '2026-01-01 00:00:00';
INSERT INTO events VALUES (1, NOW(6) - INTERVAL 2 DAY, 'old'), (2, NOW(6), 'new');
/* only the new row is visible */
SELECT id, msg FROM events ORDER BY id;
SELECT count(*) FROM events;
`
	pieces := SplitStatements(script)
	wantLines := []int{2, 15, 16, 18, 19}
	if len(pieces) != len(wantLines) {
		t.Fatalf("got %d pieces, want %d: %+v", len(pieces), len(wantLines), pieces)
	}
	for i, p := range pieces {
		if p.Line != wantLines[i] {
			t.Errorf("piece %d starts at line %d, want %d", i, p.Line, wantLines[i])
		}
		if _, err := Parse(p.Text); err != nil {
			t.Errorf("piece %d: %v", i, err)
		}
	}
}

// FuzzCompleteStatements: the complete statements and the rest split the
// script without losing a statement: the rest is the script's tail, each
// complete piece lies before it, and splitting the rest alone gives the
// pieces SplitStatements finds after them.
func FuzzCompleteStatements(f *testing.F) {
	for _, s := range []string{"SELECT 1; SELECT 2", "select 3 as c; select 4", "SELECT 'a;", "/* ; */ SELECT 1;", "-- x;\nSELECT 1;", "`a;b`; x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		done, rest := CompleteStatements(src)
		if !strings.HasSuffix(src, rest) {
			t.Fatalf("rest %q is not the tail of %q", rest, src)
		}
		all := SplitStatements(src)
		if len(done) > len(all) {
			t.Fatalf("%d complete of %d statements", len(done), len(all))
		}
		for i, p := range done {
			if p != all[i] || p.Offset >= len(src)-len(rest) && rest != "" {
				t.Fatalf("piece %d %+v (all: %+v, rest %q)", i, p, all[i], rest)
			}
		}
		if n := len(SplitStatements(rest)); n != len(all)-len(done) {
			t.Fatalf("rest %q has %d statements, want %d", rest, n, len(all)-len(done))
		}
	})
}
