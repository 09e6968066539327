package table

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
)

func dataBytes(t testing.TB, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".seg") {
			info, _ := e.Info()
			n += info.Size()
		}
	}
	return n
}

// Every model × TTL mode × compaction kind: scans at several nows are the
// same before and after, and what may be reclaimed is.
func TestCompactionKeepsAnswers(t *testing.T) {
	hour := int64(3600e6)
	for _, model := range []schema.Model{schema.Duplicate, schema.UniqueMOW, schema.UniqueMOR} {
		for _, source := range []bool{false, true} {
			for _, kind := range []CompactionKind{Cumulative, Base, Full, TTLDrop} {
				name := fmt.Sprintf("%d/%v/%s", model, source, kind)
				t.Run(name, func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					clock := base
					tbl := mustCreate(t, t.TempDir(), modelDef(model, source), &Options{Allocator: mem, PageRows: 32, Clock: func() time.Time { return clock }, DisableAutoCompaction: true, SmallWriteRows: -1})
					defer checkClose(t, tbl)
					rng := rand.New(rand.NewPCG(7, uint64(model)))
					now := base.UnixMicro()
					for w := 0; w < 6; w++ {
						rows := make([]modelRow, 200)
						for i := range rows {
							ttl := now + rng.Int64N(4*hour) - 2*hour
							if source {
								ttl -= 10 * hour
							}
							rows[i] = modelRow{id: rng.Int64N(300), v: rng.Int64N(100), ttl: &ttl}
						}
						if w == 5 {
							// A rowset whose rows have all expired.
							for i := range rows {
								e := now - hour
								if source {
									e -= 10 * hour
								}
								rows[i].ttl = &e
							}
						}
						rec := modelBatch(mem, rows, source)
						mustWrite(t, tbl, rec)
						rec.Release()
					}
					if _, err := tbl.DeleteWhere(context.Background(), Matcher{Filter: query.Compare("v", query.Lt, 5)}, WriteOptions{}); err != nil {
						t.Fatal(err)
					}
					nows := []int64{now, now + hour, now + 3*hour}
					before := map[int64][]string{}
					for _, at := range nows {
						before[at] = tableVisible(t, tbl, at)
					}
					st0, _ := tbl.Stats(context.Background(), base)
					infos, _ := tbl.Rowsets(context.Background(), base)
					lastRows := infos[len(infos)-1].Rows
					if _, err := tbl.compactAtForTest(kind, base); err != nil {
						t.Fatal(err)
					}
					for _, at := range nows {
						if got := tableVisible(t, tbl, at); !slices.Equal(got, before[at]) {
							t.Fatalf("at %d: %d rows after compaction, %d before", at, len(got), len(before[at]))
						}
					}
					st1, _ := tbl.Stats(context.Background(), base)
					reclaimed := st1.ReclaimedRows - st0.ReclaimedRows
					switch {
					case kind == TTLDrop && model == schema.UniqueMOR:
						if reclaimed != 0 {
							t.Fatalf("merge-on-read rowsets are never dropped whole; reclaimed %d", reclaimed)
						}
					case kind == TTLDrop:
						if reclaimed != lastRows || st1.Compactions[string(TTLDrop)] != 1 {
							t.Fatalf("the wholly expired rowset was not dropped: reclaimed %d", reclaimed)
						}
					case model == schema.UniqueMOR && kind == Cumulative:
						// Only superseded versions may go; expired newest ones stay.
						if st1.ExpiredRowsOnDisk == 0 {
							t.Fatalf("cumulative compaction of a merge-on-read table dropped expired newest versions")
						}
					default:
						if reclaimed <= 0 {
							t.Fatalf("%s compaction reclaimed nothing", kind)
						}
					}
				})
			}
		}
	}
}

