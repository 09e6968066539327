package table

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
	"github.com/rowttl/rowttl/vfs"
)

// loggedOpts are reliabilityOpts whose small writes go through the
// write-ahead log into memtables, flushed only when asked (or at close).
func loggedOpts(fsys vfs.FS, mem memory.Allocator) *Options {
	o := reliabilityOpts(fsys, mem)
	o.SmallWriteRows = 0
	o.MemtableAge = time.Hour
	o.memChunkRows = 9 // several chunks per memtable
	return o
}

// early is an instant at which every row modelRowsFor makes is alive.
var early = base.Add(-2 * time.Hour)

func walFiles(t *testing.T, fsys vfs.FS, dir string) []string {
	t.Helper()
	names, err := fsys.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if _, ok := parseWALName(n); ok {
			out = append(out, n)
		}
	}
	return out
}

// TestMemtableRowsScanReplayFlush: small writes land in memtables and are
// seen by scans under the rules of rowsets (TTL, keys, deletes); a crash
// before any flush loses none of them (replay); a flush turns them into
// one rowset [lo, hi] and the log goes.
func TestMemtableRowsScanReplayFlush(t *testing.T) {
	for _, model := range allModels() {
		for _, source := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/source=%v", modelName(model), source), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				fsys := vfs.NewMemFS()
				opts := loggedOpts(fsys, mem)
				tbl := mustCreate(t, "/t", modelDef(model, source), opts)
				ref := newRef(model, source)
				for i := 0; i < 12; i++ {
					if err := writeModelRows(tbl, mem, ref, modelRowsFor(i*7, 5+i%3, 23, int64(100*i), source)); err != nil {
						t.Fatal(err)
					}
				}
				want := refState(ref)
				check := func(what string, tbl *Table) {
					t.Helper()
					got, err := stateOf(tbl)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					if got != want {
						t.Fatalf("%s:\n%s\nwant\n%s", what, got, want)
					}
				}
				check("memtable", tbl)
				st, err := tbl.Stats(context.Background(), base)
				if err != nil {
					t.Fatal(err)
				}
				if st.Rowsets != 0 || st.MemtableRows == 0 || st.MemtableBytes == 0 || st.WALBytes == 0 {
					t.Fatalf("stats before a flush: %+v", st)
				}
				if tbl.LastVersion() != 12 {
					t.Fatalf("last version %d, want 12", tbl.LastVersion())
				}

				// A crash of the process: the log holds every write.
				crashed := fsys.Clone()
				re, err := Open("/t", loggedOpts(crashed, mem))
				if err != nil {
					t.Fatal(err)
				}
				check("replayed", re)
				if re.LastVersion() != 12 {
					t.Fatalf("replayed last version %d, want 12", re.LastVersion())
				}
				checkClose(t, re)
				if n := walFiles(t, crashed, "/t"); len(n) != 1 {
					t.Fatalf("after close the log is %v, want one empty segment", n)
				}

				if err := tbl.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
				check("flushed", tbl)
				rs, err := tbl.Rowsets(context.Background(), base)
				if err != nil {
					t.Fatal(err)
				}
				if len(rs) != 1 || rs[0].Lo != 1 || rs[0].Hi != 12 {
					t.Fatalf("rowsets after the flush: %+v", rs)
				}
				if st, _ := tbl.Stats(context.Background(), base); st.Flushes != 1 || st.MemtableRows != 0 {
					t.Fatalf("stats after the flush: %+v", st)
				}
				checkClose(t, tbl)
				tbl, err = Open("/t", opts)
				if err != nil {
					t.Fatal(err)
				}
				check("reopened", tbl)
				checkClose(t, tbl)
			})
		}
	}
}

// TestMemtableThenDirectWriteKeepsOrder: a write that makes a rowset
// directly (a large one, a DELETE) after small writes takes its version
// after theirs; the newest row of a key wins across both.
func TestMemtableThenDirectWriteKeepsOrder(t *testing.T) {
	for _, model := range allModels() {
		t.Run(modelName(model), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			opts := loggedOpts(vfs.NewMemFS(), mem)
			opts.SmallWriteRows = 10
			tbl := mustCreate(t, "/t", modelDef(model, false), opts)
			defer checkClose(t, tbl)
			ref := newRef(model, false)
			write := func(id0, n int, v0 int64) {
				t.Helper()
				if err := writeModelRows(tbl, mem, ref, modelRowsFor(id0, n, 30, v0, false)); err != nil {
					t.Fatal(err)
				}
			}
			write(0, 5, 0)      // memtable, version 1
			write(3, 5, 1000)   // memtable, version 2
			write(0, 40, 2000)  // direct: flushes versions 1-2 first
			write(10, 5, 3000)  // memtable again
			write(20, 15, 4000) // direct
			got, err := stateOf(tbl)
			if err != nil {
				t.Fatal(err)
			}
			if want := refState(ref); got != want {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
			rs, _ := tbl.Rowsets(context.Background(), base)
			var spans []string
			for _, r := range rs {
				spans = append(spans, fmt.Sprintf("[%d-%d]", r.Lo, r.Hi))
			}
			if s := strings.Join(spans, " "); s != "[1-2] [3-3] [4-4] [5-5]" {
				t.Fatalf("rowsets %s", s)
			}
		})
	}
}

