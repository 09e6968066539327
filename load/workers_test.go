package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl/fileformat"
	"github.com/rowttl/rowttl/schema"
)

// TestWorkersBound: however many goroutines compute, at most the pool's
// slots hold one at a time, and every one of them gets its turns (yield
// hands the slot over to the waiters).
func TestWorkersBound(t *testing.T) {
	w := NewWorkers(2)
	if w.Slots() != 2 || NewWorkers(0).Slots() != 1 || SharedWorkers().Slots() < 1 {
		t.Fatalf("slots %d %d %d", w.Slots(), NewWorkers(0).Slots(), SharedWorkers().Slots())
	}
	var active, peak atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := slot{w: w, ctx: context.Background()}
			if err := s.take(); err != nil {
				t.Error(err)
				return
			}
			for turn := 0; turn < 50; turn++ {
				n := active.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(100 * time.Microsecond)
				active.Add(-1)
				if err := s.yield(); err != nil {
					t.Error(err)
					return
				}
			}
			s.drop()
		}()
	}
	wg.Wait()
	if p := peak.Load(); p < 1 || p > 2 {
		t.Fatalf("%d goroutines computed at once, the pool has 2 slots", p)
	}
	if len(w.slots) != 0 {
		t.Fatalf("%d slots still held", len(w.slots))
	}
}

// TestWorkersYieldHandsOver: a goroutine that yields gives its slot to
// the one waiting, and gets it back only after it.
func TestWorkersYieldHandsOver(t *testing.T) {
	w := NewWorkers(1)
	a := slot{w: w, ctx: context.Background()}
	if err := a.take(); err != nil {
		t.Fatal(err)
	}
	var order []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := slot{w: w, ctx: context.Background()}
		if err := b.take(); err != nil {
			t.Error(err)
			return
		}
		note("b")
		b.drop()
	}()
	for w.waiting.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := a.yield(); err != nil || !a.held {
		t.Fatalf("yield: %v, held %v", err, a.held)
	}
	note("a")
	a.drop()
	<-done
	if fmt.Sprint(order) != "[b a]" {
		t.Fatalf("order %v: the waiting goroutine did not get the slot first", order)
	}
}

// TestWorkersContext: waiting for a slot ends with the context.
func TestWorkersContext(t *testing.T) {
	w := NewWorkers(1)
	held := slot{w: w, ctx: context.Background()}
	if err := held.take(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	s := slot{w: w, ctx: ctx}
	if err := s.take(); !errors.Is(err, context.DeadlineExceeded) || s.held {
		t.Fatalf("take: %v, held %v", err, s.held)
	}
	if _, err := w.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) || w.Busy() != 1 {
		t.Fatalf("Acquire: %v, %d busy", err, w.Busy())
	}
	held.drop()
	release, err := w.Acquire(context.Background())
	if err != nil || w.Busy() != 1 {
		t.Fatalf("Acquire: %v, %d busy", err, w.Busy())
	}
	release()
	if w.Busy() != 0 {
		t.Fatalf("%d busy", w.Busy())
	}
}

