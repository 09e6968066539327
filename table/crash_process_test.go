package table

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
)

// The process crash test runs the test binary again as a child that loads
// batches into a table on disk, deletes some and compacts (by hand and in
// the background), printing a line when each write is acknowledged. The
// parent kills it with SIGKILL at a random moment, reopens the table and
// checks that every acknowledged write is there whole, that nothing
// unacknowledged is there in part, and that Check passes. Then it lets a
// new child go on with the same table.
//
// Small writes go through the write-ahead log; now and then the child
// writes a burst of one-to-three-row batches from many goroutines at once,
// which group commit syncs together, so a kill lands inside groups too.
//
// Every batch has an id, stored in column v of each of its rows, so the
// parent can count each batch's rows. The protocol, one line each:
//
//	@@ B <batch> <live rows>   a write is about to start
//	@@ A <batch>               it was acknowledged
//	@@ D <batch>               a delete of the batch is about to start
//	@@ d <batch>               it was acknowledged

const (
	crashEnvDir   = "ROWTTL_CRASH_CHILD_DIR"
	crashEnvSeed  = "ROWTTL_CRASH_CHILD_SEED"
	crashEnvFirst = "ROWTTL_CRASH_CHILD_FIRST"
)

// TestCrashChildProcess is the child; it does nothing unless the parent
// started it.
func TestCrashChildProcess(t *testing.T) {
	dir := os.Getenv(crashEnvDir)
	if dir == "" {
		t.Skip("run by TestProcessCrash")
	}
	seed, _ := strconv.ParseUint(os.Getenv(crashEnvSeed), 10, 64)
	first, _ := strconv.ParseInt(os.Getenv(crashEnvFirst), 10, 64)
	if err := crashChild(dir, seed, first); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
}

func crashChildOptions() *Options {
	return &Options{
		PageRows: 32, SegmentRows: 96,
		Clock:              func() time.Time { return base },
		CompactionInterval: 5 * time.Millisecond,
		// Small memtables, flushed in the background every few writes,
		// so kills land in flushes and log deletions too.
		MemtableBytes: 16 << 10,
		MemtableAge:   50 * time.Millisecond,
	}
}

func crashChild(dir string, seed uint64, first int64) error {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 99))
	mem := memory.NewGoAllocator()
	tbl, err := Open(dir, crashChildOptions())
	if err != nil {
		return err
	}
	say := func(format string, args ...any) {
		// One write(2) per line: a kill never leaves half a line.
		os.Stdout.WriteString(fmt.Sprintf("@@ "+format+"\n", args...))
	}
	var mine []int64 // batches this child wrote, for deletes
	hour := int64(3600e6)
	batchRows := func(b int64, n int) ([]modelRow, int) {
		rows := make([]modelRow, n)
		live := 0
		for i := range rows {
			rows[i] = modelRow{id: b*1000 + int64(i), v: b}
			switch rng.IntN(4) {
			case 0: // NULL: never expires
				live++
			case 1:
				exp := base.UnixMicro() - hour
				rows[i].ttl = &exp
			default:
				exp := base.UnixMicro() + 1000*hour
				rows[i].ttl = &exp
				live++
			}
		}
		return rows, live
	}
	write := func(b int64, rows []modelRow, live int) error {
		rec := modelBatch(mem, rows, false)
		say("B %d %d", b, live)
		err := tbl.Write(ctx, rec)
		rec.Release()
		if err != nil {
			return err
		}
		say("A %d", b)
		return nil
	}
	for b := first; ; {
		switch op := rng.IntN(20); {
		case op < 3: // a burst of small writes from many goroutines
			const writers = 16
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for g := 0; g < writers; g++ {
				rows, live := batchRows(b, 1+rng.IntN(3))
				wg.Add(1)
				go func(b int64) {
					defer wg.Done()
					if err := write(b, rows, live); err != nil {
						errs <- err
					}
				}(b)
				mine = append(mine, b)
				b++
			}
			wg.Wait()
			close(errs)
			if err := <-errs; err != nil {
				return err
			}
		case op < 14:
			rows, live := batchRows(b, 1+rng.IntN(80))
			if err := write(b, rows, live); err != nil {
				return err
			}
			mine = append(mine, b)
			b++
		case op < 16 && len(mine) > 0:
			victim := mine[rng.IntN(len(mine))]
			say("D %d", victim)
			if _, err := tbl.DeleteWhere(ctx, Matcher{Filter: query.Compare("v", query.Eq, victim)}, WriteOptions{Now: base}); err != nil {
				return err
			}
			say("d %d", victim)
		default:
			kind := []CompactionKind{Cumulative, Base, Full}[rng.IntN(3)]
			if err := tbl.CompactAt(ctx, kind, base); err != nil {
				return err
			}
		}
	}
}