// The merge-on-read resurrection case, plainly: key K live in version 1,
// rewritten already expired in version 2. After cumulative, base and full
// compaction in every order, K stays invisible.
func TestMORNoResurrection(t *testing.T) {
	orders := [][]CompactionKind{
		{Cumulative, Base, Full}, {Cumulative, Full, Base}, {Base, Cumulative, Full},
		{Base, Full, Cumulative}, {Full, Cumulative, Base}, {Full, Base, Cumulative},
	}
	for _, order := range orders {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			tbl := mustCreate(t, t.TempDir(), modelDef(schema.UniqueMOR, false), &Options{Allocator: mem, DisableAutoCompaction: true})
			defer func() { checkClose(t, tbl) }()
			now := base.UnixMicro()
			future, past := now+1000*3600e6, now-1
			write := func(rows ...modelRow) {
				rec := modelBatch(mem, rows, false)
				mustWrite(t, tbl, rec)
				rec.Release()
			}
			write(modelRow{id: 7, v: 1, ttl: &future}, modelRow{id: 1, v: 1})
			write(modelRow{id: 7, v: 2, ttl: &past})
			write(modelRow{id: 2, v: 3})
			write(modelRow{id: 3, v: 4})
			want := []string{"1:1", "2:3", "3:4"}
			check := func(when string) {
				if got := tableVisible(t, tbl, now); !slices.Equal(got, want) {
					t.Fatalf("%s: visible %v, want %v", when, got, want)
				}
			}
			check("before")
			for _, k := range order {
				if _, err := tbl.compactAtForTest(k, base); err != nil {
					t.Fatal(err)
				}
				check("after " + string(k))
				// Reopening must not bring it back either.
			}
			if err := tbl.Close(); err != nil {
				t.Fatal(err)
			}
			var err error
			if tbl, err = Open(tbl.Dir(), &Options{Allocator: mem, DisableAutoCompaction: true}); err != nil {
				t.Fatal(err)
			}
			check("after reopen")
		})
	}
}

// After a full compaction at a now where half the rows have expired, the
// data files shrink by at least 40%.
func TestFullCompactionShrinksFiles(t *testing.T) {
	dir := t.TempDir()
	tbl := mustCreate(t, dir, directDef(), &Options{DisableAutoCompaction: true})
	defer checkClose(t, tbl)
	rng := rand.New(rand.NewPCG(11, 12))
	rows := genEvents(rng, 0, 200_000)
	now := base.UnixMicro()
	for i := range rows {
		// Exactly every other row has expired at now.
		e := now + 3600e6
		if i%2 == 0 {
			e = now - 3600e6
		}
		rows[i].ttl = &e
	}
	rec := eventBatch(memory.DefaultAllocator, rows, true)
	mustWrite(t, tbl, rec)
	rec.Release()
	before := dataBytes(t, dir)
	if err := tbl.CompactAt(context.Background(), Full, base); err != nil {
		t.Fatal(err)
	}
	after := dataBytes(t, dir)
	if after > before*60/100 {
		t.Fatalf("data files went from %d to %d bytes: want at least a 40%% cut", before, after)
	}
	if n := mustCount(t, tbl, base, nil); n != 100_000 {
		t.Fatalf("%d rows after compaction", n)
	}
	t.Logf("data files: %d -> %d bytes (%.0f%%)", before, after, 100*float64(after)/float64(before))
}

// Readers scan while background compactions publish and delete their
// inputs; every reader sees exactly the batches of its own snapshot.
func TestReadersDuringCompaction(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	clock := base
	var clockMu sync.Mutex
	now := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
	tbl := mustCreate(t, t.TempDir(), directDef(), &Options{Allocator: mem, PageRows: 64, Clock: now, CompactionInterval: time.Millisecond, SmallWriteRows: -1})
	defer checkClose(t, tbl)
	const batches, per = 40, 500
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 8)
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				rd, err := tbl.Scan(ctx, query.Request{Now: base, Columns: []string{"id"}})
				if err != nil {
					errs <- err
					return
				}
				seen := map[int64]int{}
				var ids []int64
				for rd.Next() {
					ids = append(ids, rd.RecordBatch().Column(0).(*array.Int64).Int64Values()...)
					time.Sleep(50 * time.Microsecond) // stay open while compactions publish
				}
				err = rd.Err()
				rd.Release()
				if err != nil {
					errs <- err
					return
				}
				for _, id := range ids {
					seen[id/per]++
				}
				for b, n := range seen {
					// Rows 0..per-1 of each batch: even ids live, odd expired.
					if n != per/2 {
						errs <- fmt.Errorf("batch %d: %d rows visible, want all %d or none", b, n, per/2)
						return
					}
				}
			}
		}()
	}
	for b := 0; b < batches; b++ {
		rows := make([]eventRow, per)
		for i := range rows {
			e := base.UnixMicro() + 3600e6
			if i%2 == 1 {
				e = base.UnixMicro() - 1
			}
			rows[i] = eventRow{id: int64(b*per + i), ttl: &e}
		}
		rec := eventBatch(mem, rows, true)
		mustWrite(t, tbl, rec)
		rec.Release()
		if b%7 == 0 {
			if err := tbl.CompactAt(ctx, Full, base); err != nil {
				t.Fatal(err)
			}
		}
	}
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := mustCount(t, tbl, base, nil); n != batches*per/2 {
		t.Fatalf("%d rows at the end", n)
	}
	st, _ := tbl.Stats(ctx, base)
	if st.TotalCompactions() == 0 {
		t.Fatal("no compaction ran")
	}
}

