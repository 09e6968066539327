package vfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

func TestMap(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "freebsd" {
		t.Skip("files are read, not mapped, on", runtime.GOOS)
	}
	name := filepath.Join(t.TempDir(), "f")
	want := bytes.Repeat([]byte("0123456789abcdef"), 3<<16+5)
	if err := os.WriteFile(name, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Default.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := Map(f, int64(len(want)))
	// The mapping outlives the descriptor.
	f.Close()
	if !ok {
		t.Fatal("an OS file was not mapped")
	}
	if !bytes.Equal(m.MappedBytes(), want) {
		t.Fatal("the mapped bytes differ from the file")
	}
	// Letting the pages go, again and again, leaves the bytes readable.
	defer SetResidentBudget(SetResidentBudget(1 << 16))
	for i := range 8 {
		m.Used(int64(i)*(1<<16)+3, 1<<16)
		if !bytes.Equal(m.MappedBytes(), want) {
			t.Fatal("the mapped bytes differ from the file after their pages were let go")
		}
	}
	buf := make([]byte, 10)
	if n, err := m.ReadAt(buf, 3); n != 10 || err != nil || string(buf) != "3456789abc" {
		t.Fatalf("ReadAt: %d %v %q", n, err, buf)
	}
	if n, err := m.ReadAt(buf, int64(len(want))-4); n != 4 || err != io.EOF {
		t.Fatalf("ReadAt across the end: %d %v", n, err)
	}
	if n, err := m.ReadAt(buf, int64(len(want))); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt at the end: %d %v", n, err)
	}
	if _, err := m.ReadAt(buf, -1); err == nil {
		t.Fatal("ReadAt at -1: no error")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if _, err := m.ReadAt(buf, 0); !errors.Is(err, errMappingClosed) {
		t.Fatalf("ReadAt after Close: %v", err)
	}
}

// TestMapDeclines checks the files Map leaves to be read: those of the
// in-memory and error-injecting file systems, and empty ones.
func TestMapDeclines(t *testing.T) {
	mfs := NewMemFS()
	mfs.MkdirAll("/d")
	if err := WriteFileAtomic(mfs, "/d/f", []byte("data")); err != nil {
		t.Fatal(err)
	}
	f, err := mfs.Open("/d/f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := Map(f, 4); ok {
		t.Fatal("a MemFS file was mapped")
	}

	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	if err := os.WriteFile(name, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	efs := NewErrorFS(Default, InjectorFunc(func(Op, string) error { return nil }))
	ef, err := efs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	if _, ok := Map(ef, 4); ok {
		t.Fatal("an ErrorFS file was mapped: its reads could no longer fail")
	}
	of, err := Default.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer of.Close()
	if _, ok := Map(of, 0); ok {
		t.Fatal("an empty mapping was made")
	}
}

// TestResidentBudget checks the process-wide account of mapped ranges: the
// ranges read longest ago, of any mapping, leave once the budget is passed,
// a range read again is read most recently, and Close takes a mapping's
// ranges out. On Linux it checks the pages themselves in /proc/self/smaps:
// a range read recently stays mapped while older ones of the same file go.
func TestResidentBudget(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "freebsd" {
		t.Skip("files are read, not mapped, on", runtime.GOOS)
	}
	const chunk = 1 << 16
	dir := t.TempDir()
	open := func(name string, n int) *Mapping {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Repeat([]byte{7}, n), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Default.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		m, ok := Map(f, int64(n))
		if !ok {
			t.Fatal("an OS file was not mapped")
		}
		return m
	}
	defer SetResidentBudget(SetResidentBudget(4 * chunk))
	base := ResidentBytes()
	a, b := open("a", 16*chunk), open("b", 16*chunk)
	defer a.Close()
	defer b.Close()
	sum := 0
	read := func(m *Mapping, i int) {
		m.Used(int64(i*chunk), chunk)
		for _, c := range m.MappedBytes()[i*chunk : (i+1)*chunk] {
			sum += int(c)
		}
	}
	for i := range 4 {
		read(a, i)
	}
	if got := ResidentBytes() - base; got != 4*chunk {
		t.Fatalf("%d bytes held after reading the budget, want %d", got, 4*chunk)
	}
	if rss, ok := mappedRSS(t, a); ok && rss < 4*chunk {
		t.Fatalf("%d bytes of a mapped after reading %d within the budget", rss, 4*chunk)
	}
	// Chunk 0 read again is the newest: reading two chunks of b drops
	// chunks 1 and 2 of a, not 0 nor 3.
	read(a, 0)
	read(b, 0)
	read(b, 1)
	if got := ResidentBytes() - base; got != 4*chunk {
		t.Fatalf("%d bytes held, want %d", got, 4*chunk)
	}
	resident.mu.Lock()
	var order []string
	for e := resident.lru.Front(); e != nil; e = e.Next() {
		s := e.Value.(*span)
		name := "a"
		if s.key.m == b {
			name = "b"
		} else if s.key.m != a {
			continue
		}
		order = append(order, fmt.Sprintf("%s%d", name, s.key.off/chunk))
	}
	resident.mu.Unlock()
	if got := strings.Join(order, " "); got != "a3 a0 b0 b1" {
		t.Fatalf("ranges held, least recently read first: %s", got)
	}
	// A fault may map the pages around the one read (fault-around, up to
	// 64 KiB aligned in the address space, not in the file), some of them
	// past chunk 3: they are not counted, and leave at Close.
	if rss, ok := mappedRSS(t, a); ok && (rss < 2*chunk || rss > 3*chunk) {
		t.Fatalf("%d bytes of a mapped, want the %d of its two chunks held", rss, 2*chunk)
	}
	read(b, 2) // drops a3
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := ResidentBytes() - base; got != 3*chunk {
		t.Fatalf("%d bytes held after a's Close, want b's %d", got, 3*chunk)
	}
	// A closed mapping's reads are not counted, and nothing of it is
	// released later: its addresses may belong to another mapping.
	a.Used(0, chunk)
	if got := ResidentBytes() - base; got != 3*chunk {
		t.Fatalf("%d bytes held after a read of a closed mapping", got)
	}
	// A range larger than the budget is held until the next read.
	SetResidentBudget(chunk / 2)
	read(b, 3)
	if got := ResidentBytes() - base; got != chunk {
		t.Fatalf("%d bytes held with a budget below one range, want the range read last (%d)", got, chunk)
	}
	if sum != 7*9*chunk {
		t.Fatalf("read %d, want %d", sum, 7*9*chunk)
	}
}

// mappedRSS returns how many bytes of m's pages are mapped into the
// process, from /proc/self/smaps; ok is false where there is none.
func mappedRSS(t *testing.T, m *Mapping) (int64, bool) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return 0, false
	}
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, false
	}
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&m.MappedBytes()[0])))
	in := false
	for line := range strings.SplitSeq(string(raw), "\n") {
		if strings.HasPrefix(line, start) {
			in = true
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "Rss:")), "%d kB", &kb); err != nil {
				t.Fatalf("smaps: %q: %v", line, err)
			}
			return kb << 10, true
		}
	}
	t.Fatalf("smaps: no mapping at %s", start)
	return 0, false
}

