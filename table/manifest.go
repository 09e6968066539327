package table

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/vfs"
)

// The manifest is an append-only log of version edits. Each record:
//
//	+-----------+---------------+-------------------+-----------------+
//	| len (4B)  | crc(len) (4B) | crc(payload) (4B) | payload (len B) |
//	+-----------+---------------+-------------------+-----------------+
//
// little-endian, crc32c (Castagnoli), payload a JSON versionEdit. The length
// has its own checksum so that a flipped length byte is reported as
// corruption instead of being mistaken for a torn tail. A torn tail — a
// record cut short, or a tail of zeros that a crash left after an unsynced
// append — was never acknowledged and is cut off on open; anything else that
// fails a check is ErrCorruption naming the file.
//
// A torn tail and a manifest cut after the fact look the same, so what was
// published is also recorded outside the manifest (format 2):
//
//	record payload   {"seq": N, ...}       every record numbered, one up
//	                                       from the previous; a rotated
//	                                       manifest's snapshot carries on
//	                                       the numbering
//	segment tag      | 1 | kind (1B) | after (uvarint) |
//	                 each segment file written by the table (segment
//	                 format 4): after is the last record the manifest had
//	                 made durable when the file was written; kind tells the
//	                 data of a rowset (1) from a load's spilled run (2)
//	                 and from a compaction's output (3), which holds only
//	                 copies of its inputs' rows: unlisted, it is removed
//	CURRENT          MANIFEST-000007\n
//	                 published 42 crc 5e1fd3a0\n
//	                 the last record known durable when CURRENT was
//	                 written (at create, open, rotation, recovery, close,
//	                 and every Options.PublishInterval after appends); the
//	                 crc32c covers the bytes before " crc"
//
// Writes are serialised, so at most one record can be in flight: a file
// whose after is the manifest's last record may be that write's (or a
// compaction's), and is moved to lost+found/ when no record lists it. A
// file whose after lies beyond the last record, or a CURRENT that names a
// later one, proves that acknowledged records are missing: Open and Check
// report ErrCorruption naming the manifest, and change nothing. A cut of
// the records appended since CURRENT was last written (within the last
// PublishInterval) that leaves no file behind it (the final write, DELETEs
// made of delete marks) stays undetectable after a crash: it is what a
// crash during the append leaves.
//
// CURRENT names the live manifest; it is replaced by an atomic rename when
// the manifest is rewritten as one snapshot record.
//
// Format history:
//
//	1: initial.
//	2: records carry a sequence number; CURRENT may record the last one published.
const manifestFormat = 2

// minManifestFormat is the oldest manifest this build reads: format 1
// records are numbered by position, and its CURRENT records nothing.
const minManifestFormat = 1

const (
	recordHeaderLen = 12
	maxRecordLen    = 256 << 20
	currentFile     = "CURRENT"
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func appendRecord(dst, payload []byte) []byte {
	var h [recordHeaderLen]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[4:], crc32.Checksum(h[0:4], crcTable))
	binary.LittleEndian.PutUint32(h[8:], crc32.Checksum(payload, crcTable))
	dst = append(dst, h[:]...)
	return append(dst, payload...)
}

// readRecords splits a manifest into payloads. It returns the length of the
// valid prefix, so a torn tail can be cut.
func readRecords(name string, data []byte) (payloads [][]byte, valid int, err error) {
	return readFramed("manifest", name, data)
}

// readFramed is readRecords of a file of another kind (what, for messages)
// framed the same way.
func readFramed(kind, name string, data []byte) (payloads [][]byte, valid int, err error) {
	frames, valid, err := readFrames(kind, name, data, false)
	if err != nil {
		return nil, 0, err
	}
	for _, f := range frames {
		payloads = append(payloads, f.payload)
	}
	return payloads, valid, nil
}

// tornSector is the unit a disk writes whole or not at all.
const tornSector = 512

// frame is one record readFrames found.
type frame struct {
	// off is where its header starts.
	off int
	// payload is as the file holds it: masked, its trailer included, when
	// masked is set (see appendMaskedRecord).
	payload []byte
	masked  bool
}

