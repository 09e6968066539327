package table

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/vfs"
)

// The fault tests run one operation with the Nth file-system operation
// failing, for N = 1, 2, … until the operation runs without reaching an
// injection. After each failure:
//
//   - the error wraps the injected one (an I/O error is never reported as
//     corruption, nor swallowed);
//   - the open table still shows exactly the acknowledged data, and accepts
//     a further write once the fault is gone (after a failed manifest
//     append it recovers in place, showing the failed operation entirely or
//     not at all, and from then on only that state will do);
//   - reopened as it is, and after a simulated power cut (strict, and a few
//     random ones), the table opens, passes Check, shows every acknowledged
//     write, and shows the failed operation entirely or not at all.

// faultMode is one flavour of injected failure.
type faultMode struct {
	name string
	// errno is what the failure imitates (nil: a plain injected error).
	errno error
	// sticky makes every operation after the first failure fail too,
	// clean-up included (a disk that stays full).
	sticky bool
	// partial makes a failed write store half its bytes.
	partial bool
	// kinds are the operations counted and failed; 0 means vfs.WriteOps.
	kinds vfs.Op
	// some limits the mode to a few cases, to keep the run short.
	some bool
}

var faultModes = []faultMode{
	{name: "eio"},
	{name: "enospc", errno: syscall.ENOSPC, sticky: true, partial: true},
	{name: "read-eio", errno: syscall.EIO, kinds: vfs.ReadOps, some: true},
}

// someCases are the cases the modes marked some run on.
var someCases = map[string]bool{"Write/MOW": true, "DeleteWhere/DUP": true, "CompactFull/MOR": true}

// knownReadErrorAsCorruption tolerates a known mislabelling: a read error
// of a segment page (EIO) comes back from segment.Reader.ReadPage wrapped
// as ErrCorruption, because pageError marks every cause as corruption. Set
// it to false once ReadPage passes I/O errors through unmarked.
const knownReadErrorAsCorruption = false

// ioErrorAsCorruption reports that known mislabelling.
func ioErrorAsCorruption(err error) bool {
	return knownReadErrorAsCorruption && errors.Is(err, vfs.ErrInjected) && errors.Is(err, rowttl.ErrCorruption) &&
		strings.Contains(err.Error(), "segment ") && strings.Contains(err.Error(), "read at")
}

// faultCase is one operation under injection.
type faultCase struct {
	name   string
	model  schema.Model
	source bool
	// setup fills the table (no faults) and the reference model.
	setup func(t *testing.T, tbl *Table, mem memory.Allocator, ref *refModel)
	// op is the operation under test; apply is its effect on the model.
	op    func(tbl *Table, mem memory.Allocator) error
	apply func(ref *refModel)
}

