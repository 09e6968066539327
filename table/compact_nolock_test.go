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

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/vfs"
)

// blockRewrite makes the next compaction of tbl stop after its rewrite,
// before its install, until release is called; entered is closed when it
// stops. Later compactions pass.
func blockRewrite(tbl *Table) (entered <-chan struct{}, release func()) {
	in, out := make(chan struct{}), make(chan struct{})
	var once sync.Once
	tbl.testHooks.rewritten = func() {
		first := false
		once.Do(func() { first = true })
		if first {
			close(in)
			<-out
		}
	}
	var rel sync.Once
	return in, func() { rel.Do(func() { close(out) }) }
}

func modelRows(ids []int64, v int64) []modelRow {
	rows := make([]modelRow, len(ids))
	for i, id := range ids {
		rows[i] = modelRow{id: id, v: v}
	}
	return rows
}

func span(lo, hi int64) []int64 {
	var ids []int64
	for i := lo; i < hi; i++ {
		ids = append(ids, i)
	}
	return ids
}

func writeRef(t *testing.T, ctx context.Context, tbl *Table, mem memory.Allocator, ref *refModel, rows []modelRow) {
	t.Helper()
	rec := modelBatch(mem, rows, false)
	defer rec.Release()
	if err := tbl.Write(ctx, rec); err != nil {
		t.Fatal(err)
	}
	ref.write(rows)
}

func setV(mem memory.Allocator, nv int64) func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	return func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
		cols := append([]arrow.Array{}, rec.Columns()...)
		a := schema.ConstArray(mem, arrow.PrimitiveTypes.Int64, schema.IntVal(nv), int(rec.NumRows()))
		defer a.Release()
		cols[1] = a
		return array.NewRecordBatch(rec.Schema(), cols, rec.NumRows()), nil
	}
}

func allModels() []schema.Model {
	return []schema.Model{schema.Duplicate, schema.UniqueMOW, schema.UniqueMOR}
}

// TestCompactionDoesNotBlockWriters: while a full compaction's rewrite is
// stopped, writes, DELETEs, UPDATEs and loads complete; once it installs,
// the table holds exactly what they left, and so after a reopen.
func TestCompactionDoesNotBlockWriters(t *testing.T) {
	for _, model := range allModels() {
		for _, inputs := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/inputs=%d", modelName(model), inputs), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				dir := filepath.Join(t.TempDir(), "t")
				opts := &Options{Allocator: mem, PageRows: 8, DisableAutoCompaction: true, Clock: func() time.Time { return base }}
				tbl := mustCreate(t, dir, modelDef(model, false), opts)
				ref := &refModel{unique: model.IsUnique(), keys: map[int64]modelRow{}}
				ctx := context.Background()
				per := int64(100 / inputs)
				for i := int64(0); i < int64(inputs); i++ {
					writeRef(t, ctx, tbl, mem, ref, modelRows(span(i*per, (i+1)*per), i))
					mustFlush(t, ctx, tbl) // one rowset per write: the compaction's inputs
				}
				entered, release := blockRewrite(tbl)
				defer release()
				done := make(chan error, 1)
				go func() { done <- tbl.CompactAt(ctx, Full, base) }()
				<-entered

				// Every writer finishes while the rewrite is stopped; a
				// compaction holding the writer lock would make them time out.
				wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				writeRef(t, wctx, tbl, mem, ref, modelRows(span(0, 10), 500))
				n, err := tbl.DeleteWhere(wctx, Matcher{Filter: query.Compare("id", query.Lt, int64(20))}, WriteOptions{Now: base})
				if err != nil {
					t.Fatal(err)
				}
				if want := ref.deleteRange(0, 20); n != want {
					t.Fatalf("delete affected %d rows, want %d", n, want)
				}
				if model.IsUnique() {
					if _, err := tbl.UpdateWhere(wctx, Matcher{Filter: query.Compare("id", query.Ge, int64(90))}, setV(mem, 700), WriteOptions{Now: base}); err != nil {
						t.Fatal(err)
					}
					ref.setRange(90, 100, 700)
					writeRef(t, wctx, tbl, mem, ref, modelRows(span(40, 45), 800))
				} else {
					writeRef(t, wctx, tbl, mem, ref, modelRows(span(40, 45), 800))
				}
				lw, err := tbl.NewLoadWriter(wctx, WriteOptions{Now: base})
				if err != nil {
					t.Fatal(err)
				}
				rows := modelRows(span(60, 63), 900)
				rec := modelBatch(mem, rows, false)
				err = lw.Write(rec)
				rec.Release()
				if err == nil {
					err = lw.Commit()
				}
				if err != nil {
					t.Fatal(err)
				}
				ref.write(rows)
				if got, want := tableVisible(t, tbl, base.UnixMicro()), ref.visible(base.UnixMicro()); !slices.Equal(got, want) {
					t.Fatalf("before the install: got %v\nwant %v", trunc(got), trunc(want))
				}

				release()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				st, err := tbl.Stats(ctx, base)
				if err != nil {
					t.Fatal(err)
				}
				if st.Compactions["full"] != 1 {
					t.Fatalf("full compactions %d, want 1 (the install was not carried through)", st.Compactions["full"])
				}
				if got, want := tableVisible(t, tbl, base.UnixMicro()), ref.visible(base.UnixMicro()); !slices.Equal(got, want) {
					t.Fatalf("after the install: got %v\nwant %v", trunc(got), trunc(want))
				}
				// A second full compaction over what the first left, the
				// carried marks included.
				if err := tbl.CompactAt(ctx, Full, base); err != nil {
					t.Fatal(err)
				}
				checkClose(t, tbl)
				tbl, err = Open(dir, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer checkClose(t, tbl)
				if got, want := tableVisible(t, tbl, base.UnixMicro()), ref.visible(base.UnixMicro()); !slices.Equal(got, want) {
					t.Fatalf("after a reopen: got %v\nwant %v", trunc(got), trunc(want))
				}
			})
		}
	}
}

