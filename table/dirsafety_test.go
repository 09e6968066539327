package table

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/vfs"
)

// writeSimple writes rows start..start+n-1 into a simpleDef table.
func writeSimple(t *testing.T, tbl *Table, start int64, n int) {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil))
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Int64Builder).Append(start + int64(i))
		b.Field(1).(*array.StringBuilder).Append("v")
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	mustWrite(t, tbl, rec)
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readTestFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(b)
}

// treeOf lists every path under dir.
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// TestDBRefusesForeignDirectories: OpenDB turns only a missing or empty
// directory into a data directory; any other one without the marker is
// refused and left exactly as it was.
func TestDBRefusesForeignDirectories(t *testing.T) {
	x := t.TempDir()
	writeTestFile(t, filepath.Join(x, "default", "important", "f"), "precious")
	if err := os.MkdirAll(filepath.Join(x, "photos"), 0o755); err != nil {
		t.Fatal(err)
	}
	etc := t.TempDir()
	writeTestFile(t, filepath.Join(etc, "passwd"), "root")
	writeTestFile(t, filepath.Join(etc, "ssh", "config"), "Host *")
	for _, dir := range []string{x, etc} {
		before := treeOf(t, dir)
		for _, ro := range []bool{false, true} {
			_, err := OpenDB(dir, &Options{ReadOnly: ro})
			if !errors.Is(err, rowttl.ErrInvalidArgument) || !strings.Contains(err.Error(), "is not a rowttl data directory") {
				t.Fatalf("OpenDB(%s, read-only %v): %v", dir, ro, err)
			}
		}
		if after := treeOf(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("a refused open changed %s: %v -> %v", dir, before, after)
		}
	}

	// A missing directory and an empty one are made data directories, and
	// say so.
	for _, dir := range []string{filepath.Join(t.TempDir(), "new"), t.TempDir()} {
		db, err := OpenDB(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(db.Initialized(), "new rowttl data directory") {
			t.Fatalf("Initialized = %q", db.Initialized())
		}
		db.Close()
		if readTestFile(t, filepath.Join(dir, markerFile)) != markerText {
			t.Fatal("no marker")
		}
		db, err = OpenDB(dir, nil)
		if err != nil || db.Initialized() != "" {
			t.Fatalf("reopen: %v %q", err, db.Initialized())
		}
		db.Close()
	}
}

// TestReadOnlyDBCreatesNothing: a read-only DB of a missing directory reads
// as an empty data directory and creates neither it nor any lock file.
func TestReadOnlyDBCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	db, err := OpenDB(dir, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if dbs, err := db.Databases(); err != nil || fmt.Sprint(dbs) != "[default]" {
		t.Fatalf("databases %v %v", dbs, err)
	}
	if names, err := db.Tables(DefaultDatabase); err != nil || len(names) != 0 {
		t.Fatalf("tables %v %v", names, err)
	}
	if _, err := db.Table(DefaultDatabase, "t"); !errors.Is(err, rowttl.ErrNotFound) {
		t.Fatalf("table of a missing directory: %v", err)
	}
	if _, err := db.CreateTable(DefaultDatabase, "t", simpleDef(), false); !errors.Is(err, rowttl.ErrNotSupported) {
		t.Fatalf("CREATE on a read-only DB: %v", err)
	}
	if err := db.CreateDatabase("app", false); !errors.Is(err, rowttl.ErrNotSupported) {
		t.Fatalf("CREATE DATABASE on a read-only DB: %v", err)
	}
	db.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a read-only open created %s: %v", dir, err)
	}

	// On a real data directory: no LOCK is taken (the owner's stays
	// untouched), the tables read.
	owner, err := OpenDB(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	tbl, err := owner.CreateTable(DefaultDatabase, "t", simpleDef(), false)
	if err != nil {
		t.Fatal(err)
	}
	writeSimple(t, tbl, 0, 5)
	lock := readTestFile(t, filepath.Join(dir, lockFile))
	if !strings.HasPrefix(lock, fmt.Sprintf("pid %d: ", os.Getpid())) {
		t.Fatalf("LOCK says %q", lock)
	}
	if _, err := OpenDB(dir, nil); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("in use by process %d (", os.Getpid())) {
		t.Fatalf("second writer: %v", err)
	}
	ro, err := OpenDB(dir, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := ro.Table(DefaultDatabase, "t")
	if err != nil {
		t.Fatal(err)
	}
	if n := mustCount(t, rt, base, nil); n != 5 {
		t.Fatalf("read-only count %d", n)
	}
	if err := ro.DropTable(DefaultDatabase, "t", false); !errors.Is(err, rowttl.ErrNotSupported) {
		t.Fatalf("DROP on a read-only DB: %v", err)
	}
	ro.Close()
	writeSimple(t, tbl, 5, 5)
	if readTestFile(t, filepath.Join(dir, lockFile)) != lock {
		t.Fatal("a read-only open rewrote LOCK")
	}
}

// TestDBDropRemovesOnlyItsOwnFiles: SHOW lists only tables and databases,
// DROP deletes only what rowttl made, and what a user put in a data
// directory stays where it was.
func TestDBDropRemovesOnlyItsOwnFiles(t *testing.T) {
	dir := t.TempDir()
	db, err := OpenDB(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	writeTestFile(t, filepath.Join(dir, "default", "important", "f"), "precious")
	writeTestFile(t, filepath.Join(dir, "photos", "cat.jpg"), "meow")
	for _, name := range []string{"t", "u"} {
		tbl, err := db.CreateTable(DefaultDatabase, name, simpleDef(), false)
		if err != nil {
			t.Fatal(err)
		}
		writeSimple(t, tbl, 0, 3)
	}
	writeTestFile(t, filepath.Join(dir, "default", "t", "notes.txt"), "mine")
	if names, err := db.Tables(DefaultDatabase); err != nil || fmt.Sprint(names) != "[t u]" {
		t.Fatalf("tables %v %v", names, err)
	}
	if dbs, err := db.Databases(); err != nil || fmt.Sprint(dbs) != "[default]" {
		t.Fatalf("databases %v %v", dbs, err)
	}
	if err := db.DropTable(DefaultDatabase, "important", false); !errors.Is(err, rowttl.ErrNotFound) {
		t.Fatalf("DROP TABLE of a user's directory: %v", err)
	}
	if err := db.DropDatabase("photos", false); !errors.Is(err, rowttl.ErrNotFound) {
		t.Fatalf("DROP DATABASE of a user's directory: %v", err)
	}
	if _, err := db.CreateTable(DefaultDatabase, "important", simpleDef(), false); !errors.Is(err, rowttl.ErrExists) {
		t.Fatalf("CREATE over a user's directory: %v", err)
	}
	if err := db.CreateDatabase("photos", true); !errors.Is(err, rowttl.ErrExists) {
		t.Fatalf("CREATE DATABASE over a user's directory: %v", err)
	}

	// t holds a file of the user's: DROP removes the table's files and
	// leaves that one under the table's name, which is no table any more.
	if err := db.DropTable(DefaultDatabase, "t", false); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(entries(t, filepath.Join(dir, "default", "t"))); got != "[notes.txt]" {
		t.Fatalf("dropped table directory holds %s", got)
	}
	if names, _ := db.Tables(DefaultDatabase); fmt.Sprint(names) != "[u]" {
		t.Fatalf("tables after DROP: %v", names)
	}
	// DROP DATABASE default drops its tables, nothing else.
	if err := db.DropDatabase(DefaultDatabase, false); err != nil {
		t.Fatal(err)
	}
	want := []string{"LOCK", "ROWTTL", "default", "default/important", "default/important/f", "default/t", "default/t/notes.txt", "photos", "photos/cat.jpg"}
	if got := treeOf(t, dir); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after DROP DATABASE default:\n%v\nwant\n%v", got, want)
	}
	if readTestFile(t, filepath.Join(dir, "default", "important", "f")) != "precious" {
		t.Fatal("a user's file changed")
	}
	// A database of tables and a user's directory: the tables go, the
	// user's directory stays.
	if err := db.CreateDatabase("app", false); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateTable("app", "t", simpleDef(), false); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, "app", "keep", "x"), "x")
	if err := db.DropDatabase("app", false); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(treeOf(t, filepath.Join(dir, "app"))); got != "[keep keep/x]" {
		t.Fatalf("dropped database holds %s", got)
	}
	if dbs, _ := db.Databases(); fmt.Sprint(dbs) != "[default]" {
		t.Fatalf("databases after DROP: %v", dbs)
	}
	// An empty database goes entirely.
	if err := db.CreateDatabase("empty", false); err != nil {
		t.Fatal(err)
	}
	if err := db.DropDatabase("empty", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "empty")); !os.IsNotExist(err) {
		t.Fatalf("empty database left: %v", err)
	}
}

