package table

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/vfs"
)

// The write-ahead log holds small writes until a flush makes them a
// rowset. It is a sequence of segment files WAL-000123 (numbered from the
// table's file numbers, so a later segment has a larger number), each a
// sequence of records framed as manifest records are (see appendRecord),
// their payloads masked (see appendMaskedRecord):
//
//	payload   | seq (uvarint) | body |
//
// Segments written before masking hold unmasked records; they replay as
// they were written (see readFrames).
//
// seq numbers the records in the order writers queued them, across
// segments, strictly increasing; a number whose write failed is never
// used again, so numbers may skip but never repeat, and a record that a
// failed sync left durable after all cannot be confused with a later one.
//
// Group commit: writers queue their records; the first writer that finds
// no leader leads: it writes every queued record in one write, syncs once
// if any of them asked for a sync, hands the lead to the first writer
// queued meanwhile, then applies its records in queue order and wakes
// their writers. The groups form a pipeline: the next leader writes and
// syncs its group while the last one is applied, so that the apply, the
// publication and the wake-ups are off the path from one sync to the
// next; a leader applies its group only after the group before it was
// applied, so records become visible in log order, and a writer returns
// only after its record is applied. A group writes only after the sync
// of the group before it returned, so a record never lies in a segment
// after records whose sync failed (see below).
// A failed write or sync fails every writer of that group and applies none
// of its records. After a failed sync the segment's contents are unknown,
// so the next group first starts a new segment; until one can be made,
// every commit fails.
//
// A segment is preallocated: zeros written ahead of the records, in steps
// that grow with it (walPreallocMin doubling up to walPreallocMax), and
// records overwrite them in place. A sync of a file that neither grows
// nor changes its metadata (fdatasync) writes the data alone; a sync of an
// appended file also commits the file system's journal for the new size,
// a second device write and flush on every commit. The zeros after the
// last record end the segment as a torn tail does (see decodeWALSegment);
// close cuts them off the live segment.
const walPrefix = "WAL-"

// The steps of a segment's preallocation.
const (
	walPreallocMin = 64 << 10
	walPreallocMax = 4 << 20
)

func walName(num uint64) string { return fmt.Sprintf("%s%06d", walPrefix, num) }

// parseWALName returns the number of a WAL segment file name.
func parseWALName(name string) (uint64, bool) {
	var num uint64
	if _, err := fmt.Sscanf(name, walPrefix+"%06d", &num); err != nil || walName(num) != name {
		return 0, false
	}
	return num, true
}

// walOp is one queued record.
type walOp struct {
	seq   uint64
	body  []byte
	sync  bool
	apply func(seq uint64)
	err   error
	// wake receives once: lead set means the op's writer leads next,
	// else the op is done (err set).
	wake chan struct{}
	lead bool
	// rotate asks for a new segment instead of writing a record; seq is
	// then the number of the first record the new segment may hold.
	rotate bool
	// hooks, when set, stamp and apply the record in place of apply
	// (see walHooks).
	hooks  walHooks
	prefix []byte
	// arrived says that the op's writer announced itself with arrive:
	// queueing the op ends its arrival.
	arrived bool
}

// walHooks are the hooks of a record that holds something its writer
// hands out in queue order (a version) before its body. An interface
// rather than two closures, so that a writer can keep its walOp and the
// state its hooks share in one value it reuses: a one-row write pays for
// every allocation once per row.
type walHooks interface {
	// stamp gives what the record holds before body; it is called with
	// the record's number in queue order, under the queue's mutex, so
	// what it hands out grows with the numbers.
	stamp(seq uint64) []byte
	// apply is walOp.apply.
	apply(seq uint64)
}