// TestMemtableLabelsSurviveCrash: a label applied by a logged write is
// refused again before and after a crash.
func TestMemtableLabelsSurviveCrash(t *testing.T) {
	mem := memory.NewGoAllocator()
	fsys := vfs.NewMemFS()
	tbl := mustCreate(t, "/t", modelDef(schema.Duplicate, false), loggedOpts(fsys, mem))
	defer tbl.Close()
	rec := modelBatch(mem, modelRowsFor(0, 3, 0, 0, false), false)
	defer rec.Release()
	ctx := context.Background()
	if err := tbl.WriteWith(ctx, rec, WriteOptions{Label: "l1"}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.WriteWith(ctx, rec, WriteOptions{Label: "l1"}); !errors.Is(err, rowttl.ErrLabelExists) {
		t.Fatalf("second write with the label: %v", err)
	}
	re, err := Open("/t", loggedOpts(fsys.CrashClone(nil), mem))
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if err := re.WriteWith(ctx, rec, WriteOptions{Label: "l1"}); !errors.Is(err, rowttl.ErrLabelExists) {
		t.Fatalf("write with the label after a crash: %v", err)
	}
	if n := mustCount(t, re, early, nil); n != 3 {
		t.Fatalf("count %d, want 3", n)
	}
}

// TestMemtableCrashAtEveryLogOperation: a crash at any file operation
// while small writes and flushes run leaves every acknowledged write
// whole, and nothing partial: each state reopens to the writes of a
// prefix of the sequence, at least the acknowledged ones.
func TestMemtableCrashAtEveryLogOperation(t *testing.T) {
	for _, model := range allModels() {
		t.Run(modelName(model), func(t *testing.T) {
			seed := time.Now().UnixNano()
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(uint64(seed), 0))
			mem := vfs.NewMemFS()
			type state struct {
				fs    *vfs.MemFS
				acked int
			}
			var states []state
			acked := 0
			armed := false
			inj := vfs.InjectorFunc(func(op vfs.Op, path string) error {
				if armed && op&vfs.WriteOps != 0 {
					states = append(states, state{mem.CrashClone(nil), acked}, state{mem.CrashClone(rng), acked})
				}
				return nil
			})
			alloc := memory.NewGoAllocator()
			opts := loggedOpts(vfs.NewErrorFS(mem, inj), alloc)
			tbl := mustCreate(t, "/t", modelDef(model, false), opts)
			// Each write i brings its own keys, so the state after a
			// prefix of writes tells how many there were.
			refs := []*refModel{newRef(model, false)}
			armed = true
			const writes = 14
			for i := 0; i < writes; i++ {
				ref := refs[len(refs)-1].clone()
				if err := writeModelRows(tbl, alloc, ref, modelRowsFor(i*4, 4, 0, int64(i*10), false)); err != nil {
					t.Fatal(err)
				}
				refs = append(refs, ref)
				acked = i + 1
				if i%5 == 4 {
					if err := tbl.Flush(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
			}
			armed = false
			tbl.Close()
			wants := make(map[string]int, len(refs))
			for i, r := range refs {
				wants[refState(r)] = i
			}
			for i, st := range states {
				re, err := Open("/t", loggedOpts(st.fs, alloc))
				if err != nil {
					t.Fatalf("crash state %d: open: %v", i, err)
				}
				got, err := stateOf(re)
				re.Close()
				if err != nil {
					t.Fatalf("crash state %d: %v", i, err)
				}
				n, ok := wants[got]
				if !ok {
					t.Fatalf("crash state %d: a state no prefix of the writes gives:\n%s", i, got)
				}
				if n < st.acked {
					t.Fatalf("crash state %d: %d writes, %d were acknowledged", i, n, st.acked)
				}
			}
		})
	}
}

// TestMemtableLogFaults: a failed write or sync of the log fails the
// write, which is then not visible; the table goes on taking writes, and a
// reopen shows the acknowledged ones and, at most, the failed one whole.
func TestMemtableLogFaults(t *testing.T) {
	for _, kind := range []vfs.Op{vfs.OpWrite, vfs.OpSync} {
		t.Run(kind.String(), func(t *testing.T) {
			mem := vfs.NewMemFS()
			inj := vfs.FailNth(1, kind)
			inj.SetArmed(false)
			alloc := memory.NewGoAllocator()
			tbl := mustCreate(t, "/t", modelDef(schema.UniqueMOW, false), loggedOpts(vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op, path string) error {
				if !strings.Contains(path, walPrefix) {
					return nil
				}
				return inj.MaybeError(op, path)
			})), alloc))
			ref := newRef(schema.UniqueMOW, false)
			if err := writeModelRows(tbl, alloc, ref, modelRowsFor(0, 5, 0, 0, false)); err != nil {
				t.Fatal(err)
			}
			before := ref.clone()
			inj.SetArmed(true)
			failed := modelRowsFor(0, 5, 0, 500, false)
			if err := writeModelRows(tbl, alloc, ref, failed); err == nil {
				t.Fatal("a write whose log failed succeeded")
			}
			inj.SetArmed(false)
			if got, _ := stateOf(tbl); got != refState(before) {
				t.Fatalf("the failed write is visible:\n%s", got)
			}
			if err := writeModelRows(tbl, alloc, ref, modelRowsFor(10, 5, 0, 900, false)); err != nil {
				t.Fatalf("write after the failure: %v", err)
			}
			want := refState(ref)
			if got, _ := stateOf(tbl); got != want {
				t.Fatalf("after the failure:\n%s\nwant\n%s", got, want)
			}
			withFailed := before.clone()
			withFailed.write(failed)
			withFailed.write(modelRowsFor(10, 5, 0, 900, false))
			re, err := Open("/t", loggedOpts(mem.CrashClone(nil), alloc))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := stateOf(re)
			re.Close()
			if got != want && got != refState(withFailed) {
				t.Fatalf("reopened:\n%s\nwant\n%s", got, want)
			}
			checkClose(t, tbl)
		})
	}
}