// TestWorkersStalledInput: a load whose client stops sending holds no
// slot, so another load completes meanwhile even with a pool of one; the
// stalled load completes once its client sends the rest.
func TestWorkersStalledInput(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT, v INT) DUPLICATE KEY(id)`)
	w := NewWorkers(1)
	pr, pw := io.Pipe()
	stalled := make(chan *Result, 1)
	go func() {
		stalled <- Run(context.Background(), e.table("t"), pr, Options{Now: testNow, Workers: w}, e.mem)
	}()
	if _, err := io.WriteString(pw, "1\t1\n2\t2\n"); err != nil {
		t.Fatal(err)
	}
	other := make(chan *Result, 1)
	go func() { other <- e.load("t", "3\t3\n4\t4\n5\t5\n", Options{Workers: w}) }()
	select {
	case res := <-other:
		if !res.OK() || res.NumberLoadedRows != 3 {
			t.Fatalf("other load: %+v", res)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a load waits for a slot that a stalled load holds")
	}
	if _, err := io.WriteString(pw, "6\t6\n"); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if res := <-stalled; !res.OK() || res.NumberLoadedRows != 3 {
		t.Fatalf("stalled load: %+v", res)
	}
	if got := e.exec(`SELECT count(*), sum(v) FROM t`); got != "count(*)\tsum(v)\n6\t21\n" {
		t.Fatalf("got %q", got)
	}
}

// TestWorkersManyLoads: loads of many batches sharing a pool of one slot
// (a load's two goroutines hand it back and forth) all complete, as do
// a load doomed by a bad row and a Parquet load, and the table holds
// exactly the rows of the loads that succeeded.
func TestWorkersManyLoads(t *testing.T) {
	for _, model := range []string{"DUPLICATE", "UNIQUE"} {
		t.Run(model, func(t *testing.T) {
			e := newEnv(t)
			e.exec(`CREATE TABLE t (id INT, v INT) ` + model + ` KEY(id)`)
			w := NewWorkers(1)
			const loads, rows = 6, 3000
			var wg sync.WaitGroup
			results := make([]*Result, loads+2)
			for l := 0; l < loads; l++ {
				var b strings.Builder
				for i := 0; i < rows; i++ {
					fmt.Fprintf(&b, "%d\t%d\n", l*rows+i, 1)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[l] = e.load("t", b.String(), Options{Workers: w, BatchRows: 250})
				}()
			}
			wg.Add(2)
			go func() {
				defer wg.Done()
				var b strings.Builder
				for i := 0; i < rows; i++ {
					fmt.Fprintf(&b, "%d\t1\n", -1-i)
				}
				b.WriteString("x\t1\n")
				results[loads] = e.load("t", b.String(), Options{Workers: w, BatchRows: 250})
			}()
			go func() {
				defer wg.Done()
				sc := e.table("t").Definition().Schema.Columns
				rec := buildRecord(t, e, fileformat.FileSchema(sc, false), 1000)
				defer rec.Release()
				data := parquetFile(t, e.mem, fileformat.ParquetOptions{RowGroupRows: 100}, rec)
				results[loads+1] = Run(context.Background(), e.table("t"), strings.NewReader(string(data)),
					Options{Now: testNow, Format: FormatParquet, Workers: w, BatchRows: 250}, e.mem)
			}()
			wg.Wait()
			for l, res := range results {
				if bad := l == loads; res.OK() == bad {
					t.Fatalf("load %d: %+v", l, res)
				}
			}
			want := fmt.Sprintf("count(*)\tsum(v)\n%d\t%d\n", loads*rows+1000, loads*rows+1000)
			if got := e.exec(`SELECT count(*), sum(v) FROM t`); got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
			if len(w.slots) != 0 {
				t.Fatalf("%d slots still held", len(w.slots))
			}
		})
	}
}

// buildRecord is n rows of (id, v): ids from 1000000, v 1.
func buildRecord(t *testing.T, e *env, sc *arrow.Schema, n int) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(e.mem, sc)
	defer b.Release()
	for i := 0; i < n; i++ {
		schema.AppendValue(b.Field(0), schema.IntVal(int64(1_000_000+i)))
		schema.AppendValue(b.Field(1), schema.IntVal(1))
	}
	return b.NewRecordBatch()
}

// TestWorkersLoadGivesUp: a load waiting for a slot fails, writing
// nothing, when its context ends (a client that goes away while its load
// queues).
func TestWorkersLoadGivesUp(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT, v INT) DUPLICATE KEY(id)`)
	w := NewWorkers(1)
	release, err := w.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res := Run(ctx, e.table("t"), strings.NewReader("1\t1\n"), Options{Now: testNow, Workers: w}, e.mem)
	if res.OK() || !errors.Is(res.Err, context.DeadlineExceeded) || res.NumberLoadedRows != 0 {
		t.Fatalf("%+v", res)
	}
	if got := e.exec(`SELECT count(*) FROM t`); got != "count(*)\n0\n" {
		t.Fatalf("got %q", got)
	}
	if w.Busy() != 1 || w.Waiting() != 0 {
		t.Fatalf("%d busy, %d waiting", w.Busy(), w.Waiting())
	}
}
