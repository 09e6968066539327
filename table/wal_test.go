package table

import (
	"bytes"
	"context"
	"encoding/binary"
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
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/vfs"
)

func walBody(seq uint64) []byte { return fmt.Appendf(nil, "rows of write %d", seq) }

// commitNumbered commits the body walBody gives the number the record
// gets: with one writer at a time that number is the next one.
func commitNumbered(w *walWriter, noSync bool, apply func(uint64)) (uint64, error) {
	w.mu.Lock()
	next := w.nextSeq
	w.mu.Unlock()
	return w.commit(walBody(next), noSync, apply)
}

// mkdirDurable makes a directory that survives a crash.
func mkdirDurable(t *testing.T, fsys vfs.FS, dir string) {
	t.Helper()
	if err := fsys.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SyncDir(filepath.Dir(dir)); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// fileNums hands out file numbers from 1, as a version set does.
func fileNums() func() uint64 {
	var n atomic.Uint64
	return func() uint64 { return n.Add(1) }
}

// replayedSeqs returns the numbers of the replayed records, checking that
// each body is the one written under its number (walBody).
func replayedSeqs(t *testing.T, fsys vfs.FS, dir string) []uint64 {
	t.Helper()
	return replayedWith(t, fsys, dir, walBody)
}

func replayedWith(t *testing.T, fsys vfs.FS, dir string, body func(uint64) []byte) []uint64 {
	t.Helper()
	segs, err := replayWAL(fsys, dir)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	var out []uint64
	for _, s := range segs {
		for _, r := range s.records {
			if !bytes.Equal(r.body, body(r.seq)) {
				t.Fatalf("record %d holds %q", r.seq, r.body)
			}
			out = append(out, r.seq)
		}
	}
	return out
}

// TestWALGroupCommit: concurrent writers share syncs; every record is
// applied once, in number order, before its writer returns, and replays.
func TestWALGroupCommit(t *testing.T) {
	mem := vfs.NewMemFS()
	slowSync := vfs.InjectorFunc(func(op vfs.Op, path string) error {
		if op == vfs.OpSync {
			time.Sleep(2 * time.Millisecond) // a disk's sync: writers pile up behind it
		}
		return nil
	})
	fsys := vfs.NewErrorFS(mem, slowSync)
	mkdirDurable(t, fsys, "/t")
	w, err := openWALWriter(fsys, "/t", fileNums(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 16, 20
	var applied []uint64 // appended by leaders only, one at a time
	var bodies sync.Map  // seq -> body
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				body := fmt.Appendf(nil, "writer %d write %d", g, i)
				var mine uint64
				got, err := w.commit(body, false, func(s uint64) {
					applied = append(applied, s)
					mine = s
				})
				if err != nil {
					t.Error(err)
					return
				}
				if got != mine {
					t.Errorf("write %d returned before it was applied (%d)", got, mine)
					return
				}
				bodies.Store(got, body)
			}
		}()
	}
	wg.Wait()
	if len(applied) != writers*each {
		t.Fatalf("%d records applied, want %d", len(applied), writers*each)
	}
	for i, s := range applied {
		if s != uint64(i+1) {
			t.Fatalf("applied[%d] = %d: not in queue order", i, s)
		}
	}
	if w.syncs > writers*each/2 {
		t.Errorf("%d syncs for %d writes: writers do not share syncs", w.syncs, writers*each)
	}
	t.Logf("%d writes, %d syncs", writers*each, w.syncs)
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	crashed := mem.CrashClone(nil)
	body := func(s uint64) []byte { b, _ := bodies.Load(s); return b.([]byte) }
	if got := replayedWith(t, crashed, "/t", body); len(got) != writers*each {
		t.Fatalf("%d records after a crash, want %d", len(got), writers*each)
	}
}

