package table

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
	"github.com/rowttl/rowttl/vfs"
)

// Helpers shared by the reliability tests (fault injection, crashes,
// corruption, fuzzing). They reuse the reference model of model_test.go.

// countingAllocator counts live bytes like memory.CheckedAllocator, without
// recording a stack per allocation: the fault tests open tables hundreds of
// times, and under -race the stacks cost more than the test.
type countingAllocator struct {
	mem  memory.Allocator
	size atomic.Int64
}

func newCountingAllocator() *countingAllocator {
	return &countingAllocator{mem: memory.NewGoAllocator()}
}

func (a *countingAllocator) Allocate(n int) []byte {
	a.size.Add(int64(n))
	return a.mem.Allocate(n)
}

func (a *countingAllocator) Reallocate(n int, b []byte) []byte {
	a.size.Add(int64(n - len(b)))
	return a.mem.Reallocate(n, b)
}

func (a *countingAllocator) Free(b []byte) {
	a.size.Add(-int64(len(b)))
	a.mem.Free(b)
}

// AssertSize fails the test unless n bytes are allocated.
func (a *countingAllocator) AssertSize(t testing.TB, n int) {
	t.Helper()
	if got := a.size.Load(); got != int64(n) {
		t.Errorf("allocator: %d bytes live, want %d (a leak)", got, n)
	}
}

// soakDuration is how long soak variants run, from ROWTTL_SOAK (a Go
// duration); 0 when unset, and the tests then keep to their quick form.
func soakDuration(t testing.TB) time.Duration {
	s := os.Getenv("ROWTTL_SOAK")
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("ROWTTL_SOAK=%q: %v", s, err)
	}
	return d
}

// clone returns an independent copy of the reference model.
func (m *refModel) clone() *refModel {
	c := *m
	c.dup = slices.Clone(m.dup)
	c.keys = maps.Clone(m.keys)
	return &c
}

// reliabilityOpts are small-page options on fsys with a fixed clock and no
// background work, so that every file operation comes from the test.
func reliabilityOpts(fsys vfs.FS, mem memory.Allocator) *Options {
	return &Options{
		FS: fsys, Allocator: mem, PageRows: 16, SegmentRows: 24,
		Clock: func() time.Time { return base }, DisableAutoCompaction: true,
		PublishInterval: -1,
		// These tests count the file operations of rowset writes; the
		// write-ahead log has its own (memtable_test.go).
		SmallWriteRows: -1,
	}
}

// visibleRows is tableVisible returning errors instead of failing: "id:v"
// strings of the rows alive at now, sorted.
func visibleRows(tbl *Table, now time.Time) ([]string, error) {
	r, err := tbl.Scan(context.Background(), query.Request{Now: now, Columns: []string{"id", "v"}})
	if err != nil {
		return nil, err
	}
	defer r.Release()
	var out []string
	for r.Next() {
		rec := r.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			out = append(out, fmt.Sprintf("%d:%d", schema.ValueAt(rec.Column(0), i).Int, schema.ValueAt(rec.Column(1), i).Int))
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// checkNows are the instants the reliability tests compare scans at: the
// fixed clock, and a later one where more rows have expired.
var checkNows = []time.Time{base, base.Add(3 * time.Hour)}

// stateOf renders what tbl shows at every check instant, one line each.
func stateOf(tbl *Table) (string, error) {
	var b strings.Builder
	if pol := tbl.Policy(); pol.Mode == ttlcol.SourceMode {
		// The retention, so that states without rows still differ.
		fmt.Fprintf(&b, "retention %ds\n", pol.Retention)
	}
	for _, now := range checkNows {
		rows, err := visibleRows(tbl, now)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s: %s\n", now.Format(time.RFC3339), strings.Join(rows, " "))
	}
	return b.String(), nil
}

// refState renders what the reference model shows, as stateOf does.
func refState(m *refModel) string {
	var b strings.Builder
	if m.source {
		fmt.Fprintf(&b, "retention %ds\n", m.retention/1e6)
	}
	for _, now := range checkNows {
		fmt.Fprintf(&b, "%s: %s\n", now.Format(time.RFC3339), strings.Join(m.visible(now.UnixMicro()), " "))
	}
	return b.String()
}

// modelRowsFor makes n rows with ids from id0 (keys repeat modulo keyMod
// when keyMod > 0), values from v0, and expirations spread around base:
// some NULL, some already expired, some expiring within the check instants.
func modelRowsFor(id0, n, keyMod int, v0 int64, source bool) []modelRow {
	rows := make([]modelRow, n)
	hour := int64(3600e6)
	for i := range rows {
		id := int64(id0 + i)
		if keyMod > 0 {
			id %= int64(keyMod)
		}
		var ttl *int64
		var exp int64
		switch i % 5 {
		case 0:
		case 1:
			exp = base.UnixMicro() - hour // already expired
		case 2:
			exp = base.UnixMicro() + 2*hour // gone by the second instant
		case 3:
			exp = base.UnixMicro() + 20*hour // gone by the third
		default:
			exp = base.UnixMicro() + 1000*hour
		}
		if i%5 != 0 {
			if source {
				exp -= 10 * hour // modelDef's retention
			}
			ttl = &exp
		}
		rows[i] = modelRow{id: id, v: v0 + int64(i), ttl: ttl}
	}
	return rows
}

// writeModelRows writes rows to tbl and, when acknowledged, to ref.
func writeModelRows(tbl *Table, mem memory.Allocator, ref *refModel, rows []modelRow) error {
	rec := modelBatch(mem, rows, ref.source)
	defer rec.Release()
	if err := tbl.Write(context.Background(), rec); err != nil {
		return err
	}
	ref.write(rows)
	return nil
}

// newRef returns an empty reference model for modelDef(model, source).
func newRef(model schema.Model, source bool) *refModel {
	return &refModel{unique: model.IsUnique(), source: source, retention: 10 * 3600e6, keys: map[int64]modelRow{}}
}

// modelName is a short name for test names.
func modelName(model schema.Model) string {
	switch model {
	case schema.Duplicate:
		return "DUP"
	case schema.UniqueMOW:
		return "MOW"
	case schema.UniqueMOR:
		return "MOR"
	}
	return model.String()
}