// TestCompactionInstallBesideLoggedWrites: a compaction's install holds
// the writer lock's shared side only, so small writes through the log go
// on while its manifest append waits for its sync, and what they wrote
// is there after the install and after a reopen.
func TestCompactionInstallBesideLoggedWrites(t *testing.T) {
	for _, model := range allModels() {
		t.Run(modelName(model), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			var armed atomic.Bool
			entered, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			fsys := vfs.NewErrorFS(vfs.NewMemFS(), vfs.InjectorFunc(func(op vfs.Op, path string) error {
				if op == vfs.OpSync && armed.Load() && strings.HasPrefix(filepath.Base(path), "MANIFEST-") {
					once.Do(func() { close(entered) })
					<-release
				}
				return nil
			}))
			opts := &Options{FS: fsys, Allocator: mem, PageRows: 8, DisableAutoCompaction: true, Clock: func() time.Time { return base }}
			tbl := mustCreate(t, "/t", modelDef(model, false), opts)
			ref := &refModel{unique: model.IsUnique(), keys: map[int64]modelRow{}}
			ctx := context.Background()
			for i := int64(0); i < 3; i++ {
				writeRef(t, ctx, tbl, mem, ref, modelRows(span(i*30, (i+1)*30), i))
				mustFlush(t, ctx, tbl)
			}
			armed.Store(true)
			done := make(chan error, 1)
			go func() { done <- tbl.CompactAt(ctx, Full, base) }()
			<-entered
			// The install waits in its manifest sync: logged writes finish
			// meanwhile, which an install holding the exclusive side would
			// keep waiting.
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			for i := int64(0); i < 5; i++ {
				writeRef(t, wctx, tbl, mem, ref, modelRows([]int64{10 * i, 200 + i}, 100+i))
			}
			if got, want := tableVisible(t, tbl, base.UnixMicro()), ref.visible(base.UnixMicro()); !slices.Equal(got, want) {
				t.Fatalf("during the install: got %v\nwant %v", trunc(got), trunc(want))
			}
			armed.Store(false)
			close(release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			st, err := tbl.Stats(ctx, base)
			if err != nil {
				t.Fatal(err)
			}
			if st.Compactions["full"] != 1 {
				t.Fatalf("full compactions %d, want 1", st.Compactions["full"])
			}
			if got, want := tableVisible(t, tbl, base.UnixMicro()), ref.visible(base.UnixMicro()); !slices.Equal(got, want) {
				t.Fatalf("after the install: got %v\nwant %v", trunc(got), trunc(want))
			}
			checkClose(t, tbl)
			tbl, err = Open("/t", opts)
			if err != nil {
				t.Fatal(err)
			}
			defer checkClose(t, tbl)
			if got, want := tableVisible(t, tbl, base.UnixMicro()), ref.visible(base.UnixMicro()); !slices.Equal(got, want) {
				t.Fatalf("after a reopen: got %v\nwant %v", trunc(got), trunc(want))
			}
		})
	}
}