// TestMemtableCorruptRecord: damage inside the log before its tail is
// ErrCorruption naming the file; a torn tail is cut.
func TestMemtableCorruptRecord(t *testing.T) {
	alloc := memory.NewGoAllocator()
	fsys := vfs.NewMemFS()
	tbl := mustCreate(t, "/t", modelDef(schema.Duplicate, false), loggedOpts(fsys, alloc))
	ref := newRef(schema.Duplicate, false)
	for i := 0; i < 3; i++ {
		if err := writeModelRows(tbl, alloc, ref, modelRowsFor(i*5, 5, 0, 0, false)); err != nil {
			t.Fatal(err)
		}
	}
	names := walFiles(t, fsys, "/t")
	if len(names) != 1 {
		t.Fatalf("log %v", names)
	}
	path := filepath.Join("/t", names[0])
	data, err := vfs.ReadFile(fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	torn := fsys.CrashClone(nil)
	valid := heldBytes(t, names[0], data)
	mutateFile(t, torn, path, func(b []byte) []byte { return b[:valid-3] })
	re, err := Open("/t", loggedOpts(torn, alloc))
	if err != nil {
		t.Fatalf("torn tail: %v", err)
	}
	if n := mustCount(t, re, early, nil); n != 10 {
		t.Fatalf("torn tail: %d rows, want the 10 of the whole records", n)
	}
	re.Close()
	bad := fsys.CrashClone(nil)
	mutateFile(t, bad, path, func(b []byte) []byte { b[valid/3] ^= 0x40; return b })
	_, err = Open("/t", loggedOpts(bad, alloc))
	if !errors.Is(err, rowttl.ErrCorruption) || !strings.Contains(err.Error(), names[0]) {
		t.Fatalf("damaged record: %v", err)
	}
	tbl.Close()
}

// TestMemtableGroupCommit: many goroutines of one-row writes share syncs,
// and every write is visible, whole, before and after a reopen.
func TestMemtableGroupCommit(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(t.TempDir(), "t")
	opts := &Options{Allocator: mem, DisableAutoCompaction: true, MemtableBytes: 64 << 10}
	tbl := mustCreate(t, dir, modelDef(schema.UniqueMOW, false), opts)
	const goroutines, each = 16, 40
	var wg sync.WaitGroup
	var failures atomic.Int64
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				rows := []modelRow{{id: int64(g*each + i), v: int64(g)}}
				rec := modelBatch(mem, rows, false)
				if err := tbl.Write(context.Background(), rec); err != nil {
					failures.Add(1)
				}
				rec.Release()
			}
		}()
	}
	wg.Wait()
	if failures.Load() != 0 {
		t.Fatalf("%d writes failed", failures.Load())
	}
	if n := mustCount(t, tbl, base, nil); n != goroutines*each {
		t.Fatalf("count %d, want %d", n, goroutines*each)
	}
	if tbl.LastVersion() != goroutines*each {
		t.Fatalf("last version %d", tbl.LastVersion())
	}
	syncs := tbl.wal.syncs
	t.Logf("%d writes, %d syncs of the log", goroutines*each, syncs)
	checkClose(t, tbl)
	tbl, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := mustCount(t, tbl, base, nil); n != goroutines*each {
		t.Fatalf("reopened count %d, want %d", n, goroutines*each)
	}
	checkClose(t, tbl)
}

