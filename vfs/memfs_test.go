package vfs

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

func mustWriteFile(t *testing.T, fsys FS, name, data string, sync bool) File {
	t.Helper()
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func readString(t *testing.T, fsys FS, name string) (string, error) {
	t.Helper()
	b, err := ReadFile(fsys, name)
	return string(b), err
}

func TestMemFSBasics(t *testing.T) {
	m := NewMemFS()
	if err := m.MkdirAll("/a/b"); err != nil {
		t.Fatal(err)
	}
	f := mustWriteFile(t, m, "/a/b/x", "hello", false)
	buf := make([]byte, 3)
	if n, err := f.ReadAt(buf, 2); n != 3 || err != nil || string(buf) != "llo" {
		t.Fatalf("ReadAt: %d %v %q", n, err, buf)
	}
	if n, err := f.ReadAt(buf, 4); n != 1 || err != io.EOF {
		t.Fatalf("short ReadAt: %d %v", n, err)
	}
	if err := f.Truncate(2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if s, _ := readString(t, m, "/a/b/x"); s != "he" {
		t.Fatalf("after truncate: %q", s)
	}
	af, err := m.OpenAppend("/a/b/x")
	if err != nil {
		t.Fatal(err)
	}
	af.Write([]byte("y"))
	af.Close()
	if s, _ := readString(t, m, "/a/b/x"); s != "hey" {
		t.Fatalf("after append: %q", s)
	}
	if st, err := m.Stat("/a/b/x"); err != nil || st.Size() != 3 || st.IsDir() {
		t.Fatalf("stat: %v %v", st, err)
	}
	if st, err := m.Stat("a/b"); err != nil || !st.IsDir() {
		t.Fatalf("stat dir: %v %v", st, err)
	}
	if err := m.Rename("/a/b/x", "/a/y"); err != nil {
		t.Fatal(err)
	}
	if names, _ := m.List("/a"); !slices.Equal(names, []string{"b", "y"}) {
		t.Fatalf("list: %v", names)
	}
	if _, err := m.Open("/a/b/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open renamed: %v", err)
	}
	if err := m.Remove("/a"); err == nil {
		t.Fatal("removed a non-empty directory")
	}
	if err := m.RemoveAll("/a"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stat("/a/y"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat after RemoveAll: %v", err)
	}
	if _, err := m.Create("/nope/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("create in a missing directory: %v", err)
	}
}

func TestMemFSCrashLosesUnsynced(t *testing.T) {
	m := NewMemFS()
	m.MkdirAll("/d")
	m.SyncDir("/")
	// Synced data, synced entry: survives.
	mustWriteFile(t, m, "/d/durable", "abc", true).Close()
	mustWriteFile(t, m, "/d/removed", "r", true).Close()
	f := mustWriteFile(t, m, "/d/tail", "123", true)
	m.SyncDir("/d")
	f.Write([]byte("456")) // unsynced tail
	// Data synced but entry never synced: lost whole.
	mustWriteFile(t, m, "/d/noentry", "zzz", true).Close()
	// Renamed over an existing name without a directory sync: the old
	// name and contents survive.
	mustWriteFile(t, m, "/d/durable.tmp", "new", true).Close()
	if err := m.Rename("/d/durable.tmp", "/d/durable"); err != nil {
		t.Fatal(err)
	}
	// Removed without a directory sync: comes back.
	m.Remove("/d/removed")

	c := m.CrashClone(nil)
	for name, want := range map[string]string{"/d/durable": "abc", "/d/tail": "123", "/d/removed": "r"} {
		if got, err := readString(t, c, name); err != nil || got != want {
			t.Errorf("%s after crash: %q %v, want %q", name, got, err, want)
		}
	}
	if _, err := c.Stat("/d/noentry"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("noentry survived: %v", err)
	}
	if _, err := c.Stat("/d/durable.tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("durable.tmp survived: %v", err)
	}
	// m itself is untouched.
	if got, _ := readString(t, m, "/d/durable"); got != "new" {
		t.Errorf("original changed: %q", got)
	}

	// After a directory sync the rename is durable.
	m.SyncDir("/d")
	if got, _ := readString(t, m.CrashClone(nil), "/d/durable"); got != "new" {
		t.Errorf("synced rename lost: %q", got)
	}

	// A directory whose entry in its parent is not synced is lost whole.
	m.MkdirAll("/e")
	mustWriteFile(t, m, "/e/x", "x", true).Close()
	m.SyncDir("/e")
	if _, err := m.CrashClone(nil).Stat("/e/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("file under an unsynced directory survived: %v", err)
	}
}

func TestMemFSCrashInPlaceDetaches(t *testing.T) {
	m := NewMemFS()
	f := mustWriteFile(t, m, "/x", "abc", true)
	m.SyncDir("/")
	f.Write([]byte("def"))
	m.Crash()
	if _, err := f.Write([]byte("g")); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("write on a detached file: %v", err)
	}
	if got, _ := readString(t, m, "/x"); got != "abc" {
		t.Fatalf("after crash: %q", got)
	}
}

func TestMemFSRandomCrashKeepsPrefixes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		m := NewMemFS()
		f := mustWriteFile(t, m, "/log", "head", true)
		m.SyncDir("/")
		f.Write([]byte("-tail"))
		mustWriteFile(t, m, "/a", "a", true).Close()
		mustWriteFile(t, m, "/b", "b", true).Close()
		c := m.CrashClone(rng)
		got, err := readString(t, c, "/log")
		if err != nil {
			t.Fatal(err)
		}
		full := "head-tail"
		ok := len(got) >= 4 && len(got) <= len(full) && got[:4] == "head"
		if ok && got[4:] != full[4:len(got)] {
			for _, b := range []byte(got[4:]) {
				ok = ok && b == 0
			}
		}
		if !ok {
			t.Fatalf("log after a random crash: %q", got)
		}
		// Directory changes survive in order: b never without a.
		_, errA := c.Stat("/a")
		_, errB := c.Stat("/b")
		if errA != nil && errB == nil {
			t.Fatal("a later entry survived an earlier one")
		}
	}
}