// maskedFlag, set in the length word of a write-ahead log record, says
// that its payload is masked (appendMaskedRecord); the length is then
// shifted up by one over a set low bit. Lengths never reach it
// (maxRecordLen), so the records of the earlier formats never carry it,
// and the manifest, which never masks, reads it as a length too long.
const maskedFlag = 1 << 31

// readFrames splits data into records. With wal, a write-ahead log whose
// records overwrite zeros written ahead of them, it also takes for a torn
// tail a damaged record that a sector never written shows in: the pages
// of writes not yet synced reach the disk in any order, so a crash can
// leave zeros inside a record, or before records written after it. A
// record damaged another way is still corruption.
//
// That rule is sound only where a written record cannot read as zeros
// over what a sector holds of it: a masked record's payload looks random,
// its header's first byte and its trailer are never zero, so what a
// sector holds of it reads as zeros with odds of about 2^-4000 when that
// is a whole sector, and never when it is the record's head or tail but
// for damage that zeroes exactly those bytes. A segment's first record
// says which form all of its records take (a writer starts a new segment,
// and never appends to an old one): in a masked segment a record without
// the flag is corruption. A segment of unmasked records, written before
// masks were, keeps the rule it was written under: a damaged record of it
// that holds a sector of zeros still reads as a torn tail.
func readFrames(kind, name string, data []byte, wal bool) (frames []frame, valid int, err error) {
	corrupt := func(off, end int, what string) error {
		if wal && unwrittenSector(data, off, end) {
			return nil
		}
		return rowttl.Errorf(rowttl.ErrCorruption, "%s %s: %s at offset %d", kind, name, what, off)
	}
	off := 0
	segMasked := false
	for off < len(data) {
		rest := data[off:]
		if allZero(rest) {
			return frames, off, nil
		}
		if len(rest) < recordHeaderLen {
			return frames, off, nil
		}
		word := binary.LittleEndian.Uint32(rest[0:])
		if crc32.Checksum(rest[0:4], crcTable) != binary.LittleEndian.Uint32(rest[4:]) {
			if err := corrupt(off, off+recordHeaderLen, "record length checksum mismatch"); err != nil {
				return nil, 0, err
			}
			return frames, off, nil
		}
		masked := wal && word&maskedFlag != 0
		if off == 0 {
			segMasked = masked
		}
		n := word
		if masked {
			if word&1 == 0 || !segMasked {
				return nil, 0, rowttl.Errorf(rowttl.ErrCorruption, "%s %s: bad record length at offset %d", kind, name, off)
			}
			n = (word &^ maskedFlag) >> 1
		} else if segMasked {
			return nil, 0, rowttl.Errorf(rowttl.ErrCorruption, "%s %s: unmasked record at offset %d", kind, name, off)
		}
		if n > maxRecordLen || (masked && n == 0) {
			if err := corrupt(off, off+recordHeaderLen, "record too long"); err != nil {
				return nil, 0, err
			}
			return frames, off, nil
		}
		if len(rest)-recordHeaderLen < int(n) {
			// The header made it to disk and the payload did not.
			return frames, off, nil
		}
		p := rest[recordHeaderLen : recordHeaderLen+int(n)]
		if crc32.Checksum(p, crcTable) != binary.LittleEndian.Uint32(rest[8:]) {
			if off+recordHeaderLen+int(n) == len(data) && allZero(p) {
				return frames, off, nil
			}
			if err := corrupt(off, off+recordHeaderLen+int(n), "record checksum mismatch"); err != nil {
				return nil, 0, err
			}
			return frames, off, nil
		}
		if masked && p[n-1] != walTrailer {
			return nil, 0, rowttl.Errorf(rowttl.ErrCorruption, "%s %s: bad record trailer at offset %d", kind, name, off)
		}
		frames = append(frames, frame{off: off, payload: p, masked: masked})
		off += recordHeaderLen + int(n)
	}
	return frames, off, nil
}

