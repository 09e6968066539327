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
// CURRENT names the live manifest; it is replaced by an atomic rename when
// the manifest is rewritten as one snapshot record.
//
// Format history:
//
//	1: initial.
const manifestFormat = 1

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
	corrupt := func(off int, what string) error {
		return rowttl.Errorf(rowttl.ErrCorruption, "manifest %s: %s at offset %d", name, what, off)
	}
	off := 0
	for off < len(data) {
		rest := data[off:]
		if allZero(rest) {
			return payloads, off, nil
		}
		if len(rest) < recordHeaderLen {
			return payloads, off, nil
		}
		n := binary.LittleEndian.Uint32(rest[0:])
		if crc32.Checksum(rest[0:4], crcTable) != binary.LittleEndian.Uint32(rest[4:]) {
			return nil, 0, corrupt(off, "record length checksum mismatch")
		}
		if n > maxRecordLen {
			return nil, 0, corrupt(off, "record too long")
		}
		if len(rest)-recordHeaderLen < int(n) {
			// The header made it to disk and the payload did not.
			return payloads, off, nil
		}
		p := rest[recordHeaderLen : recordHeaderLen+int(n)]
		if crc32.Checksum(p, crcTable) != binary.LittleEndian.Uint32(rest[8:]) {
			if off+recordHeaderLen+int(n) == len(data) && allZero(p) {
				return payloads, off, nil
			}
			return nil, 0, corrupt(off, "record checksum mismatch")
		}
		payloads = append(payloads, p)
		off += recordHeaderLen + int(n)
	}
	return payloads, off, nil
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

// createManifest writes a new manifest holding one snapshot edit and points
// CURRENT at it.
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
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	if err := vfs.WriteFileAtomic(fs, filepath.Join(dir, currentFile), []byte(manifestName(num)+"\n")); err != nil {
		return nil, err
	}
	f, err = fs.OpenAppend(name)
	if err != nil {
		return nil, err
	}
	return &manifest{fs: fs, dir: dir, num: num, f: f, size: int64(len(data))}, nil
}

// append makes one edit durable. A failed append leaves the file as it was
// (the partial record is cut), so the next append starts clean.
func (m *manifest) append(e *versionEdit) error {
	payload, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if m.uncertain != nil {
		return fmt.Errorf("append to manifest %s after an earlier failure: %w", manifestName(m.num), m.uncertain)
	}
	data := appendRecord(nil, payload)
	if _, err := m.f.Write(data); err != nil {
		err = fmt.Errorf("append to manifest %s: %w", manifestName(m.num), err)
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

// readCurrent returns the number of the live manifest.
func readCurrent(fs vfs.FS, dir string) (uint64, error) {
	data, err := vfs.ReadFile(fs, filepath.Join(dir, currentFile))
	if err != nil {
		return 0, err
	}
	// CURRENT holds exactly what createManifest writes; anything else (a
	// flipped byte, even one that turns the newline into other white space)
	// is damage.
	s := strings.TrimSuffix(string(data), "\n")
	var num uint64
	if _, err := fmt.Sscanf(s, "MANIFEST-%06d", &num); err != nil || manifestName(num)+"\n" != string(data) {
		return 0, rowttl.Errorf(rowttl.ErrCorruption, "file %s names no manifest (%q)", filepath.Join(dir, currentFile), data)
	}
	return num, nil
}

// replayManifest reads every edit of a manifest and, when cut is set, cuts
// a torn tail.
func replayManifest(fsys vfs.FS, dir string, num uint64, cut bool) ([]*versionEdit, int64, error) {
	name := filepath.Join(dir, manifestName(num))
	f, err := fsys.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, rowttl.Errorf(rowttl.ErrCorruption, "manifest %s named by %s is missing", name, filepath.Join(dir, currentFile))
	}
	if err != nil {
		return nil, 0, fmt.Errorf("open manifest: %w", err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, 0, fmt.Errorf("read manifest %s: %w", name, err)
	}
	payloads, valid, err := readRecords(name, data)
	if err != nil {
		return nil, 0, err
	}
	edits := make([]*versionEdit, 0, len(payloads))
	for i, p := range payloads {
		e := new(versionEdit)
		dec := json.NewDecoder(bytes.NewReader(p))
		dec.DisallowUnknownFields()
		if err := dec.Decode(e); err != nil {
			return nil, 0, rowttl.Errorf(rowttl.ErrCorruption, "manifest %s: record %d does not decode (%v)", name, i, err)
		}
		edits = append(edits, e)
	}
	if len(edits) == 0 || edits[0].Definition == nil {
		return nil, 0, rowttl.Errorf(rowttl.ErrCorruption, "manifest %s: no table definition", name)
	}
	if edits[0].Format != manifestFormat {
		return nil, 0, rowttl.Errorf(rowttl.ErrCorruption, "manifest %s: format %d, this build reads %d", name, edits[0].Format, manifestFormat)
	}
	if valid < len(data) && cut {
		af, err := fsys.OpenAppend(name)
		if err != nil {
			return nil, 0, err
		}
		err = af.Truncate(int64(valid))
		if err == nil {
			err = af.Sync()
		}
		af.Close()
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, fmt.Errorf("cut torn tail of %s: %w", name, err)
		}
	}
	return edits, int64(valid), nil
}