// TestCompactionParallelism checks the number of goroutines a rewrite
// keeps busy: every processor, but one fewer (never none) when small writes
// came in lately, so that they find one free; an explicit option wins.
func TestCompactionParallelism(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct {
		procs, opt int
		lastWrite  time.Duration // ago; 0: never
		want       int
	}{
		{1, 0, 0, 1}, {2, 0, 0, 2}, {8, 0, 0, 8},
		{1, 0, time.Millisecond, 1}, {2, 0, time.Millisecond, 1}, {8, 0, time.Millisecond, 7},
		{2, 0, time.Minute, 2},
		{2, 3, 0, 3}, {8, 1, 0, 1}, {8, 3, time.Millisecond, 3},
	} {
		runtime.GOMAXPROCS(c.procs)
		tbl := &Table{opts: Options{CompactionParallelism: c.opt}}
		if c.lastWrite != 0 {
			tbl.lastSmallWrite.Store(time.Now().Add(-c.lastWrite).UnixNano())
		}
		if got := tbl.compactionParallelism(); got != c.want {
			t.Errorf("GOMAXPROCS %d, option %d, last small write %v ago: %d goroutines, want %d", c.procs, c.opt, c.lastWrite, got, c.want)
		}
	}
}

// TestCompactionPageAllocator compacts a table whose page allocator hands
// out dirty buffers: the rewrite decodes pages into them, but a column the
// compute kernels filter (a nullable DECIMAL) must not get one, or the
// kept rows come out with garbage in their values and validity.
func TestCompactionPageAllocator(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	typ := schema.DecimalType(38, 4)
	def := &Definition{Model: schema.Duplicate, Properties: map[string]string{PropEnableRowTTL: "true"},
		Schema: schema.Schema{KeyCount: 1, Columns: []schema.Column{
			{Name: "id", Type: schema.BigIntType},
			{Name: "d", Type: typ, Nullable: true},
		}}}
	tbl := mustCreate(t, t.TempDir(), def, &Options{Allocator: mem, PageAllocator: dirtyAllocator{memory.NewGoAllocator()},
		PageRows: 64, DisableAutoCompaction: true, SmallWriteRows: -1})
	defer checkClose(t, tbl)
	rng := rand.New(rand.NewPCG(3, 4))
	type want struct {
		id   int64
		null bool
		d    int64
	}
	var live []want
	for w := 0; w < 3; w++ {
		b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{
			def.Schema.Columns[0].Field(), def.Schema.Columns[1].Field(),
			{Name: schema.TTLColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil))
		for i := 0; i < 500; i++ {
			id := int64(w*500 + i)
			r := want{id: id, null: rng.IntN(4) == 0, d: rng.Int64N(1e12) - 5e11}
			b.Field(0).(*array.Int64Builder).Append(id)
			if r.null {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.Decimal128Builder).Append(decimalFromInt(r.d))
			}
			expired := rng.IntN(2) == 0
			b.Field(2).(*array.Int64Builder).Append(base.UnixMicro() + map[bool]int64{true: -1, false: 1}[expired]*1e6)
			if !expired {
				live = append(live, r)
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		mustWrite(t, tbl, rec)
		rec.Release()
	}
	if err := tbl.CompactAt(context.Background(), Full, base); err != nil {
		t.Fatal(err)
	}
	st, err := tbl.Stats(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	if st.RowsOnDisk != int64(len(live)) {
		t.Fatalf("%d rows on disk after the compaction, want the %d live", st.RowsOnDisk, len(live))
	}
	rows := scanAll(t, tbl, query.Request{Now: base})
	if len(rows) != len(live) {
		t.Fatalf("%d rows, want %d", len(rows), len(live))
	}
	for i, w := range live {
		got := rows[i]
		if got[0].Int != w.id || got[1].IsNull() != w.null || !w.null && got[1].Decimal() != decimalFromInt(w.d) {
			t.Fatalf("row %d: %v, want id %d null %v value %d", i, got, w.id, w.null, w.d)
		}
	}
}
