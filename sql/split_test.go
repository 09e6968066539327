package sql

import (
	"reflect"
	"testing"
)

func TestSplitStatements(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []Piece
	}{
		{"empty", "", nil},
		{"only spaces and comments", "  \n-- c;\n# d;\n/* e; */ ;; ;\n", nil},
		{"one without semicolon", "SELECT 1", []Piece{{"SELECT 1", 1}}},
		{"one with semicolon", "SELECT 1;", []Piece{{"SELECT 1", 1}}},
		{"two on one line", "SELECT 1; SELECT 2;", []Piece{{"SELECT 1", 1}, {"SELECT 2", 1}}},
		{"empty statements dropped", ";;SELECT 1;;;SELECT 2;;", []Piece{{"SELECT 1", 1}, {"SELECT 2", 1}}},
		{"line numbers", "SELECT 1;\n\nSELECT\n  2;\n\n\nSELECT 3", []Piece{{"SELECT 1", 1}, {"SELECT\n  2", 3}, {"SELECT 3", 7}}},
		{"leading comment is not part of the text", "-- header; not a statement\nSELECT 1;", []Piece{{"SELECT 1", 2}}},
		{"block comment lines counted", "/* a\nb\nc; */ SELECT 1;\nSELECT 2", []Piece{{"SELECT 1", 3}, {"SELECT 2", 4}}},
		{"hash comment", "SELECT 1 # x; y\n, 2;", []Piece{{"SELECT 1 # x; y\n, 2", 1}}},
		{"inner comment kept", "SELECT 1 -- x; y\n;", []Piece{{"SELECT 1 -- x; y", 1}}},
		{"semicolon in single quotes", "INSERT INTO t VALUES ('a;b');SELECT 2", []Piece{{"INSERT INTO t VALUES ('a;b')", 1}, {"SELECT 2", 1}}},
		{"semicolon in double quotes", `SELECT "a;b"; SELECT 2`, []Piece{{`SELECT "a;b"`, 1}, {"SELECT 2", 1}}},
		{"semicolon in backquotes", "SELECT `a;b` FROM t; SELECT 2", []Piece{{"SELECT `a;b` FROM t", 1}, {"SELECT 2", 1}}},
		{"escaped quote", `SELECT 'it\'s; fine'; SELECT 2`, []Piece{{`SELECT 'it\'s; fine'`, 1}, {"SELECT 2", 1}}},
		{"doubled quote", `SELECT 'it''s; fine'; SELECT 2`, []Piece{{`SELECT 'it''s; fine'`, 1}, {"SELECT 2", 1}}},
		{"doubled backquote", "SELECT `a``;b`; SELECT 2", []Piece{{"SELECT `a``;b`", 1}, {"SELECT 2", 1}}},
		{"backslash in backquotes is plain", "SELECT `a\\`; SELECT 2", []Piece{{"SELECT `a\\`", 1}, {"SELECT 2", 1}}},
		{"comment markers in strings", "SELECT '-- no', '/* no', '# no'; SELECT 2", []Piece{{"SELECT '-- no', '/* no', '# no'", 1}, {"SELECT 2", 1}}},
		{"quote in comment", "SELECT 1 -- it's\n; SELECT 2", []Piece{{"SELECT 1 -- it's", 1}, {"SELECT 2", 2}}},
		{"newline in string counted", "SELECT 'a\nb';\nSELECT 2", []Piece{{"SELECT 'a\nb'", 1}, {"SELECT 2", 3}}},
		{"statement starting with a string", "'x'; SELECT 1", []Piece{{"'x'", 1}, {"SELECT 1", 1}}},
		{"unterminated string runs to the end", "SELECT 'a; SELECT 2", []Piece{{"SELECT 'a; SELECT 2", 1}}},
		{"unterminated comment runs to the end", "SELECT 1 /* ; SELECT 2", []Piece{{"SELECT 1 /* ; SELECT 2", 1}}},
		{"hint", "SELECT /*+ SET_VAR(a = 1); */ 1; SELECT 2", []Piece{{"SELECT /*+ SET_VAR(a = 1); */ 1", 1}, {"SELECT 2", 1}}},
		{"crlf", "SELECT 1;\r\nSELECT 2;\r\n", []Piece{{"SELECT 1", 1}, {"SELECT 2", 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SplitStatements(tc.src)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("SplitStatements(%q)\n got %+v\nwant %+v", tc.src, got, tc.want)
			}
		})
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