// walWriter appends records to the live segment with group commit.
type walWriter struct {
	fs         vfs.FS
	dir        string
	newFileNum func() uint64
	// afterGroup, when set, runs once after the applies of a group's
	// records, before any of their writers returns: what they applied
	// one by one is published there at once.
	afterGroup func()

	mu      sync.Mutex // guards queue, spare, leading, nextSeq, applied, lastGroup
	queue   []*walOp
	leading bool
	nextSeq uint64
	// lastGroup is the size of the last group taken from the queue.
	lastGroup int
	// applied is closed once the last group taken from the queue has been
	// applied: the leader of the next group applies its records after.
	applied chan struct{}
	// spare is the list of a group its leader is done with, emptied, for
	// the queue to take when it starts anew: a queue grown from nil would
	// allocate about five times for every group of 16 records.
	spare []*walOp

	// Owned by the leader.
	f    vfs.File
	num  uint64
	size int64
	// alloc is the size of the live segment's file: the records end at
	// size, zeros follow.
	alloc  int64
	failed error
	// syncs counts the syncs of the log (tests and Stats).
	syncs int64
	// unsynced says that the live segment holds records written without a
	// sync since its last one.
	unsynced bool
	// last is the largest number given to a record of the live segment.
	last uint64
	// buf is the encoding of the group being written, kept for the next
	// group: the leader's work between two syncs is time every writer
	// of the next group waits, so it allocates nothing it can reuse.
	buf []byte
	// bytes is the size of every segment file kept, preallocated zeros
	// included (Stats).
	bytes atomic.Int64
	// arriving counts the writers between arrive and the queueing of
	// their record, and unfinished the records of groups taken from the
	// queue whose writers have not yet resumed (each writer counts itself
	// out as it resumes, so that one just woken, about to arrive again,
	// still counts): the writers a leader's gather may wait for.
	arriving, unfinished atomic.Int64
	// yields counts gather's yields (tests).
	yields atomic.Int64

	segMu sync.Mutex
	// old are the segments before the live one, oldest first, with the
	// largest number given to a record of each.
	old []walSegmentInfo
}

// walSegmentInfo is a segment that no record goes to any more.
type walSegmentInfo struct {
	num, last uint64
	size      int64
}

