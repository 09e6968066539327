package table

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
)

func simpleDef() *Definition {
	return &Definition{Model: schema.Duplicate, Schema: schema.Schema{KeyCount: 1, Columns: []schema.Column{
		{Name: "id", Type: schema.BigIntType},
		{Name: "v", Type: schema.StringType, Nullable: true},
	}}}
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestDBDatabasesAndTables(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db, err := OpenDB(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	dbs, err := db.Databases()
	if err != nil || fmt.Sprint(dbs) != "[default]" {
		t.Fatalf("databases = %v, %v", dbs, err)
	}
	if err := db.CreateDatabase("app", false); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateDatabase("app", false); !errors.Is(err, rowttl.ErrExists) {
		t.Fatalf("duplicate database: %v", err)
	}
	if err := db.CreateDatabase("app", true); err != nil {
		t.Fatal(err)
	}
	tbl, err := db.CreateTable("app", "t1", simpleDef(), false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateTable("app", "t1", simpleDef(), false); !errors.Is(err, rowttl.ErrExists) {
		t.Fatalf("duplicate table: %v", err)
	}
	again, err := db.CreateTable("app", "t1", simpleDef(), true)
	if err != nil || again != tbl {
		t.Fatalf("IF NOT EXISTS: %v, same=%v", err, again == tbl)
	}
	got, err := db.Table("app", "t1")
	if err != nil || got != tbl {
		t.Fatalf("Table: %v, same=%v", err, got == tbl)
	}
	if _, err := db.Table("app", "T1"); !errors.Is(err, rowttl.ErrNotFound) {
		t.Fatalf("names are case-sensitive: %v", err)
	}
	if _, err := db.Table("app", "nope"); !errors.Is(err, rowttl.ErrNotFound) || err.Error() != "Unknown table 'app.nope'" {
		t.Fatalf("missing table: %v", err)
	}
	if _, err := db.Table("nodb", "t1"); !errors.Is(err, rowttl.ErrNotFound) {
		t.Fatalf("missing database: %v", err)
	}
	if _, err := db.CreateTable("app", "t2", simpleDef(), false); err != nil {
		t.Fatal(err)
	}
	names, err := db.Tables("app")
	if err != nil || fmt.Sprint(names) != "[t1 t2]" {
		t.Fatalf("tables = %v, %v", names, err)
	}
	if err := db.DropTable("app", "t1", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "app", "t1")); !os.IsNotExist(err) {
		t.Fatalf("dropped table directory still there: %v", err)
	}
	if err := db.DropTable("app", "t1", false); !errors.Is(err, rowttl.ErrNotFound) {
		t.Fatalf("drop missing: %v", err)
	}
	if err := db.DropTable("app", "t1", true); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Scan(t.Context(), queryAll()); !errors.Is(err, rowttl.ErrClosed) {
		t.Fatalf("dropped table still usable: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopen: what was created is there, what was dropped is not.
	db, err = OpenDB(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	names, err = db.Tables("app")
	if err != nil || fmt.Sprint(names) != "[t2]" {
		t.Fatalf("after reopen tables = %v, %v", names, err)
	}
	t2, err := db.Table("app", "t2")
	if err != nil {
		t.Fatal(err)
	}
	if err := t2.Check(); err != nil {
		t.Fatal(err)
	}
	if err := db.DropDatabase("app", false); err != nil {
		t.Fatal(err)
	}
	if err := db.DropDatabase("app", false); !errors.Is(err, rowttl.ErrNotFound) {
		t.Fatalf("drop missing database: %v", err)
	}
	if err := db.DropDatabase("app", true); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(entries(t, dir)) != "[LOCK ROWTTL default]" {
		t.Fatalf("data directory holds %v", entries(t, dir))
	}
	// Dropping the default database empties it; it always exists.
	if _, err := db.CreateTable(DefaultDatabase, "x", simpleDef(), false); err != nil {
		t.Fatal(err)
	}
	if err := db.DropDatabase(DefaultDatabase, false); err != nil {
		t.Fatal(err)
	}
	if names, err := db.Tables(DefaultDatabase); err != nil || len(names) != 0 {
		t.Fatalf("default after drop: %v, %v", names, err)
	}
}

func queryAll() query.Request { return query.Request{} }

func TestDBNames(t *testing.T) {
	db, err := OpenDB(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, bad := range []string{"", "..", ".", "a/b", "../x", "a.b", "1abc", "a b", "é", string(make([]byte, 65))} {
		if _, err := db.CreateTable(DefaultDatabase, bad, simpleDef(), false); !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Errorf("table name %q: %v", bad, err)
		}
		if err := db.CreateDatabase(bad, false); !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Errorf("database name %q: %v", bad, err)
		}
	}
	for _, good := range []string{"a", "_x", "T_1", "abc123"} {
		if _, err := db.CreateTable(DefaultDatabase, good, simpleDef(), false); err != nil {
			t.Errorf("table name %q: %v", good, err)
		}
	}
}

// A CREATE that fails validation leaves nothing behind, and neither do
// the scratch directories a crash may leave.
func TestDBAtomicCreate(t *testing.T) {
	dir := t.TempDir()
	db, err := OpenDB(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := simpleDef()
	bad.Properties = map[string]string{PropTTLCol: "v"}
	if _, err := db.CreateTable(DefaultDatabase, "t", bad, false); !errors.Is(err, rowttl.ErrInvalidProperty) {
		t.Fatalf("bad definition: %v", err)
	}
	if es := entries(t, filepath.Join(dir, DefaultDatabase)); len(es) != 0 {
		t.Fatalf("failed CREATE left %v", es)
	}
	if _, err := OpenDB(dir, nil); err == nil {
		t.Fatal("a second OpenDB of the same directory succeeded")
	}
	db.Close()
	for _, n := range []string{creatingPrefix + "t-1", droppingPrefix + "u-2"} {
		if err := os.MkdirAll(filepath.Join(dir, DefaultDatabase, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, droppingPrefix+"app-3"), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err = OpenDB(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if es := entries(t, filepath.Join(dir, DefaultDatabase)); len(es) != 0 {
		t.Fatalf("leftovers not removed: %v", es)
	}
	if fmt.Sprint(entries(t, dir)) != "[LOCK ROWTTL default]" {
		t.Fatalf("leftovers not removed: %v", entries(t, dir))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Table(DefaultDatabase, "t"); !errors.Is(err, rowttl.ErrClosed) {
		t.Fatalf("closed DB: %v", err)
	}
}

func TestDBConcurrent(t *testing.T) {
	db, err := OpenDB(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				name := fmt.Sprintf("t%d_%d", g, i)
				if _, err := db.CreateTable(DefaultDatabase, name, simpleDef(), false); err != nil {
					t.Error(err)
					return
				}
				if _, err := db.Table(DefaultDatabase, name); err != nil {
					t.Error(err)
				}
				if _, err := db.Tables(DefaultDatabase); err != nil {
					t.Error(err)
				}
				if i%2 == 0 {
					if err := db.DropTable(DefaultDatabase, name, false); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	names, err := db.Tables(DefaultDatabase)
	if err != nil || len(names) != 8 {
		t.Fatalf("tables = %v, %v", names, err)
	}
}