// standardSetup writes three batches, deletes some rows and compacts once,
// so that the table has several rowsets, delete marks (or tombstones) and
// a compaction output.
func standardSetup(t *testing.T, tbl *Table, mem memory.Allocator, ref *refModel) {
	t.Helper()
	keyMod := 0
	if ref.unique {
		keyMod = 50
	}
	for i, n := range []int{30, 30, 20} {
		if err := writeModelRows(tbl, mem, ref, modelRowsFor(i*30, n, keyMod, int64(i*100), ref.source)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tbl.DeleteWhere(context.Background(), Matcher{Filter: query.Compare("v", query.Lt, int64(5))}, WriteOptions{Now: base}); err != nil {
		t.Fatal(err)
	}
	ref.deleteWhere(base.UnixMicro(), 5)
	if err := tbl.CompactAt(context.Background(), Cumulative, base); err != nil {
		t.Fatal(err)
	}
}

func faultCases() []faultCase {
	var cases []faultCase
	for _, model := range []schema.Model{schema.Duplicate, schema.UniqueMOW, schema.UniqueMOR} {
		keyMod := 0
		if model.IsUnique() {
			keyMod = 50 // the new rows overwrite some keys
		}
		rows := modelRowsFor(70, 40, keyMod, 1000, false)
		cases = append(cases,
			faultCase{
				name: "Write/" + modelName(model), model: model, setup: standardSetup,
				op: func(tbl *Table, mem memory.Allocator) error {
					rec := modelBatch(mem, rows, false)
					defer rec.Release()
					return tbl.Write(context.Background(), rec)
				},
				apply: func(ref *refModel) { ref.write(rows) },
			},
			faultCase{
				name: "DeleteWhere/" + modelName(model), model: model, setup: standardSetup,
				op: func(tbl *Table, mem memory.Allocator) error {
					_, err := tbl.DeleteWhere(context.Background(), Matcher{Filter: query.Compare("v", query.Lt, int64(150))}, WriteOptions{Now: base})
					return err
				},
				apply: func(ref *refModel) { ref.deleteWhere(base.UnixMicro(), 150) },
			},
			faultCase{
				name: "CompactFull/" + modelName(model), model: model, setup: standardSetup,
				op: func(tbl *Table, mem memory.Allocator) error {
					return tbl.CompactAt(context.Background(), Full, base)
				},
				apply: func(ref *refModel) {},
			},
		)
	}
	cases = append(cases, faultCase{
		name: "SetProperties/DUP-source", model: schema.Duplicate, source: true, setup: standardSetup,
		op: func(tbl *Table, mem memory.Allocator) error {
			return tbl.SetProperties(context.Background(), map[string]string{PropTTL: "7 hours"})
		},
		apply: func(ref *refModel) { ref.retention = 7 * 3600e6 },
	})
	return cases
}

func TestFaultInjection(t *testing.T) {
	for _, c := range faultCases() {
		for _, mode := range faultModes {
			if mode.some && !someCases[c.name] {
				continue
			}
			t.Run(c.name+"/"+mode.name, func(t *testing.T) {
				t.Parallel()
				runFaultCase(t, c, mode, 1, false)
			})
		}
	}
}

// injector makes the injector of one run.
func (m faultMode) injector(n int, kinds vfs.Op) *vfs.CountInjector {
	inj := vfs.FailNth(n, kinds)
	if m.errno != nil {
		inj.WithErr(m.errno)
	}
	if m.sticky {
		inj.Sticky()
	}
	return inj
}

// runFaultCase runs c under mode; soak adds a random crash at every
// injection point (else at every third) and seeds it with seed.
func runFaultCase(t *testing.T, c faultCase, mode faultMode, seed uint64, soak bool) {
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	const dir = "/t"
	baseFS := vfs.NewMemFS()
	tbl := mustCreate(t, dir, modelDef(c.model, c.source), reliabilityOpts(baseFS, mem))
	pre := newRef(c.model, c.source)
	c.setup(t, tbl, mem, pre)
	checkClose(t, tbl)
	post := pre.clone()
	c.apply(post)
	follow := modelRowsFor(500, 7, 0, 5000, c.source)
	rng := rand.New(rand.NewPCG(seed, uint64(len(c.name))))

	for n := 1; ; n++ {
		fsys := baseFS.Clone()
		inj := mode.injector(n, mode.kinds)
		inj.SetArmed(false)
		efs := vfs.NewErrorFS(fsys, inj)
		efs.PartialWrites = mode.partial
		tbl, err := Open(dir, reliabilityOpts(efs, mem))
		if err != nil {
			t.Fatalf("n=%d: open before the operation: %v", n, err)
		}
		inj.SetArmed(true)
		opErr := c.op(tbl, mem)
		inj.SetArmed(false)
		fired := inj.Fired()
		where := fmt.Sprintf("n=%d (failed %v)", n, fired)

		// What the open table must show now, and what a reopen may show.
		var now *refModel
		var may []*refModel
		switch {
		case opErr == nil:
			now, may = post.clone(), []*refModel{post.clone()}
		case len(fired) == 0:
			t.Fatalf("%s: failed without an injection: %v", where, opErr)
		default:
			if !errors.Is(opErr, vfs.ErrInjected) {
				t.Fatalf("%s: error %v does not wrap the injected failure", where, opErr)
			}
			if errors.Is(opErr, rowttl.ErrCorruption) && !ioErrorAsCorruption(opErr) {
				t.Fatalf("%s: an I/O error reported as corruption: %v", where, opErr)
			}
			now, may = pre.clone(), []*refModel{pre.clone(), post.clone()}
		}
		expectState(t, where+": open table after the operation", tbl, []*refModel{now})

		// A further write, with the fault gone (the disk has space again),
		// is accepted: a table whose manifest append failed recovers in
		// place, settling the failed operation one way or the other. The
		// write is acknowledged, so from now on only the state it shows
		// will do.
		ferr := writeModelRows(tbl, mem, now, follow)
		if ferr != nil {
			t.Fatalf("%s: further write: %v", where, ferr)
		}
		for _, m := range may {
			m.write(follow)
		}
		shown, err := stateOf(tbl)
		if err != nil {
			t.Fatalf("%s: scan after a further write: %v", where, err)
		}
		expectState(t, where+": after a further write", tbl, may)
		for _, m := range may {
			if refState(m) == shown {
				may = []*refModel{m}
				break
			}
		}
		if err := tbl.Check(); err != nil {
			t.Fatalf("%s: check: %v", where, err)
		}

		// The power goes now: strictly, and in a few random ways.
		crashes := []*vfs.MemFS{fsys.CrashClone(nil)}
		if n%3 == 0 || soak {
			crashes = append(crashes, fsys.CrashClone(rng))
		}
		if err := tbl.Close(); err != nil {
			t.Fatalf("%s: close: %v", where, err)
		}
		reopenAndExpect(t, where+": reopened", fsys, mem, may, true)
		for i, cfs := range crashes {
			reopenAndExpect(t, fmt.Sprintf("%s: after crash %d", where, i), cfs, mem, may, false)
		}
		if len(fired) == 0 {
			if n == 1 {
				t.Fatalf("the operation made no file-system operation")
			}
			t.Logf("%d injection points", n-1)
			return
		}
	}
}

// expectState fails unless tbl shows what one of the models shows.
func expectState(t *testing.T, where string, tbl *Table, want []*refModel) {
	t.Helper()
	got, err := stateOf(tbl)
	if err != nil {
		t.Fatalf("%s: scan: %v", where, err)
	}
	var alts []string
	for _, m := range want {
		s := refState(m)
		if got == s {
			return
		}
		alts = append(alts, s)
	}
	t.Fatalf("%s: table shows\n%s\nwant one of\n%s", where, got, strings.Join(alts, "or\n"))
}

// reopenAndExpect opens the table on fsys without faults and checks it.
func reopenAndExpect(t *testing.T, where string, fsys *vfs.MemFS, mem memory.Allocator, may []*refModel, probe bool) {
	t.Helper()
	tbl, err := Open("/t", reliabilityOpts(fsys, mem))
	if err != nil {
		t.Fatalf("%s: open: %v\nfiles:\n%s", where, err, fsys)
	}
	defer tbl.Close()
	if err := tbl.Check(); err != nil {
		t.Fatalf("%s: check: %v", where, err)
	}
	expectState(t, where, tbl, may)
	if !probe {
		return
	}
	// The reopened table takes writes.
	if err := writeModelRows(tbl, mem, may[0].clone(), modelRowsFor(900, 3, 0, 9000, may[0].source)); err != nil {
		t.Fatalf("%s: write after reopen: %v", where, err)
	}
}

// TestFaultInjectionCreate fails each step of Create: the error is clean,
// and afterwards there is either no table (Create can be retried) or an
// empty, working one — also after a crash.
func TestFaultInjectionCreate(t *testing.T) {
	for _, mode := range faultModes {
		if mode.some {
			continue // these count every operation already
		}
		t.Run(mode.name, func(t *testing.T) {
			mem := newCountingAllocator()
			defer mem.AssertSize(t, 0)
			for n := 1; ; n++ {
				fsys := vfs.NewMemFS()
				inj := mode.injector(n, vfs.AllOps)
				efs := vfs.NewErrorFS(fsys, inj)
				efs.PartialWrites = mode.partial
				tbl, err := Create("/t", modelDef(schema.UniqueMOW, false), reliabilityOpts(efs, mem))
				inj.SetArmed(false)
				fired := inj.Fired()
				where := fmt.Sprintf("n=%d (failed %v)", n, fired)
				if err == nil {
					if err := writeModelRows(tbl, mem, newRef(schema.UniqueMOW, false), modelRowsFor(0, 5, 0, 0, false)); err != nil {
						t.Fatalf("%s: write after create: %v", where, err)
					}
					checkClose(t, tbl)
				} else if !errors.Is(err, vfs.ErrInjected) {
					t.Fatalf("%s: error %v does not wrap the injected failure", where, err)
				}
				for i, c := range []*vfs.MemFS{fsys, fsys.CrashClone(nil)} {
					checkCreateOutcome(t, fmt.Sprintf("%s, fs %d", where, i), c, mem, err == nil && i == 0)
				}
				if len(fired) == 0 {
					return
				}
			}
		})
	}
}

// checkCreateOutcome checks what a (failed) Create left: a table that opens
// (holding nothing, or the acknowledged rows when written), or no table, in
// which case Create works.
func checkCreateOutcome(t *testing.T, where string, fsys *vfs.MemFS, mem memory.Allocator, wrote bool) {
	t.Helper()
	tbl, err := Open("/t", reliabilityOpts(fsys, mem))
	if errors.Is(err, rowttl.ErrNotFound) {
		if wrote {
			t.Fatalf("%s: an acknowledged table is gone", where)
		}
		tbl, err = Create("/t", modelDef(schema.UniqueMOW, false), reliabilityOpts(fsys, mem))
		if err != nil {
			t.Fatalf("%s: create again: %v", where, err)
		}
	} else if err != nil {
		t.Fatalf("%s: open: %v\n%s", where, err, fsys)
	}
	defer tbl.Close()
	empty := newRef(schema.UniqueMOW, false)
	written := empty.clone()
	written.write(modelRowsFor(0, 5, 0, 0, false))
	if wrote {
		expectState(t, where, tbl, []*refModel{written})
	} else {
		expectState(t, where, tbl, []*refModel{empty, written})
	}
	if err := tbl.Check(); err != nil {
		t.Fatalf("%s: check: %v", where, err)
	}
}

// TestCreateKeepsATableItCannotStat: a Create whose look for an existing
// table fails for another reason than absence must not go on and replace
// that table.
func TestCreateKeepsATableItCannotStat(t *testing.T) {
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	fsys := vfs.NewMemFS()
	tbl := mustCreate(t, "/t", modelDef(schema.Duplicate, false), reliabilityOpts(fsys, mem))
	ref := newRef(schema.Duplicate, false)
	if err := writeModelRows(tbl, mem, ref, modelRowsFor(0, 10, 0, 0, false)); err != nil {
		t.Fatal(err)
	}
	checkClose(t, tbl)
	efs := vfs.NewErrorFS(fsys, vfs.FailNth(1, vfs.OpStat).WithErr(syscall.EIO))
	if tbl, err := Create("/t", modelDef(schema.Duplicate, false), reliabilityOpts(efs, mem)); err == nil {
		tbl.Close()
		t.Fatal("Create went on after failing to look for an existing table")
	} else if !errors.Is(err, syscall.EIO) {
		t.Fatalf("Create: %v", err)
	}
	tbl, err := Open("/t", reliabilityOpts(fsys, mem))
	if err != nil {
		t.Fatal(err)
	}
	expectState(t, "after the failed Create", tbl, []*refModel{ref})
	checkClose(t, tbl)
}

// TestFaultInjectionOpen fails each file-system operation of Open — reads
// included — on a table that needs recovery work: a torn manifest tail to
// cut, orphans to delete, a manifest to rewrite. A failed Open reports the
// injected error (never corruption); a later Open, with or without a crash
// in between, finds every acknowledged row.
func TestFaultInjectionOpen(t *testing.T) {
	for _, mode := range faultModes {
		if mode.some {
			continue // these count every operation already
		}
		t.Run(mode.name, func(t *testing.T) {
			mem := newCountingAllocator()
			defer mem.AssertSize(t, 0)
			baseFS := vfs.NewMemFS()
			opts := reliabilityOpts(baseFS, mem)
			tbl := mustCreate(t, "/t", modelDef(schema.UniqueMOW, false), opts)
			ref := newRef(schema.UniqueMOW, false)
			standardSetup(t, tbl, mem, ref)
			checkClose(t, tbl)
			// A torn tail and orphans, as a crash in the middle of a write
			// leaves them.
			appendBytes(t, baseFS, "/t/"+manifestName(1), []byte{9, 0, 0})
			writeBytes(t, baseFS, "/t/000099.seg", []byte("orphan"))
			writeBytes(t, baseFS, "/t/000098.seg.tmp", []byte("orphan"))
			for n := 1; ; n++ {
				fsys := baseFS.Clone()
				inj := mode.injector(n, vfs.AllOps)
				efs := vfs.NewErrorFS(fsys, inj)
				efs.PartialWrites = mode.partial
				o := reliabilityOpts(efs, mem)
				o.ManifestRotateBytes = 1 // rewrite the manifest on open
				tbl, err := Open("/t", o)
				inj.SetArmed(false)
				fired := inj.Fired()
				where := fmt.Sprintf("n=%d (failed %v)", n, fired)
				if err != nil {
					if !errors.Is(err, vfs.ErrInjected) || errors.Is(err, rowttl.ErrCorruption) {
						t.Fatalf("%s: open: %v", where, err)
					}
				} else {
					expectState(t, where+": opened", tbl, []*refModel{ref})
					if err := tbl.Check(); err != nil {
						t.Fatalf("%s: check: %v", where, err)
					}
					tbl.Close()
				}
				crash := fsys.CrashClone(nil)
				reopenAndExpect(t, where+": reopened", fsys, mem, []*refModel{ref}, true)
				reopenAndExpect(t, where+": after a crash", crash, mem, []*refModel{ref}, false)
				if len(fired) == 0 {
					t.Logf("%d injection points", n-1)
					return
				}
			}
		})
	}
}

func writeBytes(t *testing.T, fsys vfs.FS, name string, data []byte) {
	t.Helper()
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SyncDir("/t"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}

func appendBytes(t *testing.T, fsys vfs.FS, name string, data []byte) {
	t.Helper()
	f, err := fsys.OpenAppend(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestFailedManifestSyncKeepsFiles: when the sync of a manifest record
// fails, the record may be durable after all. The files it lists must stay
// (a reopen that finds the record finds its files), and a reopen that finds
// the record must make it durable before relying on it (before deleting the
// files it made obsolete), or a crash after the reopen would bring back a
// state whose files are gone. Settled in place instead — by the next write,
// without a reopen — the record read back from the file is adopted and made
// durable in a fresh manifest: the table, reopened or crashed, shows it and
// the write that settled it.
func TestFailedManifestSyncKeepsFiles(t *testing.T) {
	for _, model := range []schema.Model{schema.Duplicate, schema.UniqueMOW, schema.UniqueMOR} {
		for _, compact := range []bool{false, true} {
			for _, inPlace := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/compact=%v/in-place=%v", modelName(model), compact, inPlace), func(t *testing.T) {
					mem := newCountingAllocator()
					defer mem.AssertSize(t, 0)
					fsys := vfs.NewMemFS()
					var failSync atomic.Bool
					efs := vfs.NewErrorFS(fsys, vfs.InjectorFunc(func(op vfs.Op, path string) error {
						if failSync.Load() && op == vfs.OpSync && strings.Contains(path, "MANIFEST") {
							return &vfs.InjectedError{Op: op, Path: path, Err: syscall.EIO}
						}
						return nil
					}))
					tbl := mustCreate(t, "/t", modelDef(model, false), reliabilityOpts(efs, mem))
					ref := newRef(model, false)
					for i := 0; i < 3; i++ {
						if err := writeModelRows(tbl, mem, ref, modelRowsFor(i*30, 30, 0, int64(i*100), false)); err != nil {
							t.Fatal(err)
						}
					}
					after := ref.clone()
					failSync.Store(true)
					var err error
					if compact {
						err = tbl.CompactAt(context.Background(), Full, base)
					} else {
						next := modelRowsFor(100, 30, 0, 100, false)
						err = writeModelRows(tbl, mem, newRef(model, false), next)
						after.write(next)
					}
					if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "sync manifest") {
						t.Fatalf("with a failing manifest sync: %v", err)
					}
					expectState(t, "after the failed sync", tbl, []*refModel{ref})
					failSync.Store(false)
					if inPlace {
						if err := writeModelRows(tbl, mem, after, modelRowsFor(0, 1, 0, 0, false)); err != nil {
							t.Fatalf("write after a failed manifest sync: %v", err)
						}
						expectState(t, "recovered in place", tbl, []*refModel{after})
						if err := tbl.Check(); err != nil {
							t.Fatal(err)
						}
						if names, _ := fsys.List("/t"); slices.Contains(names, manifestName(1)) {
							t.Fatalf("the manifest whose sync failed is still there: %v", names)
						}
					}
					if err := tbl.Close(); err != nil {
						t.Fatal(err)
					}
					// The record reached the file (only its sync failed):
					// reopened, it is there, files and all...
					reopenAndExpect(t, "reopened", fsys, mem, []*refModel{after}, false)
					// ... and it stays there through a crash.
					reopenAndExpect(t, "reopened after a crash", fsys.CrashClone(nil), mem, []*refModel{after}, true)
				})
			}
		}
	}
}

// TestFaultSequences runs random operation sequences on one table while
// file-system operations fail at random, with crashes and reopens in
// between (see runFaultSequence). ROWTTL_SOAK runs more of them, and the
// fixed-point cases of TestFaultInjection with random crash states, until
// it runs out.
func TestFaultSequences(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			runFaultSequence(t, seed, 40)
		})
	}
}