// openWALWriter starts a new segment whose first record will be numbered
// nextSeq; the segment is durable (its directory entry synced) before it
// returns.
// The segments found at open (existing) are retired like later ones.
func openWALWriter(fsys vfs.FS, dir string, newFileNum func() uint64, nextSeq uint64, existing []walSegment) (*walWriter, error) {
	w := &walWriter{fs: fsys, dir: dir, newFileNum: newFileNum, nextSeq: nextSeq}
	for _, s := range existing {
		info := walSegmentInfo{num: s.num, size: s.size}
		w.bytes.Add(s.size)
		if n := len(s.records); n > 0 {
			info.last = s.records[n-1].seq
		}
		w.old = append(w.old, info)
	}
	if err := w.newSegment(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *walWriter) newSegment() error {
	if w.f != nil && w.unsynced && w.failed == nil {
		// Records acknowledged without a sync must not be lost while
		// later ones, in the next segment, survive: a power cut keeps a
		// prefix of the writes.
		w.syncs++
		if err := vfs.DataSync(w.f); err != nil {
			err = fmt.Errorf("sync write-ahead log %s: %w", walName(w.num), err)
			w.failed = err
			return err
		}
		w.unsynced = false
	}
	num := w.newFileNum()
	name := filepath.Join(w.dir, walName(num))
	f, err := w.fs.Create(name)
	if err != nil {
		return fmt.Errorf("create write-ahead log %s: %w", name, err)
	}
	// The first sync of records makes these zeros durable with them.
	if _, err := f.WriteAt(walZeros()[:walPreallocMin], 0); err != nil {
		f.Close()
		return fmt.Errorf("preallocate write-ahead log %s: %w", name, err)
	}
	if err := w.fs.SyncDir(w.dir); err != nil {
		f.Close()
		return fmt.Errorf("sync directory of write-ahead log %s: %w", name, err)
	}
	if w.f != nil {
		w.f.Close()
		w.segMu.Lock()
		w.old = append(w.old, walSegmentInfo{num: w.num, last: w.last, size: w.alloc})
		w.segMu.Unlock()
	}
	w.bytes.Add(walPreallocMin)
	w.f, w.num, w.size, w.alloc, w.failed, w.unsynced = f, num, 0, walPreallocMin, nil, false
	return nil
}

// preallocate makes the live segment's file hold at least end bytes,
// zeros after its records; the sync of the records written next makes
// the zeros durable with them.
func (w *walWriter) preallocate(end int64) error {
	if end <= w.alloc {
		return nil
	}
	grow := min(max(w.alloc, walPreallocMin), walPreallocMax)
	n := end - w.alloc + grow
	zeros := walZeros()
	for n > 0 {
		k := min(n, int64(len(zeros)))
		if _, err := w.f.WriteAt(zeros[:k], w.alloc); err != nil {
			// Zeros past alloc, if some were written, read as a torn tail.
			return fmt.Errorf("preallocate write-ahead log %s: %w", walName(w.num), err)
		}
		w.alloc += k
		w.bytes.Add(k)
		n -= k
	}
	return nil
}

// walZeros is the zeros preallocate writes, never written to: allocated
// once rather than cleared anew for every step.
var walZeros = sync.OnceValue(func() []byte { return make([]byte, walPreallocMax) })

// rotate starts a new segment for the records queued after the call and
// returns the number of the first of them: every record numbered below it
// lies in an older segment, which retire can then delete.
func (w *walWriter) rotate() (uint64, error) {
	return w.run(&walOp{rotate: true, wake: make(chan struct{}, 1)})
}

// retire deletes the segments before the live one whose records are all
// numbered at most through (a flush made them part of a rowset). The
// deletion need not be durable: replay skips records the manifest says
// were flushed.
func (w *walWriter) retire(through uint64) error {
	w.segMu.Lock()
	defer w.segMu.Unlock()
	keep := w.old[:0]
	var err error
	for _, s := range w.old {
		if s.last > through || err != nil {
			keep = append(keep, s)
			continue
		}
		if rerr := w.fs.Remove(filepath.Join(w.dir, walName(s.num))); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = fmt.Errorf("remove write-ahead log %s: %w", walName(s.num), rerr)
			keep = append(keep, s)
			continue
		}
		w.bytes.Add(-s.size)
	}
	w.old = keep
	return err
}

// commit appends body as one record, numbered after every record queued
// before it, and returns its number once the record is written and, unless
// noSync, synced. apply, when set, runs in number order for every record
// of the group after the write (and sync) that covers it and before any of
// their writers returns, and afterGroup after the last of them; neither
// may call commit.
func (w *walWriter) commit(body []byte, noSync bool, apply func(seq uint64)) (uint64, error) {
	return w.run(&walOp{body: body, sync: !noSync, apply: apply, wake: make(chan struct{}, 1)})
}

// commitRecord is commit of op, a record of op.hooks (see walHooks) whose
// body and sync are set. op.wake must be an empty channel of capacity 1;
// it is empty again when commitRecord returns, and the log keeps no
// reference to op then, so the caller may reuse op and its channel.
func (w *walWriter) commitRecord(op *walOp) (uint64, error) {
	op.lead, op.err, op.prefix = false, nil, nil
	return w.run(op)
}

// lastSeq is the number of the last record queued so far.
func (w *walWriter) lastSeq() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.nextSeq - 1
}