// deleteRange removes the rows with lo <= id < hi (none expires) and
// returns how many.
func (m *refModel) deleteRange(lo, hi int64) int64 {
	var n int64
	if !m.unique {
		keep := m.dup[:0]
		for _, r := range m.dup {
			if r.id < lo || r.id >= hi {
				keep = append(keep, r)
			} else {
				n++
			}
		}
		m.dup = keep
		return n
	}
	for k := range m.keys {
		if k >= lo && k < hi {
			delete(m.keys, k)
			n++
		}
	}
	return n
}

// setRange sets v on the keys lo <= id < hi.
func (m *refModel) setRange(lo, hi, v int64) {
	for k, r := range m.keys {
		if k >= lo && k < hi {
			r.v = v
			m.keys[k] = r
		}
	}
}

// TestCompactionCarriesMarks: marks that land on the inputs while the
// rewrite runs reach the output's rows in the install's own record — the
// compaction installs once, and what it installed is marked.
func TestCompactionCarriesMarks(t *testing.T) {
	for _, model := range []schema.Model{schema.Duplicate, schema.UniqueMOW} {
		for _, alterFirst := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/scan=%v", modelName(model), alterFirst), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				tbl := mustCreate(t, filepath.Join(t.TempDir(), "t"), modelDef(model, false), &Options{Allocator: mem, PageRows: 4, DisableAutoCompaction: true})
				defer checkClose(t, tbl)
				ref := &refModel{unique: model.IsUnique(), keys: map[int64]modelRow{}}
				ctx := context.Background()
				for i := int64(0); i < 3; i++ {
					writeRef(t, ctx, tbl, mem, ref, modelRows(span(i*30, i*30+30), i))
					mustFlush(t, ctx, tbl) // one rowset per write: the compaction's inputs
				}
				if alterFirst {
					// Older rowsets lack the new column: the compaction scans
					// instead of copying pages.
					if err := tbl.AddColumn(ctx, schema.Column{Name: "extra", Type: schema.BigIntType, Nullable: true}, ""); err != nil {
						t.Fatal(err)
					}
				}
				entered, release := blockRewrite(tbl)
				defer release()
				done := make(chan error, 1)
				go func() { done <- tbl.CompactAt(ctx, Full, base) }()
				<-entered
				if _, err := tbl.DeleteWhere(ctx, Matcher{Filter: query.Compare("id", query.Lt, int64(5))}, WriteOptions{Now: base}); err != nil {
					t.Fatal(err)
				}
				ref.deleteRange(0, 5)
				if _, err := tbl.DeleteWhere(ctx, Matcher{Filter: query.Compare("id", query.Ge, int64(85))}, WriteOptions{Now: base}); err != nil {
					t.Fatal(err)
				}
				ref.deleteRange(85, 90)
				if model.IsUnique() {
					writeRef(t, ctx, tbl, mem, ref, modelRows([]int64{10, 31, 32, 77}, 555))
					// The write's marks on the inputs land when its memtable
					// becomes a rowset: flushed during the rewrite, they
					// must reach the output.
					mustFlush(t, ctx, tbl)
				}
				release()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				st, err := tbl.Stats(ctx, base)
				if err != nil {
					t.Fatal(err)
				}
				if st.Compactions["full"] != 1 || st.Rowsets != map[bool]int{false: 1, true: 2}[model.IsUnique()] {
					t.Fatalf("%d full compactions, %d rowsets", st.Compactions["full"], st.Rowsets)
				}
				v, err := tbl.pin()
				if err != nil {
					t.Fatal(err)
				}
				marked := v.deleted[v.rowsets[0].Meta.ID]
				v.unref()
				want := uint64(10)
				if model.IsUnique() {
					want = 14
				}
				if marked == nil || marked.GetCardinality() != want {
					t.Fatalf("output marks %v, want %d", marked, want)
				}
				if got, want := tableVisible(t, tbl, base.UnixMicro()), ref.visible(base.UnixMicro()); !slices.Equal(got, want) {
					t.Fatalf("got %v\nwant %v", trunc(got), trunc(want))
				}
			})
		}
	}
}