// batchState is what the parent knows of one batch.
type batchState struct {
	live int64
	// present: acknowledged (or seen whole after a crash) and not deleted.
	present bool
	// inFlight: its write or delete started and was not acknowledged.
	writing, deleting bool
	deleted           bool
}

func TestProcessCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	soak := soakDuration(t)
	for mi, model := range []schema.Model{schema.Duplicate, schema.UniqueMOW, schema.UniqueMOR} {
		t.Run(modelName(model), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "t")
			tbl := mustCreate(t, dir, modelDef(model, false), crashChildOptions())
			checkClose(t, tbl)
			batches := map[int64]*batchState{}
			next := int64(1)
			deadline := time.Now().Add(soak)
			for it := 0; it < 4 || time.Now().Before(deadline); it++ {
				seed := uint64(mi*1000 + it + 1)
				killAfter := time.Duration(100+rand.New(rand.NewPCG(seed, 1)).IntN(300)) * time.Millisecond
				lines := runCrashChild(t, dir, seed, next, killAfter)
				acked := applyCrashLog(t, batches, lines)
				where := fmt.Sprintf("seed %d (killed %v after the first write, %d writes acknowledged, %d lines)", seed, killAfter, acked, len(lines))
				next = verifyAfterCrash(t, dir, batches, where)
				t.Log(where)
			}
		})
	}
}

// runCrashChild runs one child for killAfter, kills it and returns its
// protocol lines.
func runCrashChild(t *testing.T, dir string, seed uint64, first int64, killAfter time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		crashEnvDir+"="+dir,
		crashEnvSeed+"="+strconv.FormatUint(seed, 10),
		crashEnvFirst+"="+strconv.FormatInt(first, 10),
	)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		once := sync.Once{}
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "@@ ") {
				once.Do(func() { close(started) })
				mu.Lock()
				lines = append(lines, l[3:])
				mu.Unlock()
			}
		}
	}()
	// Count the time from the first write, not from the process start
	// (which -race makes slow).
	select {
	case <-started:
	case <-done:
	case <-time.After(30 * time.Second):
	}
	time.Sleep(killAfter)
	cmd.Process.Kill()
	<-done
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v before the kill:\n%s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "DATA RACE") || strings.Contains(stderr.String(), "panic") {
		t.Fatalf("child:\n%s", stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	return lines
}

// applyCrashLog updates what the parent knows from a child's lines and
// returns how many writes were acknowledged.
func applyCrashLog(t *testing.T, batches map[int64]*batchState, lines []string) int {
	t.Helper()
	acked := 0
	for _, l := range lines {
		var op string
		var b, live int64
		if n, _ := fmt.Sscanf(l, "%s %d %d", &op, &b, &live); n < 2 {
			t.Fatalf("bad line %q", l)
		}
		st := batches[b]
		switch op {
		case "B":
			batches[b] = &batchState{live: live, writing: true}
		case "A":
			st.writing, st.present = false, true
			acked++
		case "D":
			st.deleting = true
		case "d":
			st.deleting, st.present, st.deleted = false, false, true
		default:
			t.Fatalf("bad line %q", l)
		}
	}
	return acked
}

// verifyAfterCrash reopens the table, checks every batch and settles the
// unacknowledged ones by what survived; it returns the next batch id.
func verifyAfterCrash(t *testing.T, dir string, batches map[int64]*batchState, where string) int64 {
	t.Helper()
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	o := crashChildOptions()
	o.Allocator = mem
	o.DisableAutoCompaction = true
	tbl, err := Open(dir, o)
	if err != nil {
		t.Fatalf("%s: reopen: %v", where, err)
	}
	defer tbl.Close()
	if err := tbl.Check(); err != nil {
		t.Fatalf("%s: check: %v", where, err)
	}
	counts := map[int64]int64{}
	r, err := tbl.Scan(context.Background(), query.Request{Now: base, Columns: []string{"v"}})
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		rec := r.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			counts[schema.ValueAt(rec.Column(0), i).Int]++
		}
	}
	if err := r.Err(); err != nil {
		t.Fatalf("%s: scan: %v", where, err)
	}
	r.Release()
	next := int64(1)
	for b, st := range batches {
		next = max(next, b+1)
		got := counts[b]
		delete(counts, b)
		whole := got == st.live
		switch {
		case got != 0 && !whole:
			t.Fatalf("%s: batch %d shows %d of its %d rows (%+v)", where, b, got, st.live, *st)
		case st.deleting:
			st.deleting = false
			st.present, st.deleted = got != 0, got == 0
		case st.writing:
			st.writing = false
			st.present = whole && got != 0 || st.live == 0
		case st.present && !whole:
			t.Fatalf("%s: acknowledged batch %d shows %d of its %d rows", where, b, got, st.live)
		case !st.present && got != 0:
			t.Fatalf("%s: deleted batch %d shows %d rows", where, b, got)
		}
	}
	for b, n := range counts {
		t.Fatalf("%s: %d rows of batch %d, which was never written", where, n, b)
	}
	return next
}