// run queues op and returns once its group is done.
func (w *walWriter) run(op *walOp) (uint64, error) {
	w.mu.Lock()
	op.seq = w.nextSeq
	if op.arrived {
		w.arriving.Add(-1)
	}
	if !op.rotate {
		w.nextSeq++
	}
	if op.hooks != nil {
		op.prefix = op.hooks.stamp(op.seq)
	}
	if w.queue == nil {
		w.queue, w.spare = w.spare, nil
	}
	w.queue = append(w.queue, op)
	if w.leading {
		w.mu.Unlock()
		<-op.wake
		if !op.lead {
			w.unfinished.Add(-1)
			return op.seq, op.err
		}
		w.mu.Lock()
	}
	w.leading = true
	if op.sync {
		w.gather()
	}
	group := w.queue
	w.queue = nil
	w.lastGroup = len(group)
	w.unfinished.Add(int64(len(group)))
	prev := w.applied
	applied := make(chan struct{})
	w.applied = applied
	w.mu.Unlock()

	start := 0
	for i, o := range group {
		if !o.rotate {
			continue
		}
		if i > start {
			w.writeGroup(group[start:i])
		}
		o.err = w.newSegment()
		start = i + 1
	}
	if start < len(group) {
		w.writeGroup(group[start:])
	}

	// The group is durable (or failed): the next leader writes and syncs
	// its group while this one applies and wakes its writers, which it
	// does only after the group before it did, so that versions become
	// current in log order whatever order the leaders run in.
	w.mu.Lock()
	if len(w.queue) > 0 {
		next := w.queue[0]
		next.lead = true
		next.wake <- struct{}{}
	} else {
		w.leading = false
	}
	w.mu.Unlock()
	if prev != nil {
		<-prev
	}
	w.applyGroup(group)
	close(applied)
	for _, o := range group {
		if o != op {
			o.wake <- struct{}{}
		}
	}
	// The writers woken may reuse their ops at once: the list keeps none.
	seq, err := op.seq, op.err
	clear(group)
	w.mu.Lock()
	if w.spare == nil && cap(group) <= walKeepGroup {
		w.spare = group[:0]
	}
	w.mu.Unlock()
	w.unfinished.Add(-1)
	return seq, err
}

// walKeepGroup bounds the list of a group kept for the next: a burst of
// writers does not pin its size.
const walKeepGroup = 1024

// applyGroup applies the records of a group that were written (and
// synced where asked), in number order, then runs afterGroup.
func (w *walWriter) applyGroup(group []*walOp) {
	applied := false
	for _, o := range group {
		if o.rotate || o.err != nil {
			continue
		}
		switch {
		case o.hooks != nil:
			o.hooks.apply(o.seq)
			applied = true
		case o.apply != nil:
			o.apply(o.seq)
			applied = true
		}
	}
	if applied && w.afterGroup != nil {
		w.afterGroup()
	}
}

// gather lets the writers that are about to queue do so before the
// leader takes the queue, for as long as each yield brings more of them
// and some writer is still about (arriving, or of a group whose writers
// have not all resumed); called with mu held, it returns with mu held.
// A lone writer's leader
// returns at once: no writer arriving, none of an earlier group still to
// wake, and the last group of one record (a group of more, just woken,
// may be about to arrive). A yield is not free, since a yielding goroutine
// waits behind every runnable one (a flush, a compaction, the collector),
// and a lone writer would pay it on every write for no one.
//
// The writers of the last group were woken as this leader took over: if
// they queued only after it took the queue, they would wait for the next
// group, and writers that each wait for their own write would split into
// two cohorts taking turns, each sync covering half of them.
func (w *walWriter) gather() {
	for range maxGatherYields {
		if w.lastGroup <= 1 && w.arriving.Load() == 0 && w.unfinished.Load() == 0 {
			return
		}
		n := len(w.queue)
		w.mu.Unlock()
		w.yields.Add(1)
		runtime.Gosched()
		w.mu.Lock()
		if len(w.queue) == n || w.arriving.Load() == 0 && w.unfinished.Load() == 0 {
			// No one came, or every writer about has queued: a further
			// yield would only wait behind the other goroutines.
			return
		}
	}
}

// arrive announces a writer that will queue a record marked arrived soon,
// so that a leader gathering its group waits for it; a writer that
// arrives and then does not queue must call depart.
func (w *walWriter) arrive() { w.arriving.Add(1) }

// depart ends an arrival whose record is not queued after all.
func (w *walWriter) depart() { w.arriving.Add(-1) }