// unwrittenSector reports whether a sector overlapping [off, end) reads
// as zeros from off (or its start) to its end: one the disk never wrote.
func unwrittenSector(data []byte, off, end int) bool {
	end = min(end, len(data))
	for s := off - off%tornSector; s < end; s += tornSector {
		lo, hi := max(s, off), min(s+tornSector, len(data))
		if allZero(data[lo:hi]) {
			return true
		}
	}
	return false
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func manifestName(num uint64) string { return fmt.Sprintf("MANIFEST-%06d", num) }

// manifest appends edits to the live manifest file.
type manifest struct {
	fs   vfs.FS
	dir  string
	num  uint64
	f    vfs.File
	size int64
	// seq is the sequence number of the last record known durable.
	seq uint64
	// uncertain is set when an append failed in a way that may leave its
	// record durable, or a partial record in the file: a failed sync, or a
	// failed write whose cut failed too. From then on every append fails,
	// and no file the record may list is deleted (see mayRemoveFiles);
	// the next open replays whatever made it to disk.
	uncertain error
}

// mayRemoveFiles reports whether files written for a record that failed
// to append can be deleted: not when the record may be durable after all.
func (m *manifest) mayRemoveFiles() bool { return m == nil || m.uncertain == nil }

// createManifest writes a new manifest holding one snapshot edit (its Seq
// set) and points CURRENT at it. A failure leaves CURRENT as it was.
func createManifest(fs vfs.FS, dir string, num uint64, snapshot *versionEdit) (*manifest, error) {
	payload, err := json.Marshal(snapshot)
	if err != nil {
		return nil, err
	}
	name := filepath.Join(dir, manifestName(num))
	data := appendRecord(nil, payload)
	f, err := fs.Create(name)
	if err != nil {
		return nil, err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// Nothing names the file yet. Once CURRENT may (its rename done,
		// the directory sync not), it stays whatever fails.
		fs.Remove(name)
		return nil, err
	}
	if err := writeCurrent(fs, dir, num, snapshot.Seq); err != nil {
		return nil, err
	}
	f, err = fs.OpenAppend(name)
	if err != nil {
		return nil, err
	}
	return &manifest{fs: fs, dir: dir, num: num, f: f, size: int64(len(data)), seq: snapshot.Seq}, nil
}

// append makes one edit durable, numbering it after the last. A failed
// append leaves the file as it was (the partial record is cut) when it can;
// the table then recovers (see versionSet.recover).
func (m *manifest) append(e *versionEdit) error {
	if m.uncertain != nil {
		return fmt.Errorf("append to manifest %s after an earlier failure: %w", manifestName(m.num), m.uncertain)
	}
	e.Seq = m.seq + 1
	payload, err := json.Marshal(e)
	if err != nil {
		return err
	}
	data := appendRecord(nil, payload)
	if _, err := m.f.Write(data); err != nil {
		err = fmt.Errorf("write manifest %s: %w", manifestName(m.num), err)
		if terr := m.f.Truncate(m.size); terr != nil {
			// A partial record stays in the file: the next append would
			// follow it and look like corruption on replay.
			m.uncertain = err
		}
		return err
	}
	if err := m.f.Sync(); err != nil {
		// The record may or may not be durable; the caller must treat the
		// table as failed rather than guess.
		err = fmt.Errorf("sync manifest %s: %w", manifestName(m.num), err)
		m.uncertain = err
		return err
	}
	m.size += int64(len(data))
	m.seq = e.Seq
	return nil
}

func (m *manifest) close() error {
	if m == nil || m.f == nil {
		return nil
	}
	err := m.f.Close()
	m.f = nil
	return err
}

// readCurrent returns the number of the live manifest and the sequence
// number of the last record CURRENT records as published (0: none).
func readCurrent(fs vfs.FS, dir string) (num, published uint64, err error) {
	name := filepath.Join(dir, currentFile)
	data, err := vfs.ReadFile(fs, name)
	if err != nil {
		return 0, 0, err
	}
	// CURRENT holds exactly what writeCurrent writes (or, from format 1,
	// the first line alone); anything else (a flipped byte, even one that
	// turns the newline into other white space) is damage.
	bad := func() (uint64, uint64, error) {
		return 0, 0, rowttl.Errorf(rowttl.ErrCorruption, "file %s names no manifest (%q)", name, data)
	}
	first, rest, ok := strings.Cut(string(data), "\n")
	if !ok {
		return bad()
	}
	if _, err := fmt.Sscanf(first, "MANIFEST-%06d", &num); err != nil || manifestName(num) != first {
		return bad()
	}
	if rest == "" {
		return num, 0, nil
	}
	var crc uint32
	if _, err := fmt.Sscanf(rest, "published %d crc %08x\n", &published, &crc); err != nil || string(currentContents(num, published)) != string(data) {
		return bad()
	}
	return num, published, nil
}

// currentContents is what CURRENT holds when it names manifest num and
// records that the record numbered published is durable.
func currentContents(num, published uint64) []byte {
	b := fmt.Appendf(nil, "%s\npublished %d", manifestName(num), published)
	return fmt.Appendf(b, " crc %08x\n", crc32.Checksum(b, crcTable))
}

// writeCurrent points CURRENT at manifest num, recording published; the
// replacement is atomic.
func writeCurrent(fs vfs.FS, dir string, num, published uint64) error {
	return vfs.WriteFileAtomic(fs, filepath.Join(dir, currentFile), currentContents(num, published))
}

// replayed is what replayManifest read from a manifest.
type replayed struct {
	name  string // path of the manifest
	edits []*versionEdit
	// valid is the length of the prefix of whole records; size the file's.
	valid, size int64
	// lastSeq is the sequence number of the last whole record.
	lastSeq uint64
}

// replayManifest reads every edit of a manifest, numbering them. It changes
// nothing: a torn tail is cut by cutTail once the caller knows it is one.
func replayManifest(fsys vfs.FS, dir string, num uint64) (*replayed, error) {
	name := filepath.Join(dir, manifestName(num))
	f, err := fsys.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "manifest %s named by %s is missing", name, filepath.Join(dir, currentFile))
	}
	if err != nil {
		return nil, fmt.Errorf("open manifest: %w", err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", name, err)
	}
	payloads, valid, err := readRecords(name, data)
	if err != nil {
		return nil, err
	}
	edits := make([]*versionEdit, 0, len(payloads))
	for i, p := range payloads {
		e := new(versionEdit)
		dec := json.NewDecoder(bytes.NewReader(p))
		dec.DisallowUnknownFields()
		if err := dec.Decode(e); err != nil {
			return nil, rowttl.Errorf(rowttl.ErrCorruption, "manifest %s: record %d does not decode (%v)", name, i, err)
		}
		edits = append(edits, e)
	}
	if len(edits) == 0 || edits[0].Definition == nil {
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "manifest %s: no table definition", name)
	}
	format := edits[0].Format
	if format < minManifestFormat || format > manifestFormat {
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "manifest %s: format %d, this build reads %d to %d", name, format, minManifestFormat, manifestFormat)
	}
	var seq uint64
	for i, e := range edits {
		want := seq + 1
		switch {
		case i == 0 && e.Seq != 0:
			want = e.Seq
		case e.Seq == 0 && format >= 2:
			return nil, rowttl.Errorf(rowttl.ErrCorruption, "manifest %s: record %d has no sequence number", name, i)
		}
		if e.Seq != 0 && e.Seq != want {
			return nil, rowttl.Errorf(rowttl.ErrCorruption, "manifest %s: record %d has sequence number %d, want %d", name, i, e.Seq, want)
		}
		seq = want
	}
	return &replayed{name: name, edits: edits, valid: int64(valid), size: int64(len(data)), lastSeq: seq}, nil
}

// cutTail cuts the torn tail of a replayed manifest, if it has one.
func (r *replayed) cutTail(fsys vfs.FS) error {
	if r.valid == r.size {
		return nil
	}
	af, err := fsys.OpenAppend(r.name)
	if err != nil {
		return err
	}
	err = af.Truncate(r.valid)
	if err == nil {
		err = af.Sync()
	}
	af.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("cut torn tail of %s: %w", r.name, err)
	}
	r.size = r.valid
	return nil
}