// TestResidentConcurrent reads and closes mappings from several goroutines
// under a budget that keeps dropping their ranges: every byte read is the
// file's, and once all are closed nothing of them is held.
func TestResidentConcurrent(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "freebsd" {
		t.Skip("files are read, not mapped, on", runtime.GOOS)
	}
	const chunk, chunks = 1 << 14, 16
	defer SetResidentBudget(SetResidentBudget(3 * chunk))
	base := ResidentBytes()
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		name := filepath.Join(dir, fmt.Sprint(g))
		want := bytes.Repeat([]byte{byte(g + 1)}, chunk*chunks)
		if err := os.WriteFile(name, want, 0o644); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for range 5 {
				f, err := Default.Open(name)
				if err != nil {
					errs <- err
					return
				}
				m, ok := Map(f, int64(len(want)))
				f.Close()
				if !ok {
					errs <- fmt.Errorf("%s was not mapped", name)
					return
				}
				for i := range chunks {
					m.Used(int64(i*chunk), chunk)
					if !bytes.Equal(m.MappedBytes()[i*chunk:(i+1)*chunk], want[:chunk]) {
						errs <- fmt.Errorf("%s: chunk %d differs", name, i)
					}
				}
				if err := m.Close(); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := ResidentBytes() - base; got != 0 {
		t.Fatalf("%d bytes held after every mapping was closed", got)
	}
}