// TestCompactionInstallConflicts: an input removed while the rewrite runs
// (another compaction) or a definition changed (an ALTER) abandons the
// install, deletes its output and plans again.
func TestCompactionInstallConflicts(t *testing.T) {
	for _, conflict := range []string{"input removed", "alter"} {
		for _, model := range allModels() {
			t.Run(conflict+"/"+modelName(model), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				fsys := vfs.NewMemFS()
				tbl := mustCreate(t, "/t", modelDef(model, false), &Options{FS: fsys, Allocator: mem, DisableAutoCompaction: true})
				defer checkClose(t, tbl)
				ref := &refModel{unique: model.IsUnique(), keys: map[int64]modelRow{}}
				ctx := context.Background()
				for i := int64(0); i < 5; i++ {
					writeRef(t, ctx, tbl, mem, ref, modelRows(span(i*10, i*10+10), i))
					mustFlush(t, ctx, tbl) // one rowset per write: the compaction's inputs
				}
				var rewrites atomic.Int32
				entered, release := blockRewrite(tbl)
				block := tbl.testHooks.rewritten
				tbl.testHooks.rewritten = func() { rewrites.Add(1); block() }
				defer release()
				done := make(chan error, 1)
				go func() { done <- tbl.CompactAt(ctx, Full, base) }()
				<-entered
				switch conflict {
				case "input removed":
					// Compactions run one at a time; this one goes around that,
					// as nothing else can, to remove inputs of the stopped one.
					v, j, ok, err := tbl.planJob(ctx, func(v *version) (job, bool, error) {
						j, ok := manualJob(v, Cumulative, base)
						return j, ok, nil
					})
					if err != nil || !ok {
						t.Fatalf("plan: %v %v", ok, err)
					}
					installed, err := tbl.runJob(ctx, v, j, base)
					v.unref()
					if err != nil || !installed {
						t.Fatalf("cumulative: installed %v, %v", installed, err)
					}
				case "alter":
					if err := tbl.AddColumn(ctx, schema.Column{Name: "extra", Type: schema.BigIntType, Nullable: true}, ""); err != nil {
						t.Fatal(err)
					}
				}
				release()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				wantRewrites := int32(2)
				if conflict == "input removed" {
					wantRewrites = 3
				}
				if n := rewrites.Load(); n != wantRewrites {
					t.Fatalf("%d rewrites, want %d", n, wantRewrites)
				}
				st, err := tbl.Stats(ctx, base)
				if err != nil {
					t.Fatal(err)
				}
				if st.Compactions["full"] != 1 || st.Rowsets != 1 {
					t.Fatalf("%d full compactions, %d rowsets", st.Compactions["full"], st.Rowsets)
				}
				if got, want := tableVisible(t, tbl, base.UnixMicro()), ref.visible(base.UnixMicro()); !slices.Equal(got, want) {
					t.Fatalf("got %v\nwant %v", trunc(got), trunc(want))
				}
				// The abandoned output is gone: the only segment files are the
				// live rowset's.
				tbl.flushDeferred()
				v, err := tbl.pin()
				if err != nil {
					t.Fatal(err)
				}
				live := map[string]bool{}
				for _, s := range v.rowsets[0].Meta.Segments {
					live[filepath.Base(rowset.SegmentFileName("/t", s.FileNum))] = true
				}
				v.unref()
				names, err := fsys.List("/t")
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range names {
					if _, ok := rowset.ParseSegmentFileName(n); ok && !live[n] {
						t.Errorf("segment file %s is neither live nor deleted (live %v)", n, live)
					}
				}
			})
		}
	}
}