// TestWALFailedSyncFailsGroup: a failed sync fails every writer of its
// group and applies none of their records; the next write goes to a new
// segment, and after a crash the log holds exactly the acknowledged
// records.
func TestWALFailedSyncFailsGroup(t *testing.T) {
	mem := vfs.NewMemFS()
	release := make(chan struct{})
	var syncs atomic.Int32
	inj := vfs.InjectorFunc(func(op vfs.Op, path string) error {
		if op != vfs.OpSync {
			return nil
		}
		switch syncs.Add(1) {
		case 1:
			<-release // the first group waits on its sync while others queue
		case 2:
			return &vfs.InjectedError{Op: op, Path: path, Err: vfs.ErrInjected}
		}
		return nil
	})
	fsys := vfs.NewErrorFS(mem, inj)
	mkdirDurable(t, fsys, "/t")
	w, err := openWALWriter(fsys, "/t", fileNums(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var applied []uint64
	apply := func(s uint64) { applied = append(applied, s) }
	commit := func() (uint64, error) {
		return w.commit([]byte("a write"), false, apply)
	}
	first := make(chan error, 1)
	go func() { _, err := commit(); first <- err }()
	waitFor(t, "the first group's sync", func() bool { return syncs.Load() > 0 })
	const group = 8
	errs := make(chan error, group)
	for range group {
		go func() { _, err := commit(); errs <- err }()
	}
	waitFor(t, "the writers to queue", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.queue) == group
	})
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first write: %v", err)
	}
	for range group {
		if err := <-errs; !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("a writer of the failed group got %v, want the injected failure", err)
		}
	}
	if len(applied) != 1 || applied[0] != 1 {
		t.Fatalf("applied %v, want only record 1", applied)
	}
	seq, err := commit()
	if err != nil {
		t.Fatalf("write after the failed sync: %v", err)
	}
	if seq != group+2 {
		t.Fatalf("write after the failed group got number %d, want %d (numbers are never reused)", seq, group+2)
	}
	if w.num == 1 {
		t.Fatal("the write after a failed sync went to the segment whose contents are unknown")
	}
	crashed := mem.CrashClone(nil)
	same := func(uint64) []byte { return []byte("a write") }
	if got := replayedWith(t, crashed, "/t", same); fmt.Sprint(got) != fmt.Sprint([]uint64{1, seq}) {
		t.Fatalf("after a crash the log holds %v, want [1 %d]", got, seq)
	}
}