// TestMemtableBackPressure: when flushes cannot keep up (the disk is
// slow), writers wait, bounded by their context, and frozen memtables stop
// piling up; once flushes go on, so do writes.
func TestMemtableBackPressure(t *testing.T) {
	mem := memory.NewGoAllocator()
	release := make(chan struct{})
	var blocked atomic.Bool
	slow := vfs.InjectorFunc(func(op vfs.Op, path string) error {
		if op == vfs.OpCreate && strings.HasSuffix(path, ".seg.tmp") && blocked.Load() {
			<-release
		}
		return nil
	})
	opts := loggedOpts(vfs.NewErrorFS(vfs.NewMemFS(), slow), mem)
	opts.MemtableBytes = 1 // every write freezes its memtable
	tbl := mustCreate(t, "/t", modelDef(schema.Duplicate, false), opts)
	defer tbl.Close()
	rec := modelBatch(mem, modelRowsFor(0, 2, 0, 0, false), false)
	defer rec.Release()
	blocked.Store(true)
	// The first flush hangs in the disk; the writes after it freeze
	// memtables until there are too many.
	for i := 0; i <= maxFrozenMemtables; i++ {
		if err := tbl.Write(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := tbl.Write(ctx, rec)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stalled write: %v", err)
	}
	st, _ := tbl.Stats(context.Background(), base)
	if st.WriteStalls == 0 || st.Memtables != maxFrozenMemtables+1 {
		t.Fatalf("stats of a stall: %+v", st)
	}
	blocked.Store(false)
	close(release)
	if err := tbl.Write(context.Background(), rec); err != nil {
		t.Fatalf("write once flushes go on: %v", err)
	}
	early := base.Add(-2 * time.Hour)
	if n := mustCount(t, tbl, early, nil); n != 2*(maxFrozenMemtables+2) {
		t.Fatalf("count %d", n)
	}
}

// TestMemtableAgeFlush: a memtable older than MemtableAge is flushed in
// the background and its log segments go.
func TestMemtableAgeFlush(t *testing.T) {
	mem := memory.NewGoAllocator()
	fsys := vfs.NewMemFS()
	opts := loggedOpts(fsys, mem)
	opts.MemtableAge = 20 * time.Millisecond
	tbl := mustCreate(t, "/t", modelDef(schema.Duplicate, false), opts)
	defer checkClose(t, tbl)
	rec := modelBatch(mem, modelRowsFor(0, 3, 0, 0, false), false)
	defer rec.Release()
	mustWrite(t, tbl, rec)
	waitFor(t, "the age flush", func() bool {
		rs, _ := tbl.Rowsets(context.Background(), base)
		return len(rs) == 1
	})
	if n := mustCount(t, tbl, early, nil); n != 3 {
		t.Fatalf("count %d", n)
	}
	waitFor(t, "the flushed log to go", func() bool { return len(walFiles(t, fsys, "/t")) == 1 })
}

// TestMemtableNoSync: a write with NoSync is acknowledged before the sync
// and visible; a crash of the process keeps it (it is in the file), and a
// power cut keeps whole writes only.
func TestMemtableNoSync(t *testing.T) {
	mem := memory.NewGoAllocator()
	fsys := vfs.NewMemFS()
	tbl := mustCreate(t, "/t", modelDef(schema.Duplicate, false), loggedOpts(fsys, mem))
	defer tbl.Close()
	rec := modelBatch(mem, modelRowsFor(0, 4, 0, 0, false), false)
	defer rec.Release()
	syncs := tbl.wal.syncs
	for i := 0; i < 5; i++ {
		if err := tbl.WriteWith(context.Background(), rec, WriteOptions{NoSync: true}); err != nil {
			t.Fatal(err)
		}
	}
	if tbl.wal.syncs != syncs {
		t.Fatalf("NoSync writes synced the log %d times", tbl.wal.syncs-syncs)
	}
	if n := mustCount(t, tbl, early, nil); n != 20 {
		t.Fatalf("count %d", n)
	}
	re, err := Open("/t", loggedOpts(fsys.Clone(), mem))
	if err != nil {
		t.Fatal(err)
	}
	if n := mustCount(t, re, early, nil); n != 20 {
		t.Fatalf("after a process crash: count %d, want 20", n)
	}
	re.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 20; i++ {
		re, err := Open("/t", loggedOpts(fsys.CrashClone(rng), mem))
		if err != nil {
			t.Fatal(err)
		}
		if n := mustCount(t, re, early, nil); n%4 != 0 {
			t.Fatalf("after a power cut: count %d, not whole writes", n)
		}
		re.Close()
	}
	// The next durable write makes the earlier ones durable too.
	if err := tbl.Write(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	re, err = Open("/t", loggedOpts(fsys.CrashClone(nil), mem))
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if n := mustCount(t, re, early, nil); n != 24 {
		t.Fatalf("after a power cut following a durable write: count %d, want 24", n)
	}
}

// TestMemtableNoSyncAcrossSegments: writes acknowledged without a sync in
// a segment the log then leaves (a flush starts a new one) are synced
// before later writes land in the new segment, so a power cut never keeps
// a later write without the earlier ones.
func TestMemtableNoSyncAcrossSegments(t *testing.T) {
	mem := memory.NewGoAllocator()
	fsys := vfs.NewMemFS()
	tbl := mustCreate(t, "/t", modelDef(schema.Duplicate, false), loggedOpts(fsys, mem))
	defer tbl.Close()
	rec := modelBatch(mem, modelRowsFor(0, 4, 0, 0, false), false)
	defer rec.Release()
	ctx := context.Background()
	if err := tbl.WriteWith(ctx, rec, WriteOptions{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	// A new segment, as a flush makes, without flushing the write.
	if _, err := tbl.wal.rotate(); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Write(ctx, rec); err != nil {
		t.Fatal(err)
	}
	re, err := Open("/t", loggedOpts(fsys.CrashClone(nil), mem))
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if n := mustCount(t, re, early, nil); n != 8 {
		t.Fatalf("after a power cut: %d rows, want both writes' 8", n)
	}
}

// TestMemtableFlushManifestFaults: a flush whose manifest write or sync
// fails keeps the rows visible once, whether or not the record turns out
// to be durable (the next writer recovers and finds out), and the table
// goes on; a reopen shows the same rows.
func TestMemtableFlushManifestFaults(t *testing.T) {
	for _, kind := range []vfs.Op{vfs.OpWrite, vfs.OpSync} {
		for _, model := range allModels() {
			t.Run(fmt.Sprintf("%s/%s", kind, modelName(model)), func(t *testing.T) {
				mem := vfs.NewMemFS()
				inj := vfs.FailNth(1, kind)
				inj.SetArmed(false)
				alloc := memory.NewGoAllocator()
				opts := loggedOpts(vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op, path string) error {
					if !strings.Contains(path, "MANIFEST-") {
						return nil
					}
					return inj.MaybeError(op, path)
				})), alloc)
				tbl := mustCreate(t, "/t", modelDef(model, false), opts)
				defer tbl.Close()
				ref := newRef(model, false)
				for i := 0; i < 4; i++ {
					if err := writeModelRows(tbl, alloc, ref, modelRowsFor(i*3, 5, 11, int64(i*10), false)); err != nil {
						t.Fatal(err)
					}
				}
				labelled := modelRowsFor(100, 2, 0, 1, false)
				lrec := modelBatch(alloc, labelled, false)
				defer lrec.Release()
				if err := tbl.WriteWith(context.Background(), lrec, WriteOptions{Label: "kept"}); err != nil {
					t.Fatal(err)
				}
				ref.write(labelled)
				want := refState(ref)
				inj.SetArmed(true)
				if err := tbl.Flush(context.Background()); err == nil {
					t.Fatal("a flush whose manifest append failed succeeded")
				}
				inj.SetArmed(false)
				if got, _ := stateOf(tbl); got != want {
					t.Fatalf("after the failed flush:\n%s\nwant\n%s", got, want)
				}
				// The next write recovers first.
				if err := writeModelRows(tbl, alloc, ref, modelRowsFor(40, 3, 0, 7, false)); err != nil {
					t.Fatalf("write after the failed flush: %v", err)
				}
				want = refState(ref)
				if got, _ := stateOf(tbl); got != want {
					t.Fatalf("after the recovery:\n%s\nwant\n%s", got, want)
				}
				if err := tbl.WriteWith(context.Background(), lrec, WriteOptions{Label: "kept"}); !errors.Is(err, rowttl.ErrLabelExists) {
					t.Fatalf("label of a logged write after the recovery: %v", err)
				}
				if err := tbl.Flush(context.Background()); err != nil {
					t.Fatal(err)
				}
				if got, _ := stateOf(tbl); got != want {
					t.Fatalf("after the next flush:\n%s\nwant\n%s", got, want)
				}
				re, err := Open("/t", loggedOpts(mem.CrashClone(nil), alloc))
				if err != nil {
					t.Fatal(err)
				}
				got, _ := stateOf(re)
				re.Close()
				if got != want {
					t.Fatalf("reopened:\n%s\nwant\n%s", got, want)
				}
			})
		}
	}
}

// TestMemtablePageSkipping checks that rows still in a memtable are read
// under the same rules as a flushed rowset's: pages wholly expired or
// wholly live are decided by their __TTL__ zone maps, and a filter's zone
// maps prune pages, with the same counts before and after the flush.
func TestMemtablePageSkipping(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl := mustCreate(t, t.TempDir(), directDef(), &Options{Allocator: mem, PageRows: 100, DisableAutoCompaction: true,
		MemtableBytes: 1 << 30, MemtableAge: time.Hour})
	defer checkClose(t, tbl)
	// Expirations rise with the key, written as ten small writes.
	for w := 0; w < 10; w++ {
		rows := make([]eventRow, 100)
		for i := range rows {
			id := int64(w*100 + i)
			e := base.UnixMicro() + (id-500)*1000
			rows[i] = eventRow{id: id, ttl: &e}
		}
		rec := eventBatch(mem, rows, true)
		mustWrite(t, tbl, rec)
		rec.Release()
	}
	ctx := context.Background()
	scan := func(req query.Request) (int64, query.Counters) {
		t.Helper()
		r, err := tbl.Scan(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release()
		var n int64
		for r.Next() {
			n += r.RecordBatch().NumRows()
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		return n, r.(*query.Scan).Counters
	}
	now := base.Add(-50 * time.Microsecond)
	for _, flushed := range []bool{false, true} {
		st, err := tbl.Stats(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int64{false: 1000, true: 0}[flushed]; st.MemtableRows != want {
			t.Fatalf("flushed %v: %d rows in memtables, want %d", flushed, st.MemtableRows, want)
		}
		if n, c := scan(query.Request{Now: now, Columns: []string{}}); n != 500 || c.PagesExpired != 5 || c.PagesLive != 5 || c.PagesRead != 0 {
			t.Errorf("flushed %v: count %d, counters %+v: want 500 rows, 5 expired pages skipped and 5 live pages counted from metadata", flushed, n, c)
		}
		// Row 777 is live, in the eighth page: the others are pruned or
		// expired.
		n, c := scan(query.Request{Now: now, Columns: []string{"id"}, Filter: query.Compare("id", query.Eq, int64(777))})
		if n != 1 || c.PagesRead != 1 || c.PagesPruned+c.PagesExpired != 9 {
			t.Errorf("flushed %v: id = 777 gave %d rows, counters %+v: want 1 row from 1 page, 9 pruned or expired", flushed, n, c)
		}
		if !flushed {
			mustFlush(t, ctx, tbl)
		}
	}
}

// TestMemtableOneInstallPerGroup: the writes of one sync group become
// current as one version, installed before any of their writers returns:
// each writer reads its own row at once, every version number is used,
// and there are as many installs as synced groups, fewer than writes.
func TestMemtableOneInstallPerGroup(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	slowSync := vfs.InjectorFunc(func(op vfs.Op, path string) error {
		if op == vfs.OpSync && strings.Contains(path, walPrefix) {
			time.Sleep(2 * time.Millisecond) // writers pile up behind a sync
		}
		return nil
	})
	fsys := vfs.NewErrorFS(vfs.NewMemFS(), slowSync)
	tbl := mustCreate(t, "/t", modelDef(schema.Duplicate, false), loggedOpts(fsys, mem))
	const goroutines, each = 16, 10
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := int64(g*each + i)
				rec := modelBatch(mem, []modelRow{{id: id, v: 1}}, false)
				err := tbl.Write(context.Background(), rec)
				rec.Release()
				if err != nil {
					errs <- err
					return
				}
				n, err := tbl.Count(context.Background(), early, query.Compare("id", query.Eq, id))
				if err == nil && n != 1 {
					err = fmt.Errorf("write of id %d returned, a read then sees %d rows of it", id, n)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if v := tbl.LastVersion(); v != goroutines*each {
		t.Fatalf("last version %d, want %d", v, goroutines*each)
	}
	tbl.mu.Lock()
	installs := tbl.mem.installs
	tbl.mu.Unlock()
	if syncs := tbl.wal.syncs; installs != syncs || installs >= goroutines*each {
		t.Fatalf("%d writes in %d synced groups made %d versions", goroutines*each, syncs, installs)
	}
	t.Logf("%d writes, %d groups", goroutines*each, installs)
	checkClose(t, tbl)
}

// TestMemtableReadsCostWhatFlushedRowsCost: a read of memtable rows does no
// more structural work than the same read after their flush. Each chunk's
// in-memory rowset is built once and then shared by every later scan (a
// write rebuilds only the newest chunk's); a chunk makes whole pages, not a
// page of its last write's few rows beside them, so a scan reads no more
// pages than over the flushed rowset; and the memtable counts the bytes of
// the rowsets it built.
func TestMemtableReadsCostWhatFlushedRowsCost(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const pageRows, writeRows, writes = 100, 30, 40
	opts := &Options{Allocator: mem, PageRows: pageRows, DisableAutoCompaction: true,
		MemtableBytes: 1 << 30, MemtableAge: time.Hour, memChunkRows: pageRows}
	tbl := mustCreate(t, t.TempDir(), directDef(), opts)
	defer checkClose(t, tbl)
	ctx := context.Background()
	next := int64(0)
	write := func() {
		t.Helper()
		rows := make([]eventRow, writeRows)
		for i := range rows {
			rows[i] = eventRow{id: next}
			next++
		}
		rec := eventBatch(mem, rows, true)
		mustWrite(t, tbl, rec)
		rec.Release()
	}
	for range writes {
		write()
	}
	scan := func() query.Counters {
		t.Helper()
		r, err := tbl.Scan(ctx, query.Request{Now: early, Columns: []string{"id"}})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release()
		var n int64
		for r.Next() {
			n += r.RecordBatch().NumRows()
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		if n != next {
			t.Fatalf("scan gave %d rows, want %d", n, next)
		}
		return r.(*query.Scan).Counters
	}
	tbl.mu.Lock()
	mt := tbl.mem.active
	tbl.mu.Unlock()
	state := func() (builds, built, bytes int64) {
		mt.mu.Lock()
		defer mt.mu.Unlock()
		return mt.builds, mt.built, mt.bytes
	}
	memBytes := func() int64 {
		t.Helper()
		st, err := tbl.Stats(ctx, early)
		if err != nil {
			t.Fatal(err)
		}
		return st.MemtableBytes
	}
	// Chunks fill past pageRows rows by their last write: 4 writes, 120
	// rows, each.
	const chunks = writes * writeRows / 120
	var memPages int64
	for i := range 3 {
		c := scan()
		memPages = c.PagesRead
		if builds, _, _ := state(); builds != chunks {
			t.Fatalf("scan %d: %d chunk rowsets built, want %d, each once", i, builds, chunks)
		}
	}
	// Flushed, the same rows make ceil(1200/100) pages.
	if flushed := int64(writes*writeRows+pageRows-1) / pageRows; memPages != chunks || memPages > flushed {
		t.Errorf("a scan over %d chunks of 120 rows read %d pages, want one a chunk, at most the %d of their flush", chunks, memPages, flushed)
	}
	_, built, bytes := state()
	if built <= 0 || memBytes() != bytes+built {
		t.Errorf("memtable bytes %d, want its writes' %d and its rowsets' %d", memBytes(), bytes, built)
	}
	// A write after a full chunk starts a chunk, one more after it grows
	// that one: each read after a write builds the newest chunk alone.
	for i := range 3 {
		write()
		for range 3 {
			scan()
		}
		if builds, _, _ := state(); builds != chunks+int64(i)+1 {
			t.Fatalf("write %d after the first scans: %d chunk rowsets built, want %d", i, builds, chunks+i+1)
		}
	}
	mustFlush(t, ctx, tbl)
	if b := memBytes(); b != 0 {
		t.Errorf("memtable bytes %d after the flush", b)
	}
}

// TestMemtableReadAfterEachWrite: a read after every small write sees
// exactly the rows a reference model holds, for every data model (keys
// rewritten across the pieces of a growing chunk), and builds about the
// rows of the write it follows: the chunk's pieces before it are kept, so
// a hundred reads of a chunk growing by ten rows build a few times its
// rows, not the fifty times a rebuild of the whole chunk per read costs;
// and a read never sees more than a few in-memory rowsets per chunk.
func TestMemtableReadAfterEachWrite(t *testing.T) {
	for _, model := range allModels() {
		t.Run(modelName(model), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			const writes, each, keys = 100, 10, 230
			opts := &Options{Allocator: mem, PageRows: 64, DisableAutoCompaction: true,
				MemtableBytes: 1 << 30, MemtableAge: time.Hour, Clock: func() time.Time { return base },
				memChunkRows: writes * each}
			tbl := mustCreate(t, t.TempDir(), modelDef(model, false), opts)
			defer checkClose(t, tbl)
			ctx := context.Background()
			ref := &refModel{unique: model.IsUnique(), keys: map[int64]modelRow{}}
			rowsets := 0
			for w := range writes {
				rows := make([]modelRow, each)
				for i := range rows {
					rows[i] = modelRow{id: int64(w*each+i*7) % keys, v: int64(w)}
				}
				writeRef(t, ctx, tbl, mem, ref, rows)
				if got, want := tableVisible(t, tbl, base.UnixMicro()), ref.visible(base.UnixMicro()); !slices.Equal(got, want) {
					t.Fatalf("after write %d: %d rows visible, want %d", w, len(got), len(want))
				}
				v, err := tbl.pin()
				if err != nil {
					t.Fatal(err)
				}
				snap, err := v.snapshot(ctx, mem)
				v.unref()
				if err != nil {
					t.Fatal(err)
				}
				rowsets = max(rowsets, len(snap.Rowsets))
				snap.Release()
			}
			tbl.mu.Lock()
			mt := tbl.mem.active
			tbl.mu.Unlock()
			mt.mu.Lock()
			built := mt.builtRows
			mt.mu.Unlock()
			if total := int64(writes * each); built > 8*total {
				t.Errorf("reads after each of %d writes built %d rows, want at most 8 times their %d", writes, built, total)
			}
			if rowsets > 8 {
				t.Errorf("a read saw %d in-memory rowsets of one chunk", rowsets)
			}
			t.Logf("%d rows built, at most %d rowsets", built, rowsets)
		})
	}
}

// TestMemtableMORReadMergesOnlyNewKeys: on a merge-on-read table, a read
// after a small write hides what the memtable rows supersede without
// merging the keys of the table's rowsets again: the rowsets' own merge is
// carried from version to version, and memtable keys beyond their key
// ranges read none of their pages. The reads still see what the reference
// model holds.
func TestMemtableMORReadMergesOnlyNewKeys(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var reads atomic.Int64
	fsys := vfs.NewErrorFS(vfs.NewMemFS(), vfs.InjectorFunc(func(op vfs.Op, path string) error {
		if op == vfs.OpRead && strings.HasSuffix(path, ".seg") {
			reads.Add(1)
		}
		return nil
	}))
	opts := &Options{FS: fsys, Allocator: mem, PageRows: 64, DisableAutoCompaction: true, SmallWriteRows: 100,
		MemtableBytes: 1 << 30, MemtableAge: time.Hour, Clock: func() time.Time { return base }, memChunkRows: 50}
	tbl := mustCreate(t, "/t", modelDef(schema.UniqueMOR, false), opts)
	defer checkClose(t, tbl)
	ctx := context.Background()
	ref := &refModel{unique: true, keys: map[int64]modelRow{}}
	// Two rowsets, the second superseding half the first.
	writeRef(t, ctx, tbl, mem, ref, modelRows(span(0, 2000), 0))
	writeRef(t, ctx, tbl, mem, ref, modelRows(span(1000, 3000), 1))
	for w := range 20 {
		// Keys past the rowsets', some rewritten by the next writes.
		rows := modelRows(span(int64(5000+w*7), int64(5000+w*7+10)), int64(2+w))
		writeRef(t, ctx, tbl, mem, ref, rows)
		v, err := tbl.pin()
		if err != nil {
			t.Fatal(err)
		}
		before := reads.Load()
		snap, err := v.snapshot(ctx, mem)
		v.unref()
		if err != nil {
			t.Fatal(err)
		}
		snap.Release()
		// The invariants build checks every carried merge against a full
		// merge of the rowsets, which reads their pages.
		if n := reads.Load() - before; n > 0 && w > 0 && !rowset.Invariants {
			t.Fatalf("write %d: a read's key merge read %d pages of the rowsets", w, n)
		}
		if got, want := tableVisible(t, tbl, base.UnixMicro()), ref.visible(base.UnixMicro()); !slices.Equal(got, want) {
			t.Fatalf("after write %d: %d rows visible, want %d", w, len(got), len(want))
		}
	}
}

// TestMemtableConcurrentReadsSeeEveryKeyOnce: readers racing writers that
// rewrite a fixed set of keys through memtables (chunks filling, pieces
// building and merging, two readers building the same piece at once) see
// every key exactly once on both unique models, and never fewer rows than
// before on a duplicate table.
func TestMemtableConcurrentReadsSeeEveryKeyOnce(t *testing.T) {
	for _, model := range allModels() {
		t.Run(modelName(model), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			const keys, writers, writes, each = 300, 4, 40, 5
			opts := &Options{Allocator: mem, PageRows: 16, DisableAutoCompaction: true,
				MemtableBytes: 1 << 30, MemtableAge: time.Hour, Clock: func() time.Time { return base }, memChunkRows: 40}
			tbl := mustCreate(t, t.TempDir(), modelDef(model, false), opts)
			defer checkClose(t, tbl)
			ctx := context.Background()
			write := func(rows []modelRow) error {
				rec := modelBatch(mem, rows, false)
				defer rec.Release()
				return tbl.Write(ctx, rec)
			}
			for k := int64(0); k < keys; k += 20 {
				if err := write(modelRows(span(k, k+20), 0)); err != nil {
					t.Fatal(err)
				}
			}
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			var wg sync.WaitGroup
			var done atomic.Bool
			errs := make(chan error, writers+2)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(seed, uint64(w)))
					for i := range writes {
						ids := make([]int64, each)
						for j := range ids {
							ids[j] = rng.Int64N(keys)
						}
						slices.Sort(ids)
						if err := write(modelRows(slices.Compact(ids), int64(i+1))); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			var readers sync.WaitGroup
			for range 2 {
				readers.Add(1)
				go func() {
					defer readers.Done()
					last := int64(0)
					for !done.Load() {
						n, err := tbl.Count(ctx, base, nil)
						if err == nil && model.IsUnique() && n != keys {
							err = fmt.Errorf("a read saw %d rows of %d keys", n, keys)
						}
						if err == nil && !model.IsUnique() && n < last {
							err = fmt.Errorf("a read saw %d rows after %d", n, last)
						}
						if err != nil {
							errs <- err
							return
						}
						last = n
					}
				}()
			}
			wg.Wait()
			done.Store(true)
			readers.Wait()
			close(errs)
			for err := range errs {
				t.Fatalf("seed %d: %v", seed, err)
			}
		})
	}
}

// TestLoggedWriteAfterClose: a small write into a closed table fails with
// ErrClosed and a write into a table open read-only with ErrNotSupported,
// whichever path it takes.
func TestLoggedWriteAfterClose(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(t.TempDir(), "t")
	tbl := mustCreate(t, dir, modelDef(schema.Duplicate, false), &Options{Allocator: mem})
	rec := modelBatch(mem, []modelRow{{id: 1, v: 1}}, false)
	defer rec.Release()
	if err := tbl.Write(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	checkClose(t, tbl)
	if err := tbl.Write(t.Context(), rec); !errors.Is(err, rowttl.ErrClosed) {
		t.Fatalf("write after close: %v, want ErrClosed", err)
	}
	ro, err := Open(dir, &Options{Allocator: mem, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer checkClose(t, ro)
	if err := ro.Write(t.Context(), rec); !errors.Is(err, rowttl.ErrNotSupported) {
		t.Fatalf("write into a read-only table: %v, want ErrNotSupported", err)
	}
}

// TestMemtableBatchListGrowth: the list of a memtable's writes grows by
// doubling, so that a memtable of one-row writes allocates and copies
// about twice the list's final size, not the five times append's quarter
// steps take (memory the collector must scan, on every write's account).
func TestMemtableBatchListGrowth(t *testing.T) {
	mem := memory.NewGoAllocator()
	def := modelDef(schema.Duplicate, false)
	phys := physicalSchema(def, ttlcol.Policy{Mode: ttlcol.DirectMode})
	var nums atomic.Uint64
	mt := newMemtable(1, def, phys, mem, vfs.NewMemFS(), &nums, 16, 1<<30, time.Now())
	mt.ref()
	defer mt.unref()
	rec := modelBatch(mem, modelRowsFor(0, 1, 0, 0, false), false)
	defer rec.Release()
	const n = 100_000
	grown, last := 0, 0
	for i := range n {
		rec.Retain()
		mt.add(rec, int64(i+1), uint64(i+1), 1)
		if c := cap(mt.batches); c != last {
			grown++
			last = c
		}
	}
	// 64, 128, ... 131072.
	if limit := 12; grown > limit {
		t.Errorf("the list of %d writes grew %d times, want at most %d", n, grown, limit)
	}
}
