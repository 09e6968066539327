package table

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
)

// bruteCount counts rows of direct mode alive at now.
func bruteCount(rows []eventRow, now time.Time, keep func(*eventRow) bool) int64 {
	var n int64
	us := now.UnixMicro()
	for i := range rows {
		r := &rows[i]
		if r.ttl != nil && *r.ttl <= us {
			continue
		}
		if keep != nil && !keep(r) {
			continue
		}
		n++
	}
	return n
}

func TestRoundTripMillion(t *testing.T) {
	rowsTotal := 1_000_000
	if testing.Short() {
		rowsTotal = 100_000
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	opts := &Options{Allocator: mem, SegmentRows: 300_000, DisableAutoCompaction: true}
	tbl := mustCreate(t, dir, directDef(), opts)
	rng := rand.New(rand.NewPCG(1, 2))
	var all []eventRow
	const versions = 5
	for v := 0; v < versions; v++ {
		rows := genEvents(rng, int64(len(all)), rowsTotal/versions)
		all = append(all, rows...)
		rec := eventBatch(mem, rows, true)
		mustWrite(t, tbl, rec)
		rec.Release()
	}
	if got := tbl.LastVersion(); got != versions {
		t.Fatalf("last version %d, want %d", got, versions)
	}
	checkClose(t, tbl)

	tbl, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer checkClose(t, tbl)
	for _, d := range []time.Duration{-10 * 24 * time.Hour, -3 * time.Hour, 0, time.Microsecond, 36 * time.Hour, 10 * 24 * time.Hour} {
		now := base.Add(d)
		if got, want := mustCount(t, tbl, now, nil), bruteCount(all, now, nil); got != want {
			t.Errorf("count at %v: got %d, want %d", now, got, want)
		}
	}
	// A filter on a user column, with its brute-force twin.
	now := base
	f := query.AllOf(query.Compare("user_id", query.Lt, 100), query.Compare("message", query.Eq, "view"))
	want := bruteCount(all, now, func(r *eventRow) bool { return r.userID < 100 && r.message == "view" })
	if got := mustCount(t, tbl, now, f); got != want {
		t.Errorf("filtered count: got %d, want %d", got, want)
	}
}

func TestScanReturnsLiveRowsExactly(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl := mustCreate(t, t.TempDir(), directDef(), &Options{Allocator: mem, PageRows: 64, DisableAutoCompaction: true})
	defer checkClose(t, tbl)
	rng := rand.New(rand.NewPCG(3, 4))
	rows := genEvents(rng, 0, 1000)
	rec := eventBatch(mem, rows, true)
	mustWrite(t, tbl, rec)
	rec.Release()

	now := base.Add(time.Hour)
	got := scanAll(t, tbl, query.Request{Now: now, Columns: []string{"id", "__DORIS_TTL_COL__"}})
	want := map[int64]*int64{}
	for _, r := range rows {
		if r.ttl == nil || *r.ttl > now.UnixMicro() {
			want[r.id] = r.ttl
		}
	}
	if len(got) != len(want) {
		t.Fatalf("scan returned %d rows, want %d", len(got), len(want))
	}
	prev := int64(-1)
	for _, row := range got {
		id := row[0].Int
		if id < prev {
			t.Fatalf("rows out of key order: %d after %d", id, prev)
		}
		prev = id
		w, ok := want[id]
		if !ok {
			t.Fatalf("row %d returned but expired or unknown", id)
		}
		if (w == nil) != row[1].IsNull() || (w != nil && *w != row[1].Int) {
			t.Fatalf("row %d: ttl %v, want %v", id, row[1], w)
		}
	}
}

func TestExpiryBoundary(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl := mustCreate(t, t.TempDir(), directDef(), &Options{Allocator: mem, DisableAutoCompaction: true})
	defer checkClose(t, tbl)
	exp := base.UnixMicro()
	rec := eventBatch(mem, []eventRow{{id: 1, ttl: &exp}, {id: 2}}, true)
	mustWrite(t, tbl, rec)
	rec.Release()
	if n := mustCount(t, tbl, base.Add(-time.Microsecond), nil); n != 2 {
		t.Errorf("a microsecond before expiry: %d rows, want 2", n)
	}
	if n := mustCount(t, tbl, base, nil); n != 1 {
		t.Errorf("at the expiration itself the row is gone: %d rows, want 1", n)
	}
}

func TestSourceModeShowsTTLAsSourceType(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl := mustCreate(t, t.TempDir(), sourceDef("1 day", "+08:00"), &Options{Allocator: mem, DisableAutoCompaction: true})
	defer checkClose(t, tbl)
	// Wall clock 2026-01-01 08:00 at +08:00 is 00:00 UTC; it expires a day later.
	wall := base.Add(8 * time.Hour).UnixMicro()
	rec := eventBatch(mem, []eventRow{{id: 1, eventTime: wall}}, false)
	mustWrite(t, tbl, rec)
	rec.Release()
	got := scanAll(t, tbl, query.Request{Now: base, ShowHidden: true})
	if len(got) != 1 {
		t.Fatalf("%d rows", len(got))
	}
	row := got[0]
	if row[len(row)-1].Int != wall || row[1].Int != wall {
		t.Errorf("__TTL__ shown as %v, event_time %v; both must be %d", row[len(row)-1], row[1], wall)
	}
	if n := mustCount(t, tbl, base.Add(24*time.Hour-time.Microsecond), nil); n != 1 {
		t.Errorf("before expiry: %d", n)
	}
	if n := mustCount(t, tbl, base.Add(24*time.Hour), nil); n != 0 {
		t.Errorf("at expiry: %d", n)
	}
	// __TTL__ <=> event_time holds in a filter too.
	if n := mustCount(t, tbl, base, query.Compare("__TTL__", query.Eq, schema.IntVal(wall))); n != 1 {
		t.Errorf("filter on shown __TTL__: %d", n)
	}
}

func TestSourceModeRejectsWrittenTTL(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl := mustCreate(t, t.TempDir(), sourceDef("1 day", "UTC"), &Options{Allocator: mem, DisableAutoCompaction: true})
	defer checkClose(t, tbl)
	v := int64(5)
	rec := eventBatch(mem, []eventRow{{id: 1, ttl: &v}}, true)
	defer rec.Release()
	err := tbl.Write(context.Background(), rec)
	if !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Fatalf("got %v", err)
	}
	if tbl.LastVersion() != 0 {
		t.Fatalf("a rejected write made a version")
	}
}