func TestFaultInjectionSoak(t *testing.T) {
	d := soakDuration(t)
	if d == 0 {
		t.Skip("set ROWTTL_SOAK=<duration> to soak")
	}
	cases := faultCases()
	deadline := time.Now().Add(d)
	for seed := uint64(100); time.Now().Before(deadline); seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		if seed%2 == 0 {
			t.Run(fmt.Sprintf("seed%d/sequence", seed), func(t *testing.T) {
				runFaultSequence(t, seed, 200)
			})
		} else {
			c := cases[rng.IntN(len(cases))]
			mode := faultModes[rng.IntN(len(faultModes))]
			if mode.some && !someCases[c.name] {
				mode = faultModes[0]
			}
			t.Run(fmt.Sprintf("seed%d/%s/%s", seed, c.name, mode.name), func(t *testing.T) {
				runFaultCase(t, c, mode, seed, true)
			})
		}
		if t.Failed() {
			return
		}
	}
}

// runFaultSequence applies steps random operations (writes, deletes,
// compactions, retention changes, reopens, crashes) to one table, each run
// while file-system operations fail with a random probability. After each
// operation the open table must show the acknowledged data exactly. A
// failed operation whose manifest record may or may not be durable is
// settled by a reopen, with or without a crash, or in place by the next
// write; either must show the data with or without that operation, whole.
// The log of operations is printed on failure.
func runFaultSequence(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 11))
	model := []schema.Model{schema.Duplicate, schema.UniqueMOW, schema.UniqueMOR}[rng.IntN(3)]
	source := rng.IntN(2) == 0
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	var log []string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d, %s, source %v: %s\nops:\n%s", seed, modelName(model), source, fmt.Sprintf(format, args...), strings.Join(log, "\n"))
	}

	var (
		mu       sync.Mutex
		failRate float64
		faultRng = rand.New(rand.NewPCG(seed, 12))
	)
	inject := vfs.InjectorFunc(func(op vfs.Op, path string) error {
		mu.Lock()
		defer mu.Unlock()
		if op&vfs.WriteOps != 0 && failRate > 0 && faultRng.Float64() < failRate {
			return &vfs.InjectedError{Op: op, Path: path, Err: syscall.EIO}
		}
		return nil
	})
	setRate := func(r float64) {
		mu.Lock()
		failRate = r
		mu.Unlock()
	}

	fsys := vfs.NewMemFS()
	tbl, err := Create("/t", modelDef(model, source), reliabilityOpts(vfs.NewErrorFS(fsys, inject), mem))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if tbl != nil {
			tbl.Close()
		}
	}()
	ref := newRef(model, source)
	expect := func(where string, want ...*refModel) *refModel {
		t.Helper()
		got, err := stateOf(tbl)
		if err != nil {
			fail("%s: scan: %v", where, err)
		}
		for _, m := range want {
			if refState(m) == got {
				return m
			}
		}
		fail("%s: table shows\n%s\nwant\n%s", where, got, refState(want[0]))
		return nil
	}
	// reopen closes the table and opens it again, after a crash when
	// crash, on a random crash state when random.
	reopen := func(crash, random bool, may ...*refModel) {
		t.Helper()
		tbl.Close()
		tbl = nil
		if crash {
			var r *rand.Rand
			if random {
				r = rng
			}
			fsys = fsys.CrashClone(r)
		}
		tbl, err = Open("/t", reliabilityOpts(vfs.NewErrorFS(fsys, inject), mem))
		if err != nil {
			fail("reopen (crash %v): %v\n%s", crash, err, fsys)
		}
		if err := tbl.Check(); err != nil {
			fail("check after reopen: %v", err)
		}
		ref = expect(fmt.Sprintf("after reopen (crash %v, random %v)", crash, random), may...).clone()
	}

	nextID := 0
	for step := 0; step < steps; step++ {
		post := ref.clone()
		var op func() error
		var desc string
		switch k := rng.IntN(12); {
		case k < 5:
			keyMod := 0
			if ref.unique {
				keyMod = 60
			}
			rows := modelRowsFor(nextID, 1+rng.IntN(40), keyMod, int64(rng.IntN(1000)), source)
			nextID += len(rows)
			desc = fmt.Sprintf("write %d rows from id %d", len(rows), rows[0].id)
			op = func() error {
				rec := modelBatch(mem, rows, source)
				defer rec.Release()
				return tbl.Write(context.Background(), rec)
			}
			post.write(rows)
		case k < 6:
			lim := int64(rng.IntN(400))
			desc = fmt.Sprintf("delete v < %d", lim)
			op = func() error {
				_, err := tbl.DeleteWhere(context.Background(), Matcher{Filter: query.Compare("v", query.Lt, lim)}, WriteOptions{Now: base})
				return err
			}
			post.deleteWhere(base.UnixMicro(), lim)
		case k < 8:
			kind := []CompactionKind{Cumulative, Base, Full}[rng.IntN(3)]
			desc = "compact " + string(kind)
			op = func() error { return tbl.CompactAt(context.Background(), kind, base) }
		case k < 9 && source && ref.retention > 2*3600e6:
			post.retention -= 3600e6
			secs := post.retention / 1e6
			desc = fmt.Sprintf("retention %ds", secs)
			op = func() error {
				return tbl.SetProperties(context.Background(), map[string]string{PropTTL: fmt.Sprint(secs)})
			}
		case k < 11:
			crash, random := rng.IntN(3) > 0, rng.IntN(2) == 0
			log = append(log, fmt.Sprintf("reopen (crash %v, random %v)", crash, random))
			// Everything acknowledged is durable: no other state will do.
			reopen(crash, random, ref)
			continue
		default:
			continue
		}
		rate := []float64{0, 0.03, 0.1, 0.3}[rng.IntN(4)]
		setRate(rate)
		err := op()
		setRate(0)
		log = append(log, fmt.Sprintf("%s at fail rate %v: %v", desc, rate, err))
		if err == nil {
			ref = post
			expect("after "+desc, ref)
			continue
		}
		if !errors.Is(err, vfs.ErrInjected) || errors.Is(err, rowttl.ErrCorruption) {
			fail("%s: %v", desc, err)
		}
		expect("after failed "+desc, ref)
		tbl.mu.Lock()
		failed := tbl.vs.failed != nil
		tbl.mu.Unlock()
		if failed && rng.IntN(2) == 0 {
			// The record may be durable: the next write settles it in
			// place, and then only what it shows will do.
			rows := modelRowsFor(nextID, 1+rng.IntN(5), 0, int64(rng.IntN(1000)), source)
			nextID += len(rows)
			log = append(log, fmt.Sprintf("settle in place: write %d rows from id %d", len(rows), rows[0].id))
			without := ref.clone()
			if err := writeModelRows(tbl, mem, without, rows); err != nil {
				fail("write after a failed manifest append: %v", err)
			}
			post.write(rows)
			ref = expect("after settling in place", without, post).clone()
		} else if failed {
			// The record may be durable: settle it.
			crash, random := rng.IntN(2) == 0, rng.IntN(2) == 0
			log = append(log, fmt.Sprintf("settle: reopen (crash %v, random %v)", crash, random))
			reopen(crash, random, ref.clone(), post)
		} else if rng.IntN(3) == 0 {
			// Nothing of the operation reached the manifest.
			crash, random := rng.IntN(2) == 0, rng.IntN(2) == 0
			log = append(log, fmt.Sprintf("reopen (crash %v, random %v)", crash, random))
			reopen(crash, random, ref)
		}
	}
	if err := tbl.Check(); err != nil {
		fail("final check: %v", err)
	}
}