// TestCompactionCrashMidRewrite: a crash while a compaction's rewrite is
// stopped — with writes acknowledged meanwhile — loses nothing acknowledged
// and shows no row twice; so does a crash after its install.
func TestCompactionCrashMidRewrite(t *testing.T) {
	for _, model := range allModels() {
		t.Run(modelName(model), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			fsys := vfs.NewMemFS()
			opts := &Options{FS: fsys, Allocator: mem, PageRows: 4, DisableAutoCompaction: true, Logf: func(string, ...any) {}}
			tbl := mustCreate(t, "/t", modelDef(model, false), opts)
			ref := &refModel{unique: model.IsUnique(), keys: map[int64]modelRow{}}
			ctx := context.Background()
			for i := int64(0); i < 4; i++ {
				writeRef(t, ctx, tbl, mem, ref, modelRows(span(i*10, i*10+10), i))
				mustFlush(t, ctx, tbl) // one rowset per write: the compaction's inputs
			}
			entered, release := blockRewrite(tbl)
			done := make(chan error, 1)
			go func() { done <- tbl.CompactAt(ctx, Full, base) }()
			<-entered
			writeRef(t, ctx, tbl, mem, ref, modelRows(span(5, 15), 77))
			if _, err := tbl.DeleteWhere(ctx, Matcher{Filter: query.Compare("id", query.Ge, int64(35))}, WriteOptions{Now: base}); err != nil {
				t.Fatal(err)
			}
			ref.deleteRange(35, 40)
			mid := fsys.Clone()
			release()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			after := fsys.Clone()
			want := ref.visible(base.UnixMicro())
			checkClose(t, tbl)
			segments := func(c *vfs.MemFS) int {
				names, err := c.List("/t")
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, name := range names {
					if _, ok := rowset.ParseSegmentFileName(name); ok {
						n++
					}
				}
				return n
			}
			for name, c := range map[string]*vfs.MemFS{"mid-rewrite": mid, "after install": after} {
				c.Crash()
				before := segments(c)
				o := *opts
				o.FS = c
				re, err := Open("/t", &o)
				if err != nil {
					t.Fatalf("%s: open: %v", name, err)
				}
				if got := tableVisible(t, re, base.UnixMicro()); !slices.Equal(got, want) {
					t.Errorf("%s: got %v\nwant %v", name, trunc(got), trunc(want))
				}
				// The output of the compaction that never installed holds
				// copies of listed rows only: it goes, not to lost+found/.
				if lf := re.LostFound(); len(lf) > 0 {
					t.Errorf("%s: moved to lost+found: %v", name, lf)
				}
				if name == "mid-rewrite" && segments(c) >= before {
					t.Errorf("%s: %d segment files before the open, %d after: the output was not removed", name, before, segments(c))
				}
				checkClose(t, re)
			}
		})
	}
}

// TestCompactionConcurrentModel runs compactions in a loop (every kind and
// the auto policy, with pauses between rewrite and install) while writes,
// DELETEs, UPDATEs, loads and ALTERs go on, and compares the table with a reference model
// after every operation. Run it with -race.
func TestCompactionConcurrentModel(t *testing.T) {
	steps := 150
	if testing.Short() {
		steps = 60
	}
	for _, model := range allModels() {
		for seed := uint64(1); seed <= 2; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", modelName(model), seed), func(t *testing.T) {
				runConcurrentModel(t, model, seed, steps)
			})
		}
	}
}

