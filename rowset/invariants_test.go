//go:build invariants

package rowset

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/vfs"
)

func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatalf("no panic, want one saying %q", want)
		}
		if s, _ := r.(string); !strings.Contains(s, want) {
			t.Fatalf("panic %v, want one saying %q", r, want)
		}
	}()
	f()
}

// TestInvariantsCatchWrongTTLStats: metadata that disagrees with the rows
// (here a maximum too small, which would let a compaction drop live rows
// with the whole rowset) panics when written and when opened.
func TestInvariantsCatchWrongTTLStats(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	fsys := vfs.NewMemFS()
	fsys.MkdirAll("/t")
	w := newTestWriter(fsys, 10)
	rec := batch(mem, []int64{1, 2, 3}, []int64{10, 20, -1})
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	m, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	bad := m
	bad.TTL.Max = 15
	mustPanic(t, "TTL stats", func() { w.checkWritten(bad) })
	mustPanic(t, "TTL stats", func() { Open(fsys, "/t", bad, nil) })
	bad = m
	bad.Rows++
	mustPanic(t, "rows", func() { w.checkWritten(bad) })
	h, err := Open(fsys, "/t", m, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.Unref()
}

// TestInvariantsCatchUnsortedRuns: a run whose keys do not increase panics
// in the merge instead of hiding the wrong rows.
func TestInvariantsCatchUnsortedRuns(t *testing.T) {
	m := NewInt64Merge()
	m.PushInt(0, 5)
	m.PushInt(1, 9)
	m.Next()
	mustPanic(t, "not above it", func() { m.AdvanceInt(4) })
}