// TestDiskFullRecoversInPlace: a manifest write or sync that fails because
// the disk is full fails its operation, naming what failed; while the disk
// stays full every further write fails the same way and reads go on; once
// space is back the next write recovers in place — no reopen — and the
// table, reopened or crashed, shows what it showed then.
func TestDiskFullRecoversInPlace(t *testing.T) {
	for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpSync} {
		t.Run(op.String(), func(t *testing.T) {
			mem := newCountingAllocator()
			defer mem.AssertSize(t, 0)
			fsys := vfs.NewMemFS()
			var full atomic.Bool
			efs := vfs.NewErrorFS(fsys, vfs.InjectorFunc(func(o vfs.Op, path string) error {
				if full.Load() && o == op && strings.Contains(path, "MANIFEST") {
					return &vfs.InjectedError{Op: o, Path: path, Err: syscall.ENOSPC}
				}
				return nil
			}))
			efs.PartialWrites = true
			o := reliabilityOpts(efs, mem)
			o.Logf = func(string, ...any) {}
			tbl := mustCreate(t, "/t", modelDef(schema.UniqueMOW, false), o)
			ref := newRef(schema.UniqueMOW, false)
			if err := writeModelRows(tbl, mem, ref, modelRowsFor(0, 20, 0, 0, false)); err != nil {
				t.Fatal(err)
			}
			what := map[vfs.Op]string{vfs.OpWrite: "write manifest", vfs.OpSync: "sync manifest"}[op]
			full.Store(true)
			failedRows := modelRowsFor(100, 5, 0, 100, false)
			err := writeModelRows(tbl, mem, ref.clone(), failedRows)
			if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), what) {
				t.Fatalf("write on a full disk: %v, want an error naming %q", err, what)
			}
			for i := 0; i < 2; i++ {
				err := writeModelRows(tbl, mem, ref.clone(), modelRowsFor(200, 5, 0, 200, false))
				if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "failed manifest append") || !strings.Contains(err.Error(), what) {
					t.Fatalf("write while the disk stays full: %v", err)
				}
				expectState(t, "while the disk is full", tbl, []*refModel{ref})
			}
			full.Store(false)
			with := ref.clone()
			with.write(failedRows)
			if err := writeModelRows(tbl, mem, ref, modelRowsFor(300, 5, 0, 300, false)); err != nil {
				t.Fatalf("write once space is back: %v", err)
			}
			with.write(modelRowsFor(300, 5, 0, 300, false))
			// A failed write was cut from the file; a failed sync left the
			// record there, and it is adopted.
			want := ref
			if op == vfs.OpSync {
				want = with
			}
			expectState(t, "recovered", tbl, []*refModel{want})
			if err := tbl.Close(); err != nil {
				t.Fatal(err)
			}
			reopenAndExpect(t, "reopened", fsys, mem, []*refModel{want}, false)
			reopenAndExpect(t, "after a crash", fsys.CrashClone(nil), mem, []*refModel{want}, true)
		})
	}
}