// TestDBAdoptsUnmarkedDataDirectory: a data directory made before the
// marker existed (tables whose manifests replay) is adopted, not refused;
// one whose only "table" does not replay is refused.
func TestDBAdoptsUnmarkedDataDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"default/t", "sales/orders"} {
		tbl := mustCreate(t, filepath.Join(dir, p), simpleDef(), quiet())
		writeSimple(t, tbl, 0, 4)
		checkClose(t, tbl)
	}
	writeTestFile(t, filepath.Join(dir, lockFile), "")
	writeTestFile(t, filepath.Join(dir, "demo-plateau.png"), "PNG")
	for _, ro := range []bool{true, false} {
		db, err := OpenDB(dir, &Options{ReadOnly: ro})
		if err != nil {
			t.Fatal(err)
		}
		if (db.Initialized() != "") == ro || !ro && !strings.Contains(db.Initialized(), "adopted") {
			t.Fatalf("read-only %v: Initialized = %q", ro, db.Initialized())
		}
		if dbs, err := db.Databases(); err != nil || fmt.Sprint(dbs) != "[default sales]" {
			t.Fatalf("databases %v %v", dbs, err)
		}
		tbl, err := db.Table("sales", "orders")
		if err != nil {
			t.Fatal(err)
		}
		if n := mustCount(t, tbl, base, nil); n != 4 {
			t.Fatalf("count %d", n)
		}
		db.Close()
		if _, err := os.Stat(filepath.Join(dir, markerFile)); os.IsNotExist(err) != ro {
			t.Fatalf("read-only %v: marker: %v", ro, err)
		}
	}

	// A directory above a table that was never a data directory (no LOCK
	// file: "/" above /tmp/d/t) is not adopted.
	above := t.TempDir()
	tbl := mustCreate(t, filepath.Join(above, "tmp", "t"), simpleDef(), quiet())
	checkClose(t, tbl)
	writeTestFile(t, filepath.Join(above, "etc", "passwd"), "root")
	for _, ro := range []bool{true, false} {
		if _, err := OpenDB(above, &Options{ReadOnly: ro}); !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Fatalf("read-only %v: a directory above a table: %v", ro, err)
		}
	}

	bad := t.TempDir()
	writeTestFile(t, filepath.Join(bad, lockFile), "")
	tbl = mustCreate(t, filepath.Join(bad, "default", "t"), simpleDef(), quiet())
	checkClose(t, tbl)
	writeTestFile(t, filepath.Join(bad, "default", "t", manifestName(1)), "not a manifest")
	if _, err := OpenDB(bad, nil); !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Fatalf("unmarked directory without a sound table: %v", err)
	}
}