func TestSourceOverflowRejectsWholeWrite(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	tbl := mustCreate(t, dir, sourceDef("9223372036854", "UTC"), &Options{Allocator: mem, DisableAutoCompaction: true})
	defer checkClose(t, tbl)
	rec := eventBatch(mem, []eventRow{{id: 1, eventTime: 0}, {id: 2, eventTime: base.UnixMicro()}}, false)
	defer rec.Release()
	err := tbl.Write(context.Background(), rec)
	if err == nil || !strings.Contains(err.Error(), "row 2") || !strings.Contains(err.Error(), "event_time") {
		t.Fatalf("want an overflow error naming row 2 and event_time, got %v", err)
	}
	if n := mustCount(t, tbl, base, nil); n != 0 {
		t.Fatalf("%d rows visible after a rejected write", n)
	}
	assertNoSegments(t, dir)
}

func assertNoSegments(t *testing.T, dir string) {
	t.Helper()
	names, _ := os.ReadDir(dir)
	for _, n := range names {
		if strings.HasSuffix(n.Name(), ".seg") || strings.HasSuffix(n.Name(), ".tmp") {
			t.Errorf("file %s left behind", n.Name())
		}
	}
}

func TestPageSkipping(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl := mustCreate(t, t.TempDir(), directDef(), &Options{Allocator: mem, PageRows: 100, DisableAutoCompaction: true})
	defer checkClose(t, tbl)
	// Expirations rise with the key: pages are wholly expired, wholly live,
	// or (one) mixed.
	rows := make([]eventRow, 1000)
	for i := range rows {
		e := base.UnixMicro() + int64(i-500)*1000
		rows[i] = eventRow{id: int64(i), ttl: &e}
	}
	rec := eventBatch(mem, rows, true)
	mustWrite(t, tbl, rec)
	rec.Release()
	r, err := tbl.Scan(context.Background(), query.Request{Now: base.Add(-50 * time.Microsecond), Columns: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for r.Next() {
		n += r.RecordBatch().NumRows()
	}
	c := r.(*query.Scan).Counters
	r.Release()
	if n != 500 {
		t.Fatalf("count %d, want 500", n)
	}
	if c.PagesExpired != 5 || c.PagesLive != 5 || c.PagesRead != 0 {
		t.Fatalf("counters %+v: want 5 expired pages skipped and 5 live pages counted from metadata", c)
	}
}

func TestTornManifestTailIsCut(t *testing.T) {
	dir := t.TempDir()
	tbl := mustCreate(t, dir, directDef(), quiet())
	rec := eventBatch(memory.DefaultAllocator, genEvents(rand.New(rand.NewPCG(5, 6)), 0, 100), true)
	mustWrite(t, tbl, rec)
	rec.Release()
	checkClose(t, tbl)
	man := filepath.Join(dir, "MANIFEST-000001")
	for _, tail := range [][]byte{{1, 2, 3}, make([]byte, 40)} {
		f, err := os.OpenFile(man, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(tail)
		f.Close()
		tbl, err := Open(dir, quiet())
		if err != nil {
			t.Fatalf("open after a torn tail: %v", err)
		}
		if n := mustCount(t, tbl, base.Add(-100*24*time.Hour), nil); n != 100 {
			t.Fatalf("%d rows after reopen", n)
		}
		checkClose(t, tbl)
	}
}

func TestCorruptManifestIsReported(t *testing.T) {
	dir := t.TempDir()
	tbl := mustCreate(t, dir, directDef(), quiet())
	rec := eventBatch(memory.DefaultAllocator, genEvents(rand.New(rand.NewPCG(5, 6)), 0, 10), true)
	mustWrite(t, tbl, rec)
	rec.Release()
	checkClose(t, tbl)
	man := filepath.Join(dir, "MANIFEST-000001")
	orig, err := os.ReadFile(man)
	if err != nil {
		t.Fatal(err)
	}
	for i := range orig {
		data := append([]byte(nil), orig...)
		data[i] ^= 0x40
		os.WriteFile(man, data, 0o644)
		tbl, err := Open(dir, quiet())
		if err == nil {
			tbl.Close()
			t.Fatalf("flipped byte %d of %d: open succeeded", i, len(orig))
		}
		if !errors.Is(err, rowttl.ErrCorruption) || !strings.Contains(err.Error(), "MANIFEST-000001") {
			t.Fatalf("flipped byte %d: %v", i, err)
		}
	}
	os.WriteFile(man, orig, 0o644)
}

func TestOrphansRemovedOnOpen(t *testing.T) {
	dir := t.TempDir()
	tbl := mustCreate(t, dir, directDef(), quiet())
	checkClose(t, tbl)
	for _, n := range []string{"000099.seg", "000100.seg.tmp", "MANIFEST-000077"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644)
	}
	tbl, err := Open(dir, quiet())
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, tbl)
	assertNoSegments(t, dir)
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST-000077")); !os.IsNotExist(err) {
		t.Error("old manifest left behind")
	}
}