// TestBackgroundRecoversInPlace: with background compaction on, a table
// whose manifest sync failed recovers by itself once the disk works again,
// before any further write: `rowttl serve` needs no request to heal.
func TestBackgroundRecoversInPlace(t *testing.T) {
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	fsys := vfs.NewMemFS()
	var full atomic.Bool
	efs := vfs.NewErrorFS(fsys, vfs.InjectorFunc(func(o vfs.Op, path string) error {
		if full.Load() && o == vfs.OpSync && strings.Contains(path, "MANIFEST") {
			return &vfs.InjectedError{Op: o, Path: path, Err: syscall.ENOSPC}
		}
		return nil
	}))
	o := reliabilityOpts(efs, mem)
	o.DisableAutoCompaction = false
	o.CompactionInterval = 5 * time.Millisecond
	o.Logf = func(string, ...any) {}
	tbl := mustCreate(t, "/t", modelDef(schema.Duplicate, false), o)
	defer tbl.Close()
	ref := newRef(schema.Duplicate, false)
	if err := writeModelRows(tbl, mem, ref, modelRowsFor(0, 10, 0, 0, false)); err != nil {
		t.Fatal(err)
	}
	full.Store(true)
	rows := modelRowsFor(100, 10, 0, 0, false)
	if err := writeModelRows(tbl, mem, ref.clone(), rows); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write with a failing manifest sync: %v", err)
	}
	full.Store(false)
	ref.write(rows) // the record reached the file: recovery adopts it
	deadline := time.Now().Add(10 * time.Second)
	for {
		tbl.mu.Lock()
		failed := tbl.vs.failed
		tbl.mu.Unlock()
		if failed == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failed after 10s: %v", failed)
		}
		time.Sleep(5 * time.Millisecond)
	}
	expectState(t, "recovered in the background", tbl, []*refModel{ref})
}

