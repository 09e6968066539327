package sql

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/table"
)

// specTexts are the fixed texts of SPEC §5: no data directory name may
// change them.
var specTexts = []string{
	"function_column.enable_row_ttl must be true when row ttl properties are specified",
	"function_column.enable_row_ttl must be true or false",
	"function_column.ttl_col and function_column.ttl must be set together",
	"function_column.ttl_time_zone requires function_column.ttl_col",
	"row ttl does not support AGG_KEYS",
	"row ttl and sequence column cannot be enabled at the same time",
	"row ttl column does not exist: e",
	"row ttl column does not support generated columns: t",
	"row ttl column must be a value column: ttl",
	"row ttl column only supports DATE/DATETIME types: a b",
	"function_column.ttl_time_zone is required for DATE/DATETIME row ttl columns",
	"TIMESTAMPTZ row ttl column only supports +00:00 time zone",
	"function_column.ttl_time_zone must be UTC, Z, or a fixed UTC offset in the form +HH:MM or -HH:MM",
	"function_column.ttl_time_zone must be a fixed UTC offset between -12:00 and +14:00",
	"row ttl duration must not be negative",
	"invalid or overflowing row ttl duration: 1 e",
	"Partial update is not supported on tables with row TTL",
	"Increasing function_column.ttl is not supported",
	"TTL properties can only be specified when creating a table",
	"Can not drop a row ttl source or hidden column",
	"Unknown column 'e' in 't'",
	"Unknown table 'default.t'",
	"Table 'ttl.t' already exists",
}

func TestCleanMessage(t *testing.T) {
	roots := []string{"e", "t", "/", ".", "a b", "ttl", "data", "/tmp/rowttl data", "./e/", "x/", "DATE", "DATETIME", "/DATE", "function_column.ttl_time_zone must be UTC, Z, or a fixed UTC offset in the form +HH:MM or -HH:MM"}
	for _, root := range roots {
		for _, text := range specTexts {
			if got := cleanMessage(root, text); got != text {
				t.Errorf("root %q changed %q into %q", root, text, got)
			}
		}
	}
	join := func(root string, parts ...string) string {
		return filepath.Join(append([]string{root}, parts...)...)
	}
	for _, tc := range []struct{ root, msg, want string }{
		{"e", "segment " + join("e", "default", "t", "000002.seg") + ": footer: checksum mismatch",
			"segment default.t/000002.seg: footer: checksum mismatch"},
		{"/", "segment " + join("/", "default", "t", "000002.seg") + ": page 0 column 1 (e): chunk checksum mismatch",
			"segment default.t/000002.seg: page 0 column 1 (e): chunk checksum mismatch"},
		{".", "segment " + join(".", "default", "t", "000002.seg") + ": trailer: bad magic; DATE/DATETIME",
			"segment default.t/000002.seg: trailer: bad magic; DATE/DATETIME"},
		{"a b", "open table: no table in " + join("a b", "d1", "t_2"),
			"open table: no table in d1.t_2"},
		{"ttl", "manifest " + join("ttl", "default", "ttl", "MANIFEST-000001") + ": record 3: ttl column",
			"manifest default.ttl/MANIFEST-000001: record 3: ttl column"},
		{"ttl", "remove leftover " + join("ttl", "default", ".creating-t-1") + ": busy",
			"remove leftover ttl/default/.creating-t-1: busy"},
		{"d/ttl", "remove leftover " + join("d/ttl", "default", ".creating-t-1") + ": busy",
			"remove leftover <data dir>/default/.creating-t-1: busy"},
		{"d/ttl", "rename 'd/ttl/x' and (d/ttl/y) but not ad/ttl/z or d/ttl",
			"rename '<data dir>/x' and (<data dir>/y) but not ad/ttl/z or d/ttl"},
		{"DATE", "DATE/DATETIME and DATE/default/t/000001.seg", "DATE/DATETIME and default.t/000001.seg"},
		{"/tmp/d", "two: /tmp/d/a/b/1.seg, /tmp/d/a/b.tmp and /tmp/dd/a/b",
			"two: a.b/1.seg, <data dir>/a/b.tmp and /tmp/dd/a/b"},
	} {
		if got := cleanMessage(tc.root, tc.msg); got != tc.want {
			t.Errorf("root %q: %q\n got %q\nwant %q", tc.root, tc.msg, got, tc.want)
		}
	}
}

// TestCleanErrorThroughSession runs failing statements on a data directory
// called "e" (a letter of most messages) and checks that the SPEC text
// arrives intact and the sentinel is still found.
func TestCleanErrorThroughSession(t *testing.T) {
	for _, dir := range []string{"e", "t", "."} {
		t.Chdir(t.TempDir())
		db, err := table.OpenDB(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := NewSession(db)
		_, err = s.Exec(context.Background(), `CREATE TABLE t (id INT) DUPLICATE KEY(id) PROPERTIES ("function_column.ttl" = "1 day")`)
		if !errors.Is(err, rowttl.ErrInvalidProperty) || err.Error() != specTexts[0] {
			t.Errorf("--dir %s: %v", dir, err)
		}
		if _, err := s.Exec(context.Background(), `CREATE TABLE t (id INT) DUPLICATE KEY(id)`); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Exec(context.Background(), `INSERT INTO t VALUES (1)`); err != nil {
			t.Fatal(err)
		}
		// Damage the segment and read it through the session: the path in
		// the message is the table's name.
		segs, _ := filepath.Glob(filepath.Join(dir, "default", "t", "*.seg"))
		if len(segs) != 1 {
			t.Fatalf("segments: %v", segs)
		}
		data, _ := os.ReadFile(segs[0])
		data[len(data)-5] ^= 0xff
		if err := os.WriteFile(segs[0], data, 0o644); err != nil {
			t.Fatal(err)
		}
		db.Close()
		db, err = table.OpenDB(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewSession(db).Exec(context.Background(), `SELECT * FROM t`)
		msg := err.Error()
		if !errors.Is(err, rowttl.ErrCorruption) || !strings.Contains(msg, "default.t/"+filepath.Base(segs[0])) || strings.Contains(msg, "<data dir>") {
			t.Errorf("--dir %s: corrupt segment: %v", dir, err)
		}
		if _, err := NewSession(db).Exec(context.Background(), `DROP TABLE t`); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
}

// FuzzCleanMessage: cleanMessage never panics, changes nothing in a
// message that holds no separator after the directory's name, and leaves
// every SPEC §5 text intact, whatever the directory is called.
func FuzzCleanMessage(f *testing.F) {
	for _, root := range []string{"e", "t", "/", ".", "a b", "ttl", "/tmp/d", "DATE"} {
		f.Add(root, "segment "+filepath.Join(root, "default", "t", "000002.seg")+": footer: checksum mismatch")
		f.Add(root, specTexts[0])
	}
	f.Fuzz(func(t *testing.T, root, msg string) {
		got := cleanMessage(root, msg)
		clean := filepath.Clean(root)
		if clean != "." && !strings.Contains(msg, strings.TrimSuffix(clean, "/")+"/") && got != msg {
			t.Fatalf("root %q changed %q (no path under it) into %q", root, msg, got)
		}
		if !strings.Contains(msg, "/") && got != msg {
			t.Fatalf("root %q changed %q (no path at all) into %q", root, msg, got)
		}
		for _, text := range specTexts {
			if out := cleanMessage(root, text); out != text {
				t.Fatalf("root %q changed %q into %q", root, text, out)
			}
		}
	})
}