func TestMemFSClone(t *testing.T) {
	m := NewMemFS()
	f := mustWriteFile(t, m, "/x", "abc", true)
	m.SyncDir("/")
	f.Write([]byte("def"))
	c := m.Clone()
	if got, _ := readString(t, c, "/x"); got != "abcdef" {
		t.Fatalf("clone: %q", got)
	}
	f.Write([]byte("ghi"))
	if got, _ := readString(t, c, "/x"); got != "abcdef" {
		t.Fatalf("clone shares data: %q", got)
	}
	if got, _ := readString(t, c.CrashClone(nil), "/x"); got != "abc" {
		t.Fatalf("crash of a clone: %q", got)
	}
}

func TestWriteFileAtomicUnderCrash(t *testing.T) {
	m := NewMemFS()
	m.MkdirAll("/d")
	m.SyncDir("/")
	if err := WriteFileAtomic(m, "/d/CURRENT", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if got, _ := readString(t, m.CrashClone(nil), "/d/CURRENT"); got != "one" {
		t.Fatalf("after crash: %q", got)
	}
	// Fail each step of a replacement: the file holds the old or the new
	// contents, never anything else, with or without a crash.
	for n := 1; ; n++ {
		c := m.Clone()
		inj := FailNth(n, 0)
		err := WriteFileAtomic(NewErrorFS(c, inj), "/d/CURRENT", []byte("two"))
		for _, fsys := range []*MemFS{c, c.CrashClone(nil)} {
			got, rerr := readString(t, fsys, "/d/CURRENT")
			if rerr != nil || (got != "one" && got != "two") {
				t.Fatalf("n=%d: %q %v", n, got, rerr)
			}
			if err == nil && fsys == c && got != "two" {
				t.Fatalf("n=%d: success but %q", n, got)
			}
		}
		if inj.Count() < n {
			if err != nil {
				t.Fatalf("n=%d: failed without an injection: %v", n, err)
			}
			break
		}
		if err == nil {
			t.Fatalf("n=%d: injected %v but no error", n, inj.Fired())
		}
		if !errors.Is(err, ErrInjected) {
			t.Fatalf("n=%d: %v does not wrap ErrInjected", n, err)
		}
	}
}

// A file overwritten in place, its size unchanged, keeps each sector old
// or new after a random crash, and over many crashes both occur in every
// sector and in the same crash.
func TestMemFSRandomCrashMixesOverwrittenSectors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const sectors = 4
	old := make([]byte, sectors*crashSector)
	m := NewMemFS()
	f, err := m.Create("/log")
	if err != nil {
		t.Fatal(err)
	}
	f.Write(old)
	f.Sync()
	m.SyncDir("/")
	neu := bytes.Repeat([]byte{7}, len(old))
	f.WriteAt(neu, 0)
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		got, err := readString(t, m.CrashClone(rng), "/log")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(old) {
			t.Fatalf("size %d after a crash, want %d", len(got), len(old))
		}
		var mix []byte
		for s := 0; s < sectors; s++ {
			sec := got[s*crashSector : (s+1)*crashSector]
			switch sec {
			case string(old[:crashSector]):
				mix = append(mix, 'o')
			case string(neu[:crashSector]):
				mix = append(mix, 'n')
			default:
				t.Fatalf("sector %d is neither old nor new", s)
			}
		}
		seen[string(mix)] = true
	}
	if !seen["oooo"] || !seen["nnnn"] || len(seen) < 8 {
		t.Fatalf("crash states seen: %v", seen)
	}
}