// TestFaultInjectionPublished fails each file-system operation of the two
// places that record in CURRENT the last published record outside of a
// manifest rewrite: Close, and the Open of a table that crashed since (so
// CURRENT is behind its manifest). A failure is the injected error, never
// corruption, and a later open — after a crash too — shows every
// acknowledged row and reports nothing lost.
func TestFaultInjectionPublished(t *testing.T) {
	for _, step := range []string{"close", "open"} {
		t.Run(step, func(t *testing.T) {
			mem := newCountingAllocator()
			defer mem.AssertSize(t, 0)
			baseFS := vfs.NewMemFS()
			tbl := mustCreate(t, "/t", modelDef(schema.UniqueMOW, false), reliabilityOpts(baseFS, mem))
			ref := newRef(schema.UniqueMOW, false)
			standardSetup(t, tbl, mem, ref)
			crashed := baseFS.CrashClone(nil) // CURRENT as Create wrote it
			if err := tbl.Close(); err != nil {
				t.Fatal(err)
			}
			for n := 1; ; n++ {
				fsys := crashed.Clone()
				inj := vfs.FailNth(n, vfs.AllOps).WithErr(syscall.ENOSPC).Sticky()
				inj.SetArmed(step == "open")
				efs := vfs.NewErrorFS(fsys, inj)
				efs.PartialWrites = true
				o := reliabilityOpts(efs, mem)
				o.Logf = func(string, ...any) {}
				tbl, err := Open("/t", o)
				if step == "close" {
					if err != nil {
						t.Fatal(err)
					}
					// Something to record: one more write.
					if err := writeModelRows(tbl, mem, ref.clone(), modelRowsFor(0, 0, 0, 0, false)); err != nil {
						t.Fatal(err)
					}
					inj.SetArmed(true)
					err = tbl.Close()
				} else if err == nil {
					tbl.Close()
				}
				inj.SetArmed(false)
				fired := inj.Fired()
				where := fmt.Sprintf("%s, n=%d (failed %v)", step, n, fired)
				if err != nil && (!errors.Is(err, vfs.ErrInjected) || errors.Is(err, rowttl.ErrCorruption)) {
					t.Fatalf("%s: %v", where, err)
				}
				if len(fired) == 0 && err != nil {
					t.Fatalf("%s: failed without an injection: %v", where, err)
				}
				reopenAndExpect(t, where+": reopened", fsys, mem, []*refModel{ref}, false)
				reopenAndExpect(t, where+": after a crash", fsys.CrashClone(nil), mem, []*refModel{ref}, true)
				if len(fired) == 0 {
					t.Logf("%d injection points", n-1)
					return
				}
			}
		})
	}
}
