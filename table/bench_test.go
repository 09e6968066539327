package table

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/vfs"
)

const benchRows = 1_000_000

func benchBatches(b *testing.B) []arrow.RecordBatch {
	rng := rand.New(rand.NewPCG(9, 9))
	var recs []arrow.RecordBatch
	for i := 0; i < benchRows; i += 100_000 {
		recs = append(recs, eventBatch(memory.DefaultAllocator, genEvents(rng, int64(i), 100_000), true))
	}
	return recs
}

// BenchmarkWrite writes 1M rows of the events shape as one version.
func BenchmarkWrite(b *testing.B) {
	recs := benchBatches(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		tbl := mustCreate(b, b.TempDir(), directDef(), quiet())
		b.StartTimer()
		if err := tbl.WriteBatches(context.Background(), recs, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		tbl.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkScanTTL streams every column of the live rows of 1M, about half
// expired at now.
func BenchmarkScanTTL(b *testing.B) {
	recs := benchBatches(b)
	tbl := mustCreate(b, b.TempDir(), directDef(), quiet())
	defer tbl.Close()
	if err := tbl.WriteBatches(context.Background(), recs, WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		cols    []string
		workers int
	}{{"all-columns", nil, 0}, {"all-columns-serial", nil, 1}, {"count", []string{}, 0}, {"count-serial", []string{}, 1}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r, err := tbl.Scan(context.Background(), query.Request{Now: base, Columns: c.cols, Parallelism: c.workers})
				if err != nil {
					b.Fatal(err)
				}
				for r.Next() {
				}
				r.Release()
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkKeyMerge times the merge-on-read key merge (query.Superseded)
// of ten writes of 100K upserts each over 200K BIGINT keys, the index of
// keys writes carry it with, a count on a version that did not merge yet,
// and a full compaction of the same table, which merges the rows by key.
// Bytes are those of the keys merged.
func BenchmarkKeyMerge(b *testing.B) {
	const writes, rows, keys = 10, 100_000, 200_000
	def := directDef()
	def.Model = schema.UniqueMOW
	def.Properties[PropMergeOnWrite] = "false"
	setup := func(b *testing.B) *Table {
		tbl := mustCreate(b, b.TempDir(), def, quiet())
		rng := rand.New(rand.NewPCG(3, 3))
		for w := 0; w < writes; w++ {
			ev := genEvents(rng, 0, rows)
			for i := range ev {
				ev[i].id = rng.Int64N(keys)
			}
			rec := eventBatch(memory.DefaultAllocator, ev, true)
			mustWrite(b, tbl, rec)
			rec.Release()
		}
		return tbl
	}
	b.Run("superseded", func(b *testing.B) {
		tbl := setup(b)
		defer tbl.Close()
		v, err := tbl.pin()
		if err != nil {
			b.Fatal(err)
		}
		defer v.unref()
		b.SetBytes(writes * rows * 8)
		for b.Loop() {
			if _, err := query.Superseded(context.Background(), memory.DefaultAllocator, v.rowsets, 1, v.deleted); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("index", func(b *testing.B) {
		// The index a write carries the merge with, built from the ten
		// rowsets: each write pays a tenth of it, for its own keys.
		tbl := setup(b)
		defer tbl.Close()
		v, err := tbl.pin()
		if err != nil {
			b.Fatal(err)
		}
		defer v.unref()
		b.SetBytes(writes * rows * 8)
		for b.Loop() {
			if k, _, err := query.BuildKeyOwners(context.Background(), v.rowsets, 1); err != nil || k == nil {
				b.Fatal(k, err)
			}
		}
	})
	b.Run("first-count", func(b *testing.B) {
		// A count on a version whose merge is not cached yet, as the
		// first read after a write is.
		tbl := setup(b)
		defer tbl.Close()
		v, err := tbl.pin()
		if err != nil {
			b.Fatal(err)
		}
		defer v.unref()
		b.SetBytes(writes * rows * 8)
		for b.Loop() {
			v.mergeMu.Lock()
			v.merged, v.mergedOK = nil, false
			v.mergeMu.Unlock()
			if _, err := tbl.Count(context.Background(), base, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("full-compaction", func(b *testing.B) {
		b.SetBytes(writes * rows * 8)
		for b.Loop() {
			b.StopTimer()
			tbl := setup(b)
			b.StartTimer()
			if err := tbl.Compact(context.Background(), Full); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			tbl.Close()
			b.StartTimer()
		}
	})
}

// BenchmarkWALCommit appends durable records of a one-row write's size to
// a write-ahead log on the disk, from 1 and 16 goroutines: the rate group
// commit allows, one sync shared by every writer queued behind it.
func BenchmarkWALCommit(b *testing.B) {
	for _, writers := range []int{1, 16} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			dir := b.TempDir()
			w, err := openWALWriter(vfs.Default, dir, fileNums(), 1, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer w.close()
			body := make([]byte, 64)
			b.ResetTimer()
			if writers == 1 {
				for range b.N {
					if _, err := w.commit(body, false, nil); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				// RunParallel starts parallelism × GOMAXPROCS goroutines.
				b.SetParallelism((writers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := w.commit(body, false, nil); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(w.syncs)/float64(b.N), "syncs/record")
		})
	}
}

// BenchmarkSmallWrites measures durable one-row writes through the
// write-ahead log, from one goroutine and from sixteen (group commit), on
// the operating system's file system, and the same one-row writes as
// rowsets for comparison. The nosync cases are the logged writes without
// their syncs: the CPU and allocations of a write, apart from the disk's
// latency, which on a shared machine varies more than they do.
//
//	go test ./table -run XXX -bench SmallWrites -benchtime 2000x
func BenchmarkSmallWrites(b *testing.B) {
	for _, c := range []struct {
		name      string
		writers   int
		smallRows int
		noSync    bool
	}{{"logged/1", 1, 0, false}, {"logged/16", 16, 0, false}, {"rowsets/1", 1, -1, false}, {"rowsets/16", 16, -1, false},
		{"nosync/1", 1, 0, true}, {"nosync/16", 16, 0, true}} {
		b.Run(c.name, func(b *testing.B) {
			mem := memory.NewGoAllocator()
			tbl := mustCreate(b, filepath.Join(b.TempDir(), "t"), modelDef(schema.Duplicate, false),
				&Options{DisableAutoCompaction: true, SmallWriteRows: c.smallRows})
			defer tbl.Close()
			recs := make([]arrow.RecordBatch, c.writers)
			for i := range recs {
				recs[i] = modelBatch(mem, []modelRow{{id: int64(i), v: 1}}, false)
				defer recs[i].Release()
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ReportAllocs()
			b.ResetTimer()
			start, cpu0 := time.Now(), cpuTime()
			var syncs0 int64
			if tbl.wal != nil {
				syncs0 = tbl.wal.syncs
			}
			for g := 0; g < c.writers; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						if err := tbl.WriteWith(context.Background(), recs[g], WriteOptions{NoSync: c.noSync}); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/row")
			if tbl.wal != nil && tbl.wal.syncs > syncs0 {
				// Read after every writer returned: the leaders are done.
				b.ReportMetric(float64(b.N)/float64(tbl.wal.syncs-syncs0), "rows/sync")
			}
		})
	}
}

// cpuTime is the CPU time, user and system, the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMemtableScan compares count(*) and sum over a table whose
// newest rows sit in memtables with the same table after a flush.
//
//	go test ./table -run XXX -bench MemtableScan -benchtime 20x
func BenchmarkMemtableScan(b *testing.B) {
	const rows, per = 1 << 20, 4096
	for _, model := range []schema.Model{schema.Duplicate, schema.UniqueMOW} {
		for _, flushed := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/flushed=%v", modelName(model), flushed), func(b *testing.B) {
				mem := memory.NewGoAllocator()
				tbl := mustCreate(b, filepath.Join(b.TempDir(), "t"), modelDef(model, false),
					&Options{DisableAutoCompaction: true, MemtableBytes: 1 << 30, MemtableAge: time.Hour})
				defer tbl.Close()
				far := base.UnixMicro() + 1000*3600e6
				for w := 0; w < rows/per; w++ {
					rs := make([]modelRow, per)
					for i := range rs {
						ttl := far + int64(i)
						rs[i] = modelRow{id: int64(w*per + i), v: int64(i), ttl: &ttl}
					}
					rec := modelBatch(mem, rs, false)
					mustWrite(b, tbl, rec)
					rec.Release()
				}
				if flushed {
					if err := tbl.Flush(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
				ctx := context.Background()
				// The first scan of a version builds its view; count it apart.
				start := time.Now()
				if _, err := tbl.Aggregate(ctx, query.Request{Now: base, Columns: []string{"v"}}); err != nil {
					b.Fatal(err)
				}
				first := time.Since(start)
				b.ResetTimer()
				defer func() { b.ReportMetric(float64(first.Microseconds()), "first-µs") }()
				for i := 0; i < b.N; i++ {
					tot, err := tbl.Aggregate(ctx, query.Request{Now: base, Columns: []string{"v"}})
					if err != nil || tot.Rows != rows {
						b.Fatal(tot.Rows, err)
					}
				}
				// A scan after each one-row write: only the newest chunk of
				// the memtable is built again.
				b.StopTimer()
				one := modelBatch(mem, []modelRow{{id: rows + 1, v: 1}}, false)
				defer one.Release()
				var afterWrite time.Duration
				const writes = 20
				for i := 0; i < writes; i++ {
					mustWrite(b, tbl, one)
					start := time.Now()
					if _, err := tbl.Aggregate(ctx, query.Request{Now: base, Columns: []string{"v"}}); err != nil {
						b.Fatal(err)
					}
					afterWrite += time.Since(start)
				}
				defer func() { b.ReportMetric(float64(afterWrite.Microseconds())/writes, "after-write-µs") }()
			})
		}
	}
}