// segmentsIn returns the segment files of a table directory.
func segmentsIn(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestReadOnlyOpenAlongsideOwner: two independent opens of one table, an
// owner and a read-only reader (what `rowttl check` does while `rowttl
// serve` runs). The reader takes no writer lock, so the owner's writes and
// compactions go on; the files the reader may read stay until it lets go.
func TestReadOnlyOpenAlongsideOwner(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	ctx := context.Background()
	owner := mustCreate(t, dir, simpleDef(), quiet())
	defer owner.Close()
	for i := 0; i < 3; i++ {
		writeSimple(t, owner, int64(10*i), 10)
	}
	before := segmentsIn(t, dir)
	reader, err := Open(dir, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Compact(ctx, Full); err != nil {
		t.Fatalf("compaction while a reader reads: %v", err)
	}
	writeSimple(t, owner, 30, 10)
	if n := owner.deferring.deferredCount(); n != len(before) {
		t.Fatalf("%d deletions deferred, want %d", n, len(before))
	}
	for _, f := range before {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("the owner deleted %s under a reader: %v", f, err)
		}
	}
	if err := reader.Check(); err != nil {
		t.Fatal(err)
	}
	if n := mustCount(t, reader, base, nil); n != 30 {
		t.Fatalf("reader sees %d rows, want its snapshot's 30", n)
	}
	// A second reader starts on the new state, alongside the first.
	second, err := Open(dir, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := mustCount(t, second, base, nil); n != 40 {
		t.Fatalf("second reader sees %d rows", n)
	}
	reader.Close()
	owner.flushDeferred()
	if n := owner.deferring.deferredCount(); n == 0 {
		t.Fatal("deletions went ahead while the second reader reads")
	}
	second.Close()
	owner.flushDeferred()
	if n := owner.deferring.deferredCount(); n != 0 {
		t.Fatalf("%d deletions still deferred with no reader", n)
	}
	if got := len(segmentsIn(t, dir)); got != 2 {
		t.Fatalf("%d segment files left, want the 2 the live rowsets list", got)
	}
	checkClose(t, owner)
	tbl, err := Open(dir, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if n := mustCount(t, tbl, base, nil); n != 40 {
		t.Fatalf("after reopen: %d rows", n)
	}
	checkClose(t, tbl)
}

// vanishFS runs hook before the first open of a segment file: the owner
// compacts between the reader's manifest read and its segment opens.
type vanishFS struct {
	vfs.FS
	hook func()
}

func (f *vanishFS) Open(name string) (vfs.File, error) {
	if strings.HasSuffix(name, ".seg") && f.hook != nil {
		h := f.hook
		f.hook = nil
		h()
	}
	return f.FS.Open(name)
}

// TestReadOnlyOpenRetriesWhenFilesVanish: a reader that no READERS lock
// protects (a table made before READERS existed) finds a segment gone
// because the owner compacted meanwhile; it starts over on the new
// manifest instead of reporting corruption. A file missing for good is
// still corruption.
func TestReadOnlyOpenRetriesWhenFilesVanish(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewMemFS()
	owner := mustCreate(t, "/t", simpleDef(), &Options{FS: mem, DisableAutoCompaction: true, SmallWriteRows: -1})
	defer owner.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3; i++ {
		writeSimple(t, owner, int64(10*i), 5+rng.IntN(5))
	}
	want := mustCount(t, owner, base, nil)
	fsys := &vanishFS{FS: mem, hook: func() {
		if err := owner.Compact(ctx, Full); err != nil {
			t.Error(err)
		}
	}}
	reader, err := Open("/t", &Options{FS: fsys, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open while the owner compacts: %v", err)
	}
	if fsys.hook != nil {
		t.Fatal("the hook did not run")
	}
	if n := mustCount(t, reader, base, nil); n != want {
		t.Fatalf("count %d, want %d", n, want)
	}
	if rs, _ := reader.Rowsets(ctx, base); len(rs) != 1 {
		t.Fatalf("reader sees %d rowsets, want the compacted 1", len(rs))
	}
	reader.Close()

	segs, _ := mem.List("/t")
	for _, n := range segs {
		if strings.HasSuffix(n, ".seg") {
			if err := mem.Remove("/t/" + n); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := Open("/t", &Options{FS: mem, ReadOnly: true}); !errors.Is(err, rowttl.ErrCorruption) {
		t.Fatalf("a segment missing for good: %v", err)
	}
}

// readerEnvDir, when set, makes TestReaderOwnerChild the owner process of
// TestReadersAcrossProcesses: it writes and compacts the table in that
// directory until its standard input closes.
const readerEnvDir = "ROWTTL_READER_OWNER_DIR"

func TestReaderOwnerChild(t *testing.T) {
	dir := os.Getenv(readerEnvDir)
	if dir == "" {
		t.Skip("run by TestReadersAcrossProcesses")
	}
	tbl, err := Open(dir, quiet())
	if err != nil {
		fmt.Println("@@ error", err)
		os.Exit(3)
	}
	stop := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	fmt.Println("@@ ready")
	ctx := context.Background()
	for i := int64(0); ; i++ {
		select {
		case <-stop:
			if err := tbl.Close(); err != nil {
				fmt.Println("@@ error", err)
				os.Exit(3)
			}
			fmt.Println("@@ done", i)
			os.Exit(0)
		default:
		}
		writeSimple(t, tbl, 1000+10*i, 10)
		if i%3 == 2 {
			if err := tbl.Compact(ctx, Full); err != nil {
				fmt.Println("@@ error", err)
				os.Exit(3)
			}
		}
	}
}

// TestReadersAcrossProcesses: a child process owns a table and writes and
// compacts it without pause; this process opens it read-only again and
// again and checks every segment. No open fails, no check finds a file
// missing, and the owner never fails.
func TestReadersAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := filepath.Join(t.TempDir(), "t")
	tbl := mustCreate(t, dir, simpleDef(), quiet())
	writeSimple(t, tbl, 0, 10)
	checkClose(t, tbl)

	cmd := exec.Command(os.Args[0], "-test.run=^TestReaderOwnerChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), readerEnvDir+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if l, ok := strings.CutPrefix(sc.Text(), "@@ "); ok {
				lines <- l
			}
		}
		close(lines)
	}()
	if l := <-lines; l != "ready" {
		t.Fatalf("owner: %s", l)
	}
	if _, err := Open(dir, quiet()); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "is open in process ") {
		t.Fatalf("a second writer: %v", err)
	}
	reads := 0
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline) || reads < 20; reads++ {
		r, err := Open(dir, &Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("read-only open %d while the owner writes: %v", reads, err)
		}
		err = r.Check()
		if err == nil {
			var n int64
			if n, err = r.Count(context.Background(), base, nil); err == nil && n < 10 {
				err = fmt.Errorf("%d rows", n)
			}
		}
		r.Close()
		if err != nil {
			t.Fatalf("read %d while the owner writes: %v", reads, err)
		}
	}
	stdin.Close()
	var last string
	for l := range lines {
		last = l
	}
	if err := cmd.Wait(); err != nil || !strings.HasPrefix(last, "done ") {
		t.Fatalf("owner: %v, last said %q", err, last)
	}
	tbl, err = Open(dir, quiet())
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, tbl)
	t.Logf("%d read-only opens alongside the owner, which wrote %s batches", reads, strings.TrimPrefix(last, "done "))
}