// maxGatherYields bounds how long gather may hold a group back.
const maxGatherYields = 4

// walKeepBuf is the largest group encoding the leader keeps for the next
// group: groups of one-row writes fit many times over.
const walKeepBuf = 1 << 20

// writeGroup writes and syncs one group; it sets each op's err.
func (w *walWriter) writeGroup(group []*walOp) {
	fail := func(err error) {
		for _, o := range group {
			o.err = err
		}
	}
	if w.failed != nil {
		// What the segment holds is unknown: carry on in a new one.
		if err := w.newSegment(); err != nil {
			fail(fmt.Errorf("write-ahead log unusable after %v: %w", w.failed, err))
			return
		}
	}
	needSync := false
	w.last = max(w.last, group[len(group)-1].seq)
	size := 0
	for _, o := range group {
		size += recordHeaderLen + binary.MaxVarintLen64 + len(o.prefix) + len(o.body)
	}
	buf := w.buf[:0]
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	for _, o := range group {
		var seq [binary.MaxVarintLen64]byte
		buf = appendMaskedRecord(buf, w.size+int64(len(buf)), seq[:binary.PutUvarint(seq[:], o.seq)], o.prefix, o.body)
		needSync = needSync || o.sync
	}
	if cap(buf) <= walKeepBuf {
		// A group of large records would otherwise pin their size.
		w.buf = buf
	} else {
		w.buf = nil
	}
	if err := w.preallocate(w.size + int64(len(buf))); err != nil {
		fail(err)
		return
	}
	if _, err := w.f.WriteAt(buf, w.size); err != nil {
		err = fmt.Errorf("write write-ahead log %s: %w", walName(w.num), err)
		if terr := w.f.Truncate(w.size); terr != nil {
			// A partial record may stay: never append after it.
			w.failed = err
		} else {
			w.bytes.Add(w.size - w.alloc)
			w.alloc = w.size
		}
		fail(err)
		return
	}
	w.size += int64(len(buf))
	if needSync {
		w.syncs++
		if err := vfs.DataSync(w.f); err != nil {
			err = fmt.Errorf("sync write-ahead log %s: %w", walName(w.num), err)
			w.failed = err
			fail(err)
			return
		}
		w.unsynced = false
	} else {
		w.unsynced = true
	}
}