func TestSecondOpenIsRefused(t *testing.T) {
	dir := t.TempDir()
	tbl := mustCreate(t, dir, directDef(), quiet())
	defer checkClose(t, tbl)
	if _, err := Open(dir, quiet()); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
}

func TestWriteErrorsLeaveTableUnchanged(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	s := eventsSchema()
	s.Columns[2].Nullable = false // user_id NOT NULL, no default
	tbl := mustCreate(t, dir, &Definition{Schema: s, Properties: map[string]string{PropEnableRowTTL: "true"}}, &Options{Allocator: mem, DisableAutoCompaction: true})
	defer checkClose(t, tbl)
	good := eventBatch(mem, genEvents(rand.New(rand.NewPCG(1, 1)), 0, 10), true)
	mustWrite(t, tbl, good)
	good.Release()
	for _, c := range []struct {
		name string
		sql  func() error
		want string
	}{
		{"unknown column", func() error {
			return writeCols(tbl, mem, map[string]any{"id": int64(1), "nope": int64(2), "user_id": int64(1)})
		}, "unknown column nope"},
		{"missing NOT NULL", func() error { return writeCols(tbl, mem, map[string]any{"id": int64(1)}) }, "user_id is NOT NULL"},
		{"text into __TTL__", func() error {
			return writeCols(tbl, mem, map[string]any{"id": int64(1), "user_id": int64(1), "__TTL__": "2026-01-01"})
		}, "CAST"},
	} {
		err := c.sql()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	if v := tbl.LastVersion(); v != 1 {
		t.Fatalf("rejected writes made versions: last %d", v)
	}
	if n := mustCount(t, tbl, base.Add(-100*24*time.Hour), nil); n != 10 {
		t.Fatalf("%d rows", n)
	}
	assertOnlySegmentsOf(t, tbl)
}

func assertOnlySegmentsOf(t *testing.T, tbl *Table) {
	t.Helper()
	v, _ := tbl.pin()
	defer v.unref()
	live := map[string]bool{}
	for _, h := range v.rowsets {
		for _, s := range h.Meta.Segments {
			live[fmt.Sprintf("%06d.seg", s.FileNum)] = true
		}
	}
	names, _ := os.ReadDir(tbl.Dir())
	for _, n := range names {
		if strings.HasSuffix(n.Name(), ".seg") && !live[n.Name()] || strings.HasSuffix(n.Name(), ".tmp") {
			t.Errorf("file %s is not part of any rowset", n.Name())
		}
	}
}