func runConcurrentModel(t *testing.T, model schema.Model, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, uint64(model)))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var clock atomic.Int64
	clock.Store(base.UnixMicro())
	now := func() time.Time { return time.UnixMicro(clock.Load()) }
	dir := filepath.Join(t.TempDir(), "t")
	opts := &Options{Allocator: mem, PageRows: []int{3, 8, 64}[rng.IntN(3)], SegmentRows: []int64{20, 1 << 20}[rng.IntN(2)],
		DisableAutoCompaction: true, Clock: now}
	tbl := mustCreate(t, dir, modelDef(model, false), opts)
	ref := &refModel{unique: model.IsUnique(), keys: map[int64]modelRow{}}
	hour := int64(3600e6)

	// The compactor pauses between rewrite and install so that writes land
	// on its inputs meanwhile.
	var pause atomic.Int64
	tbl.testHooks.rewritten = func() { time.Sleep(time.Duration(pause.Load())) }
	stop := make(chan struct{})
	var compactErr atomic.Value
	var compactions, gaveUp atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		crng := rand.New(rand.NewPCG(seed, 99))
		for {
			select {
			case <-stop:
				return
			default:
			}
			pause.Store(crng.Int64N(int64(2 * time.Millisecond)))
			var err error
			if crng.IntN(3) == 0 {
				_, err = tbl.CompactAuto(context.Background())
			} else {
				kind := []CompactionKind{Cumulative, Base, Full, TTLDrop}[crng.IntN(4)]
				err = tbl.CompactAt(context.Background(), kind, now())
			}
			if errors.Is(err, errInputsChanged) {
				gaveUp.Add(1) // ALTERs kept landing: a rare outcome, not a failure
				continue
			}
			if err != nil {
				compactErr.Store(err)
				return
			}
			compactions.Add(1)
		}
	}()
	var log []string
	fail := func(format string, args ...any) {
		t.Helper()
		close(stop)
		wg.Wait()
		t.Fatalf("seed %d, model %s: %s\nops:\n%s", seed, modelName(model), fmt.Sprintf(format, args...), strings.Join(log, "\n"))
	}
	ctx := context.Background()
	for step := 0; step < steps; step++ {
		at := clock.Load()
		switch op := rng.IntN(10); {
		case op < 5:
			n := 1 + rng.IntN(20)
			rows := make([]modelRow, n)
			for i := range rows {
				rows[i] = modelRow{id: rng.Int64N(80), v: rng.Int64N(1000)}
				if rng.IntN(3) == 0 {
					ttl := at + rng.Int64N(10*hour) - 2*hour
					rows[i].ttl = &ttl
				}
			}
			log = append(log, fmt.Sprintf("write %d rows", n))
			rec := modelBatch(mem, rows, false)
			err := tbl.Write(ctx, rec)
			rec.Release()
			if err != nil {
				fail("write: %v", err)
			}
			ref.write(rows)
		case op < 7:
			lim := rng.Int64N(200)
			log = append(log, fmt.Sprintf("delete v < %d", lim))
			got, err := tbl.DeleteWhere(ctx, Matcher{Filter: query.Compare("v", query.Lt, lim)}, WriteOptions{Now: now()})
			if err != nil {
				fail("delete: %v", err)
			}
			if want := ref.deleteWhere(at, lim); got != want {
				fail("delete affected %d rows, want %d", got, want)
			}
		case op < 9 && ref.unique:
			lim, nv := rng.Int64N(300), rng.Int64N(1000)
			log = append(log, fmt.Sprintf("update v = %d where v < %d", nv, lim))
			got, err := tbl.UpdateWhere(ctx, Matcher{Filter: query.Compare("v", query.Lt, lim)}, setV(mem, nv), WriteOptions{Now: now()})
			if err != nil {
				fail("update: %v", err)
			}
			if want := ref.updateWhere(at, lim, nv); got != want {
				fail("update affected %d rows, want %d", got, want)
			}
		case op == 9 && rng.IntN(2) == 0:
			// An ALTER: a compaction running now abandons its install.
			log = append(log, "alter")
			if err := tbl.SetProperties(ctx, map[string]string{"rowttl.test_step": fmt.Sprint(step)}); err != nil {
				fail("alter: %v", err)
			}
		case op == 9:
			n := 1 + rng.IntN(20)
			rows := make([]modelRow, n)
			for i := range rows {
				rows[i] = modelRow{id: rng.Int64N(80), v: rng.Int64N(1000)}
			}
			log = append(log, fmt.Sprintf("load %d rows", n))
			lw, err := tbl.NewLoadWriter(ctx, WriteOptions{Now: now()})
			if err != nil {
				fail("load: %v", err)
			}
			rec := modelBatch(mem, rows, false)
			err = lw.Write(rec)
			rec.Release()
			if err == nil {
				err = lw.Commit()
			} else {
				lw.Abort()
			}
			if err != nil {
				fail("load: %v", err)
			}
			ref.write(rows)
		default:
			d := rng.Int64N(hour)
			clock.Add(d)
			log = append(log, fmt.Sprintf("clock +%dµs", d))
		}
		if err, _ := compactErr.Load().(error); err != nil {
			fail("compaction: %v", err)
		}
		at = clock.Load()
		if got, want := tableVisible(t, tbl, at), ref.visible(at); !slices.Equal(got, want) {
			fail("step %d: got %d rows %v\nwant %d rows %v", step, len(got), trunc(got), len(want), trunc(want))
		}
	}
	close(stop)
	wg.Wait()
	if err, _ := compactErr.Load().(error); err != nil {
		t.Fatalf("seed %d: compaction: %v", seed, err)
	}
	t.Logf("seed %d: %d compactions (and %d that gave up) alongside %d operations", seed, compactions.Load(), gaveUp.Load(), steps)
	checkClose(t, tbl)
	tbl, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer checkClose(t, tbl)
	at := clock.Load()
	if got, want := tableVisible(t, tbl, at), ref.visible(at); !slices.Equal(got, want) {
		t.Fatalf("seed %d: after reopen: got %v\nwant %v", seed, trunc(got), trunc(want))
	}
}