// close closes the live segment; queued writers must have returned.
func (w *walWriter) close() error {
	if w.f == nil {
		return nil
	}
	if w.failed == nil && w.alloc > w.size {
		// The zeros are for records to come: a closed table does not keep
		// them on disk. Best effort: left there, they read as the end.
		if w.f.Truncate(w.size) == nil {
			w.bytes.Add(w.size - w.alloc)
			w.alloc = w.size
		}
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// A record of the log is masked (maskedFlag): its payload is XORed with a
// keystream seeded by the record's offset in its segment and followed by
// walTrailer, the checksum covering both as written. Replay tells a torn
// tail from damage by a sector that reads as zeros (see readFrames): a
// written record must never read so, and a payload holds runs of zeros
// (a column of zeros, an all-valid bitmap), which masked look random.
// The trailer and the header's first byte (the length's set low bit) are
// never zero, so neither is a short piece of a record at either end of a
// sector.
const walTrailer = 0x5a

// appendMaskedRecord is appendRecord of the payload that parts make
// together, without joining them first, as a masked write-ahead log
// record whose header starts at offset off of its segment.
func appendMaskedRecord(dst []byte, off int64, parts ...[]byte) []byte {
	start := len(dst)
	n := 1
	for _, p := range parts {
		n += len(p)
	}
	// The header is made in place: an array of its own would escape to
	// the heap through crc32.Checksum, an allocation for every record.
	var zero [recordHeaderLen]byte
	dst = append(dst, zero[:]...)
	h := dst[start : start+recordHeaderLen]
	binary.LittleEndian.PutUint32(h[0:], maskedFlag|uint32(n)<<1|1)
	binary.LittleEndian.PutUint32(h[4:], crc32.Checksum(h[0:4], crcTable))
	for _, p := range parts {
		dst = append(dst, p...)
	}
	dst = append(dst, walTrailer)
	p := dst[start+recordHeaderLen:]
	maskWAL(p[:len(p)-1], off)
	binary.LittleEndian.PutUint32(dst[start+8:], crc32.Checksum(p, crcTable))
	return dst
}

// maskWAL XORs p, the payload of the record at offset off, with its
// keystream: splitmix64 of a counter, whose steps are independent of one
// another, so they overlap in the pipeline. It masks and unmasks.
func maskWAL(p []byte, off int64) {
	x := uint64(off) * 0xd1342543de82ef95
	for len(p) >= 8 {
		x += 0x9e3779b97f4a7c15
		binary.LittleEndian.PutUint64(p, binary.LittleEndian.Uint64(p)^splitmix(x))
		p = p[8:]
	}
	if len(p) > 0 {
		x += 0x9e3779b97f4a7c15
		z := splitmix(x)
		for i := range p {
			p[i] ^= byte(z >> (8 * i))
		}
	}
}

func splitmix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// walRecord is one replayed record.
type walRecord struct {
	seq  uint64
	body []byte
}

// walSegment is one segment file found by replayWAL.
type walSegment struct {
	num     uint64
	records []walRecord
	// valid is the length of its prefix of whole records; size the file's.
	valid, size int64
}

// replayWAL reads every segment of the log in dir, oldest first. A torn
// tail of any segment (records a crash or a failed sync left half-written,
// never acknowledged: a record cut short, or one that a sector still
// holding its preallocated zeros shows in) ends that segment; a damaged record before it, a
// record that does not decode, or numbers that do not increase are
// ErrCorruption naming the file. It changes nothing.
func replayWAL(fsys vfs.FS, dir string) ([]walSegment, error) {
	names, err := fsys.List(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var nums []uint64
	for _, n := range names {
		if num, ok := parseWALName(n); ok {
			nums = append(nums, num)
		}
	}
	slices.Sort(nums)
	var segs []walSegment
	var last uint64
	haveLast := false
	for _, num := range nums {
		name := filepath.Join(dir, walName(num))
		data, err := readAll(fsys, name)
		if err != nil {
			return nil, err
		}
		seg, err := decodeWALSegment(name, data)
		if err != nil {
			return nil, err
		}
		seg.num = num
		for _, r := range seg.records {
			if haveLast && r.seq <= last {
				return nil, rowttl.Errorf(rowttl.ErrCorruption, "write-ahead log %s: record %d follows record %d", name, r.seq, last)
			}
			last, haveLast = r.seq, true
		}
		segs = append(segs, seg)
	}
	return segs, nil
}

// decodeWALSegment splits the bytes of one segment into records,
// unmasking them in data: the records' bodies lie in it.
func decodeWALSegment(name string, data []byte) (walSegment, error) {
	frames, valid, err := readFrames("write-ahead log", name, data, true)
	if err != nil {
		return walSegment{}, err
	}
	seg := walSegment{valid: int64(valid), size: int64(len(data))}
	var prev uint64
	for i, f := range frames {
		p := f.payload
		if f.masked {
			p = p[:len(p)-1]
			maskWAL(p, int64(f.off))
		}
		seq, n := binary.Uvarint(p)
		if n <= 0 {
			return walSegment{}, rowttl.Errorf(rowttl.ErrCorruption, "write-ahead log %s: record %d has no sequence number", name, i)
		}
		if i > 0 && seq <= prev {
			return walSegment{}, rowttl.Errorf(rowttl.ErrCorruption, "write-ahead log %s: record %d follows record %d", name, seq, prev)
		}
		prev = seq
		seg.records = append(seg.records, walRecord{seq: seq, body: p[n:]})
	}
	return seg, nil
}

func readAll(fsys vfs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("open write-ahead log: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read write-ahead log %s: %w", name, err)
	}
	return data, nil
}