// TestVolatileMemFS: a volatile MemFS reads back what was written, keeps no
// synced copy of a file, and a crash of it loses everything, synced or not.
func TestVolatileMemFS(t *testing.T) {
	m := NewVolatileMemFS()
	if err := m.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	f := mustWriteFile(t, m, "/d/x", "hello", true)
	f.Close()
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	if s, err := readString(t, m, "/d/x"); s != "hello" || err != nil {
		t.Fatalf("read back %q, %v", s, err)
	}
	m.mu.Lock()
	n, _ := m.lookupLocked("/d/x")
	synced, pending := n.synced, len(m.root.children["d"].pending)
	m.mu.Unlock()
	if synced != nil || pending != 0 {
		t.Fatalf("a volatile file keeps %d synced bytes, its directory %d pending changes", len(synced), pending)
	}
	if _, err := m.CrashClone(nil).Stat("/d/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after a crash: %v, want the file gone", err)
	}
}

// TestMemFSGrowth: a file written in small writes, rewritten in place and
// past its end, truncated and grown again, holds what a byte slice given
// the same edits holds; appended to, it is copied a few times over, not
// once per write.
func TestMemFSGrowth(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	m := NewMemFS()
	f, err := m.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	node := func() (data []byte, capacity int) {
		m.mu.Lock()
		defer m.mu.Unlock()
		n := m.root.children["f"]
		return append([]byte(nil), n.data...), cap(n.data)
	}
	var want []byte
	reallocs, lastCap := 0, 0
	for i := range 4000 {
		p := make([]byte, 1+rng.IntN(64))
		for j := range p {
			p[j] = byte(rng.Uint32())
		}
		// The first half mixes edits; the second only appends.
		switch op := rng.IntN(10); {
		case i < 2000 && op == 0 && len(want) > 0:
			size := rng.IntN(len(want))
			if err := f.Truncate(int64(size)); err != nil {
				t.Fatal(err)
			}
			want = want[:size:size]
		case i < 2000 && op == 1:
			off := rng.IntN(len(want) + 100)
			if _, err := f.WriteAt(p, int64(off)); err != nil {
				t.Fatal(err)
			}
			if end := off + len(p); end > len(want) {
				want = append(want, make([]byte, end-len(want))...)
			}
			copy(want[off:], p)
		default:
			// Write goes on where the last Write ended: seek to the
			// end, where the model appends.
			m.mu.Lock()
			mf := f.(*memFile)
			mf.pos = int64(len(mf.node.data))
			m.mu.Unlock()
			if _, err := f.Write(p); err != nil {
				t.Fatal(err)
			}
			want = append(want, p...)
		}
		got, c := node()
		if !bytes.Equal(got, want) {
			t.Fatalf("step %d: file of %d bytes differs from the model's %d", i, len(got), len(want))
		}
		if i >= 2000 && c != lastCap {
			reallocs++
		}
		lastCap = c
	}
	if reallocs > 20 {
		t.Errorf("%d reallocations over 2000 appends", reallocs)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got, c := node(); !bytes.Equal(got, want) || c > len(want)+len(want)/8 {
		t.Errorf("closed: %d bytes in room for %d, want the model's %d", len(got), c, len(want))
	}
}