// TestCompactionCloseMidRewrite: a table closed while a compaction's rewrite
// runs fails the install with ErrClosed, and its output is deleted.
func TestCompactionCloseMidRewrite(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(t.TempDir(), "t")
	opts := &Options{Allocator: mem, DisableAutoCompaction: true}
	tbl := mustCreate(t, dir, modelDef(schema.Duplicate, false), opts)
	ref := &refModel{keys: map[int64]modelRow{}}
	ctx := context.Background()
	for i := int64(0); i < 3; i++ {
		writeRef(t, ctx, tbl, mem, ref, modelRows(span(i*10, i*10+10), i))
		mustFlush(t, ctx, tbl) // one rowset per write: the compaction's inputs
	}
	entered, release := blockRewrite(tbl)
	done := make(chan error, 1)
	go func() { done <- tbl.CompactAt(ctx, Full, base) }()
	<-entered
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	release()
	if err := <-done; !errors.Is(err, rowttl.ErrClosed) {
		t.Fatalf("compaction after close: %v, want ErrClosed", err)
	}
	tbl, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer checkClose(t, tbl)
	if lf := tbl.LostFound(); len(lf) > 0 {
		t.Fatalf("the abandoned output was left behind: %v", lf)
	}
	if got, want := tableVisible(t, tbl, base.UnixMicro()), ref.visible(base.UnixMicro()); !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", trunc(got), trunc(want))
	}
}

// mustFlush makes a rowset of what the memtables hold, so a test's setup
// gives compactions rowsets to work on while its later small writes go
// through the log beside them.
func mustFlush(t *testing.T, ctx context.Context, tbl *Table) {
	t.Helper()
	if err := tbl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}