// TestWALPipelinedGroups: the next group writes and syncs while the group
// before it is still being applied, but applies its records, and returns
// to its writers, only after that group did, so versions become current in
// log order; a failed sync of the next group fails its writers, applies
// none of their records and holds no later group back.
func TestWALPipelinedGroups(t *testing.T) {
	mem := vfs.NewMemFS()
	var syncs atomic.Int32
	inj := vfs.InjectorFunc(func(op vfs.Op, path string) error {
		if op == vfs.OpSync && syncs.Add(1) == 3 {
			return &vfs.InjectedError{Op: op, Path: path, Err: vfs.ErrInjected}
		}
		return nil
	})
	fsys := vfs.NewErrorFS(mem, inj)
	mkdirDurable(t, fsys, "/t")
	w, err := openWALWriter(fsys, "/t", fileNums(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var applied []uint64
	apply := func(s uint64) {
		mu.Lock()
		applied = append(applied, s)
		mu.Unlock()
	}
	appliedNow := func() string {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprint(applied)
	}
	hold := make(chan struct{})
	type result struct {
		seq uint64
		err error
	}
	commitAsync := func(apply func(uint64)) chan result {
		ch := make(chan result, 1)
		go func() {
			seq, err := w.commit([]byte("a write"), false, apply)
			ch <- result{seq, err}
		}()
		return ch
	}
	// Group 1 (record 1) is synced, then held in its apply.
	first := commitAsync(func(s uint64) { <-hold; apply(s) })
	waitFor(t, "the first group's sync", func() bool { return syncs.Load() == 1 })
	// Group 2 (record 2) writes and syncs meanwhile: it does not wait for
	// group 1's apply to take the lead.
	second := commitAsync(apply)
	waitFor(t, "the second group's sync while the first is applied", func() bool { return syncs.Load() == 2 })
	// Group 3 (record 3) fails its sync, also while group 1 is held.
	third := commitAsync(apply)
	waitFor(t, "the third group's sync", func() bool { return syncs.Load() == 3 })
	time.Sleep(10 * time.Millisecond)
	select {
	case r := <-second:
		t.Fatalf("the second group returned (%v) before the first was applied", r)
	case r := <-third:
		t.Fatalf("the third group returned (%v) before the first was applied", r)
	default:
	}
	if got := appliedNow(); got != "[]" {
		t.Fatalf("applied %s while the first group was held, want nothing", got)
	}
	close(hold)
	if r := <-first; r.err != nil || r.seq != 1 {
		t.Fatalf("first write: %d, %v", r.seq, r.err)
	}
	if r := <-second; r.err != nil || r.seq != 2 {
		t.Fatalf("second write: %d, %v", r.seq, r.err)
	}
	if r := <-third; !errors.Is(r.err, vfs.ErrInjected) {
		t.Fatalf("a write whose sync failed got %v, want the injected failure", r.err)
	}
	if got := appliedNow(); got != "[1 2]" {
		t.Fatalf("applied %s, want [1 2]: in log order, without the failed record", got)
	}
	if r := <-commitAsync(apply); r.err != nil || r.seq != 4 {
		t.Fatalf("write after the failed group: %d, %v", r.seq, r.err)
	}
	if got := appliedNow(); got != "[1 2 4]" {
		t.Fatalf("applied %s, want [1 2 4]", got)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	same := func(uint64) []byte { return []byte("a write") }
	if got := replayedWith(t, mem.CrashClone(nil), "/t", same); fmt.Sprint(got) != "[1 2 4]" {
		t.Fatalf("after a crash the log holds %v, want [1 2 4]", got)
	}
}

// TestWALCrashAtEveryOperation: a crash before any operation of the log
// (strict, and losing a random part of what was not synced) leaves every
// acknowledged record, whole, and nothing that was not written.
func TestWALCrashAtEveryOperation(t *testing.T) {
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
	inj := vfs.InjectorFunc(func(op vfs.Op, path string) error {
		if op&vfs.WriteOps != 0 {
			states = append(states, state{mem.CrashClone(nil), acked}, state{mem.CrashClone(rng), acked})
		}
		return nil
	})
	fsys := vfs.NewErrorFS(mem, inj)
	mkdirDurable(t, mem, "/t")
	w, err := openWALWriter(fsys, "/t", fileNums(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		seq, err := commitNumbered(w, i%5 == 4, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i%5 != 4 {
			acked = int(seq) // durable: every record up to it
		}
	}
	states = append(states, state{mem.CrashClone(nil), acked})
	for i, st := range states {
		got := replayedSeqs(t, st.fs, "/t")
		if len(got) < st.acked {
			t.Fatalf("crash state %d: %d records, %d were acknowledged", i, len(got), st.acked)
		}
		for j, s := range got {
			if s != uint64(j+1) {
				t.Fatalf("crash state %d: records %v", i, got)
			}
		}
	}
}

// TestWALReplayRefusesDamage: damage before a segment's tail, or numbers
// that do not increase across segments, is corruption naming the file.
func TestWALReplayRefusesDamage(t *testing.T) {
	write := func(fsys vfs.FS, name string, seqs ...uint64) []byte {
		var data []byte
		for _, s := range seqs {
			data = appendRecord(data, append(binary.AppendUvarint(nil, s), walBody(s)...))
		}
		if err := vfs.WriteFileAtomic(fsys, name, data); err != nil {
			t.Fatal(err)
		}
		return data
	}
	t.Run("flipped byte", func(t *testing.T) {
		fsys := vfs.NewMemFS()
		mkdirDurable(t, fsys, "/t")
		data := write(fsys, "/t/"+walName(3), 1, 2, 3)
		data[recordHeaderLen+2] ^= 1
		if err := vfs.WriteFileAtomic(fsys, "/t/"+walName(3), data); err != nil {
			t.Fatal(err)
		}
		_, err := replayWAL(fsys, "/t")
		if !errors.Is(err, rowttl.ErrCorruption) || !bytes.Contains([]byte(err.Error()), []byte("write-ahead log /t/WAL-000003")) {
			t.Fatalf("replay = %v, want corruption naming the segment", err)
		}
	})
	t.Run("numbers go back", func(t *testing.T) {
		fsys := vfs.NewMemFS()
		mkdirDurable(t, fsys, "/t")
		write(fsys, "/t/"+walName(3), 1, 2, 3)
		write(fsys, "/t/"+walName(5), 3, 4)
		_, err := replayWAL(fsys, "/t")
		if !errors.Is(err, rowttl.ErrCorruption) || !bytes.Contains([]byte(err.Error()), []byte(walName(5))) {
			t.Fatalf("replay = %v, want corruption naming the second segment", err)
		}
	})
	t.Run("torn tail", func(t *testing.T) {
		fsys := vfs.NewMemFS()
		mkdirDurable(t, fsys, "/t")
		data := write(fsys, "/t/"+walName(3), 1, 2, 3)
		if err := vfs.WriteFileAtomic(fsys, "/t/"+walName(3), data[:len(data)-4]); err != nil {
			t.Fatal(err)
		}
		if got := replayedSeqs(t, fsys, "/t"); fmt.Sprint(got) != "[1 2]" {
			t.Fatalf("replayed %v, want [1 2]", got)
		}
	})
}

// maskedSegment is a segment of the records numbered seqs, bodies
// walBody's, as the log writes them.
func maskedSegment(seqs ...uint64) []byte {
	var data []byte
	for _, s := range seqs {
		data = appendMaskedRecord(data, int64(len(data)), binary.AppendUvarint(nil, s), walBody(s))
	}
	return data
}

// FuzzWALSegment: decoding any bytes either fails with ErrCorruption or
// yields records whose encoding is the valid prefix.
func FuzzWALSegment(f *testing.F) {
	var data []byte
	for s := uint64(1); s <= 3; s++ {
		data = appendRecord(data, append(binary.AppendUvarint(nil, s), walBody(s)...))
	}
	masked := maskedSegment(1, 2, 3)
	for _, d := range [][]byte{data, masked} {
		f.Add(d)
		f.Add(d[:len(d)-5])
		f.Add(append(bytes.Clone(d), 0, 0, 0, 0))
	}
	f.Add(append(bytes.Clone(masked), make([]byte, tornSector)...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		name := filepath.Join("/t", walName(1))
		orig := bytes.Clone(data)
		seg, err := decodeWALSegment(name, data)
		if err != nil {
			if !errors.Is(err, rowttl.ErrCorruption) {
				t.Fatalf("error %v is not corruption", err)
			}
			return
		}
		isMasked := len(orig) >= 4 && binary.LittleEndian.Uint32(orig)&maskedFlag != 0
		var again []byte
		for _, r := range seg.records {
			seq := binary.AppendUvarint(nil, r.seq)
			if isMasked {
				again = appendMaskedRecord(again, int64(len(again)), seq, r.body)
			} else {
				again = appendRecord(again, append(seq, r.body...))
			}
		}
		data = orig
		if !bytes.Equal(again, data[:seg.valid]) {
			t.Fatalf("records re-encode to %d bytes, valid prefix is %d", len(again), seg.valid)
		}
	})
}

// TestWALRotateAndRetire: records queued after a rotation go to a new
// segment; retiring through a number deletes exactly the older segments
// whose records are all at or below it, under concurrent writers too.
func TestWALRotateAndRetire(t *testing.T) {
	fsys := vfs.NewMemFS()
	mkdirDurable(t, fsys, "/t")
	w, err := openWALWriter(fsys, "/t", fileNums(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := commitNumbered(w, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	first, err := w.rotate()
	if err != nil || first != 4 {
		t.Fatalf("rotate = %d, %v; want 4", first, err)
	}
	for range 2 {
		if _, err := commitNumbered(w, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.retire(2); err != nil {
		t.Fatal(err)
	}
	if got := replayedSeqs(t, fsys, "/t"); fmt.Sprint(got) != "[1 2 3 4 5]" {
		t.Fatalf("retire(2) left %v, want every record (record 3 shares their segment)", got)
	}
	if err := w.retire(first - 1); err != nil {
		t.Fatal(err)
	}
	if got := replayedSeqs(t, fsys, "/t"); fmt.Sprint(got) != "[4 5]" {
		t.Fatalf("retire(3) left %v, want [4 5]", got)
	}
	// The live segment is never retired.
	if err := w.retire(100); err != nil {
		t.Fatal(err)
	}
	if got := replayedSeqs(t, fsys, "/t"); fmt.Sprint(got) != "[4 5]" {
		t.Fatalf("retire(100) left %v, want the live segment's [4 5]", got)
	}

	// Concurrent writers: after each rotation and retirement, every
	// record numbered from the rotation's first on is still there.
	var wg sync.WaitGroup
	var bodies sync.Map
	stop := make(chan struct{})
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Appendf(nil, "writer %d write %d", g, i)
				seq, err := w.commit(body, false, nil)
				if err != nil {
					t.Error(err)
					return
				}
				bodies.Store(seq, body)
			}
		}()
	}
	for range 10 {
		first, err := w.rotate()
		if err != nil {
			t.Fatal(err)
		}
		if err := w.retire(first - 1); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	last, err := w.rotate()
	if err != nil {
		t.Fatal(err)
	}
	body := func(s uint64) []byte { b, _ := bodies.Load(s); return b.([]byte) }
	got := replayedWith(t, fsys, "/t", body)
	if len(got) == 0 || got[len(got)-1] != last-1 {
		t.Fatalf("the last record %d is missing (replayed %d records)", last-1, len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			t.Fatalf("records %d to %d are missing", got[i-1]+1, got[i]-1)
		}
	}
}

// TestWALPreallocatedSegment: records overwrite zeros written ahead of
// them, so that a commit neither grows the file nor changes more than its
// data: one sync per commit, no directory sync, no truncation, and the
// file's size moves only when the zeros run out.
func TestWALPreallocatedSegment(t *testing.T) {
	var mu sync.Mutex
	ops := map[vfs.Op]int{}
	count := vfs.InjectorFunc(func(op vfs.Op, path string) error {
		mu.Lock()
		ops[op]++
		mu.Unlock()
		return nil
	})
	dir := t.TempDir()
	fsys := vfs.NewErrorFS(vfs.Default, count)
	w, err := openWALWriter(fsys, dir, fileNums(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, walName(w.num))
	size := func() int64 {
		st, err := vfs.Default.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	if got := size(); got != walPreallocMin {
		t.Fatalf("a new segment holds %d bytes, want %d of zeros", got, walPreallocMin)
	}
	clear(ops)
	const n = 100
	for range n {
		if _, err := commitNumbered(w, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := size(); got != walPreallocMin {
		t.Fatalf("after %d small commits the segment holds %d bytes, want %d", n, got, walPreallocMin)
	}
	if ops[vfs.OpSync] != n || ops[vfs.OpWrite] != n || ops[vfs.OpSyncDir] != 0 || ops[vfs.OpTruncate] != 0 || ops[vfs.OpCreate] != 0 {
		t.Fatalf("%d commits made %v", n, ops)
	}
	// A record past the zeros extends them, by at least as much again.
	if _, err := w.commit(bytes.Repeat([]byte{1}, walPreallocMin), false, nil); err != nil {
		t.Fatal(err)
	}
	if got := size(); got < 2*walPreallocMin+int64(w.size-walPreallocMin) || got != w.alloc {
		t.Fatalf("after a record past the zeros the segment holds %d bytes (records %d, alloc %d)", got, w.size, w.alloc)
	}
	if w.bytes.Load() != w.alloc {
		t.Fatalf("Stats counts %d bytes of log, the file holds %d", w.bytes.Load(), w.alloc)
	}
	if got := replayedWith(t, vfs.Default, dir, func(s uint64) []byte {
		if s == n+1 {
			return bytes.Repeat([]byte{1}, walPreallocMin)
		}
		return walBody(s)
	}); len(got) != n+1 {
		t.Fatalf("replayed %d records, want %d", len(got), n+1)
	}
	records := w.size
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	if got := size(); got != records {
		t.Fatalf("a closed segment holds %d bytes, its records %d", got, records)
	}
}

// TestWALReplayHoles: in a preallocated segment, the sectors of records
// not yet synced reach the disk in any order, so a crash may leave zeros
// inside a record or before later ones: the records before the first
// such sector replay, and a record damaged another way is corruption.
func TestWALReplayHoles(t *testing.T) {
	for _, form := range []struct {
		name string
		enc  func(data []byte, seq, body []byte) []byte
	}{
		{"masked", func(data, seq, body []byte) []byte { return appendMaskedRecord(data, int64(len(data)), seq, body) }},
		{"unmasked", func(data, seq, body []byte) []byte { return appendRecord(data, append(seq, body...)) }},
	} {
		t.Run(form.name, func(t *testing.T) { testWALReplayHoles(t, form.enc, form.name == "masked") })
	}
}

func testWALReplayHoles(t *testing.T, enc func(data, seq, body []byte) []byte, masked bool) {
	body := func(s uint64) []byte {
		if s == 4 && masked {
			// A run of zeros a written record holds: masked, it never
			// reads as a sector the disk did not write.
			return make([]byte, 1500)
		}
		return bytes.Repeat([]byte{byte(s)}, 1500)
	}
	var data []byte
	var offs []int
	for s := uint64(1); s <= 5; s++ {
		offs = append(offs, len(data))
		data = enc(data, binary.AppendUvarint(nil, s), body(s))
	}
	data = append(data, make([]byte, walPreallocMin)...)
	sectorAt := func(off int) (int, int) { s := off - off%tornSector; return s, s + tornSector }
	for _, c := range []struct {
		name string
		hole int // an offset whose sector is lost
		want int // records replayed
	}{
		{"header of the third", offs[2] + 1, 2},
		{"inside the third", offs[2] + 700, 2},
		{"inside the last", offs[4] + 900, 4},
		{"first sector", 0, 0},
		{"tail of the third", offs[3] - 1, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := bytes.Clone(data)
			lo, hi := sectorAt(c.hole)
			clear(d[max(lo, offs[max(0, recordOf(offs, c.hole))]):hi])
			seg, err := decodeWALSegment(walName(1), d)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if len(seg.records) != c.want {
				t.Fatalf("replayed %d records, want %d", len(seg.records), c.want)
			}
			for i, r := range seg.records {
				if r.seq != uint64(i+1) || !bytes.Equal(r.body, body(r.seq)) {
					t.Fatalf("record %d: seq %d, %d bytes", i, r.seq, len(r.body))
				}
			}
		})
	}
	flipped := []int{offs[2] + 700}
	if masked {
		// Beside the run of zeros the fourth record holds.
		flipped = append(flipped, offs[3]+recordHeaderLen+1, offs[4]-1)
	}
	for _, pos := range flipped {
		t.Run(fmt.Sprintf("flipped byte %d", pos), func(t *testing.T) {
			d := bytes.Clone(data)
			d[pos] ^= 1
			if _, err := decodeWALSegment(walName(1), d); !errors.Is(err, rowttl.ErrCorruption) || !strings.Contains(err.Error(), walName(1)) {
				t.Fatalf("decode = %v, want corruption naming the segment", err)
			}
		})
	}
	t.Run("zeros in the payload short of a sector", func(t *testing.T) {
		d := bytes.Clone(data)
		lo, _ := sectorAt(offs[2] + 700)
		clear(d[lo+1 : lo+tornSector-1])
		if _, err := decodeWALSegment(walName(1), d); !errors.Is(err, rowttl.ErrCorruption) {
			t.Fatalf("decode = %v, want corruption", err)
		}
	})
}

// recordOf is the index of the record holding offset off.
func recordOf(offs []int, off int) int {
	i := 0
	for i+1 < len(offs) && offs[i+1] <= off {
		i++
	}
	return i
}

// TestWALGroupsGatherReturningWriters: writers that each wait for their
// own write before the next share a sync with the writers of the last
// group instead of taking turns with them in two cohorts, each sync
// covering half of them.
func TestWALGroupsGatherReturningWriters(t *testing.T) {
	slowSync := vfs.InjectorFunc(func(op vfs.Op, path string) error {
		if op == vfs.OpSync {
			time.Sleep(time.Millisecond)
		}
		return nil
	})
	fsys := vfs.NewErrorFS(vfs.NewMemFS(), slowSync)
	mkdirDurable(t, fsys, "/t")
	w, err := openWALWriter(fsys, "/t", fileNums(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 16, 30
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := w.commit([]byte("a write"), false, nil); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	perSync := float64(writers*each) / float64(w.syncs)
	t.Logf("%d writes, %d syncs: %.1f a sync", writers*each, w.syncs, perSync)
	if perSync <= writers/2+1 {
		t.Fatalf("%.1f writes a sync from %d writers: they take turns", perSync, writers)
	}
}

// TestWALGroupWriteAllocs checks that the leader's write of a group, the
// serial work every writer of the next group waits behind, allocates
// nothing once the log has written a group of that size.
func TestWALGroupWriteAllocs(t *testing.T) {
	fsys := vfs.NewMemFS()
	mkdirDurable(t, fsys, "/t")
	w, err := openWALWriter(fsys, "/t", fileNums(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	body := bytes.Repeat([]byte("row"), 20)
	group := make([]*walOp, 16)
	for i := range group {
		// Unsynced: a sync of MemFS copies the file, as a disk keeps
		// what it synced, which would be its allocation, not the log's.
		group[i] = &walOp{body: body}
	}
	seq := uint64(1)
	write := func() {
		for _, o := range group {
			o.seq = seq
			seq++
		}
		w.writeGroup(group)
		for _, o := range group {
			if o.err != nil {
				t.Fatal(o.err)
			}
		}
	}
	write()
	if n := testing.AllocsPerRun(50, write); n != 0 {
		t.Errorf("writing a group of 16 records allocates %v times, want 0", n)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	got := replayedWith(t, fsys, "/t", func(uint64) []byte { return body })
	for i, s := range got {
		if s != uint64(i+1) {
			t.Fatalf("replayed record %d is numbered %d", i, s)
		}
	}
	if len(got) != int(seq-1) {
		t.Fatalf("replay finds %d records, want %d", len(got), seq-1)
	}
}

// TestLoggedWriteAllocs bounds the allocations of a one-row logged write
// that gives every column: each is paid once per row by a service writing
// events one at a time, and at 16 goroutines CPU is what limits their rate.
// The body of a record reuses the space of an earlier one (loggedWrite's
// body), which the replay checks: a body reused while the log still
// referred to it would replay another write's row.
func TestLoggedWriteAllocs(t *testing.T) {
	fsys := vfs.NewMemFS()
	mem := memory.NewGoAllocator()
	def := modelDef(schema.Duplicate, false)
	// Every column given: no default column to build.
	def.Schema.Columns = def.Schema.Columns[:2]
	o := loggedOpts(fsys, mem)
	o.memChunkRows = 1 << 20
	o.MemtableBytes = 1 << 30
	tbl := mustCreate(t, "/t", def, o)
	ctx := context.Background()
	ttl := base.UnixMicro() + 3600e6
	next := int64(0)
	write := func() {
		rec := modelBatch(mem, []modelRow{{id: next, v: next * 10, ttl: &ttl}}, false)
		defer rec.Release()
		next++
		// Unsynced: a sync of MemFS copies the file, the file system's
		// allocation, not the write's.
		if err := tbl.WriteWith(ctx, rec, WriteOptions{NoSync: true}); err != nil {
			t.Fatal(err)
		}
	}
	write()
	// The record above is the test's: modelBatch allocates 16 times.
	rec := modelBatch(mem, []modelRow{{id: -1, v: -1, ttl: &ttl}}, false)
	made := testing.AllocsPerRun(50, func() { modelBatch(mem, []modelRow{{id: -1, v: -1, ttl: &ttl}}, false).Release() })
	rec.Release()
	got := testing.AllocsPerRun(200, write) - made
	// The physical batch (2), and per group of one: its apply signal
	// (1), the version with its memtable views (3).
	const limit = 6
	if got > limit {
		t.Errorf("a one-row logged write allocates %v times, want at most %d", got, limit)
	}
	// A durable write syncs the unsynced ones before it.
	last := modelBatch(mem, []modelRow{{id: next, v: next * 10, ttl: &ttl}}, false)
	mustWrite(t, tbl, last)
	last.Release()
	var want []string
	for id := range next + 1 {
		want = append(want, fmt.Sprintf("%d:%d", id, id*10))
	}
	re, err := Open("/t", loggedOpts(fsys.CrashClone(nil), mem))
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	tbl.Close()
	slices.Sort(want)
	if rows := tableVisible(t, re, base.UnixMicro()); !slices.Equal(rows, want) {
		t.Fatalf("after a crash the table holds %d rows %v..., want %d", len(rows), rows[:min(len(rows), 5)], len(want))
	}
}

// TestWALLoneWriterDoesNotYield: a leader with no other writer about
// (none arriving, none of an earlier group to wake, its last group its
// own record) takes its group without yielding, which would put it behind
// every runnable goroutine on every write; writers that fail before they
// queue end their arrival, so they never hold a leader back; and
// concurrent writers still gather.
func TestWALLoneWriterDoesNotYield(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewGoAllocator()
	tbl := mustCreate(t, filepath.Join(t.TempDir(), "t"), modelDef(schema.Duplicate, false),
		&Options{DisableAutoCompaction: true, FS: vfs.NewMemFS()})
	defer tbl.Close()
	rec := modelBatch(mem, []modelRow{{id: 1, v: 1}}, false)
	defer rec.Release()
	y0 := tbl.wal.yields.Load()
	for i := range 200 {
		if err := tbl.WriteWith(ctx, rec, WriteOptions{Label: fmt.Sprintf("l%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := tbl.wal.yields.Load() - y0; n != 0 {
		t.Fatalf("200 writes of a lone writer yielded %d times, want 0", n)
	}

	// Failures after the writer announced itself: a row the table
	// refuses, a label already used.
	b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{{Name: "nope", Type: arrow.PrimitiveTypes.Int64}}, nil))
	b.Field(0).(*array.Int64Builder).Append(1)
	bad := b.NewRecordBatch()
	b.Release()
	defer bad.Release()
	if err := tbl.Write(ctx, bad); !errors.Is(err, rowttl.ErrNotFound) {
		t.Fatalf("write of an unknown column: %v, want ErrNotFound", err)
	}
	if err := tbl.WriteWith(ctx, rec, WriteOptions{Label: "l0"}); !errors.Is(err, rowttl.ErrLabelExists) {
		t.Fatalf("write of a used label: %v, want ErrLabelExists", err)
	}
	if n := tbl.wal.arriving.Load(); n != 0 {
		t.Fatalf("%d writers still arriving after every write returned", n)
	}
	if n := tbl.wal.unfinished.Load(); n != 0 {
		t.Fatalf("%d records of finished groups still to wake", n)
	}
	if err := tbl.Write(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if n := tbl.wal.yields.Load() - y0; n != 0 {
		t.Fatalf("a lone writer after failed writes yielded %d times, want 0", n)
	}

	// Sixteen writers at once: a leader that finds them about yields to
	// let them queue.
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if err := tbl.Write(ctx, rec); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if tbl.wal.yields.Load() == y0 {
		t.Fatal("sixteen concurrent writers: no leader yielded to gather them")
	}
	if n := tbl.wal.arriving.Load(); n != 0 {
		t.Fatalf("%d writers still arriving after every write returned", n)
	}
	if got, err := tbl.Count(ctx, base, nil); err != nil || got != 200+1+16*20 {
		t.Fatalf("count %d, %v: want %d", got, err, 200+1+16*20)
	}
}
