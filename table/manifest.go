package table

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
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
		return fmt.Errorf("manifest %s: %s at offset %d: %w", name, what, off, rowttl.ErrCorruption)
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
}

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
	data := appendRecord(nil, payload)
	if _, err := m.f.Write(data); err != nil {
		m.f.Truncate(m.size)
		return fmt.Errorf("append to manifest: %w", err)
	}
	if err := m.f.Sync(); err != nil {
		// The record may or may not be durable; the caller must treat the
		// table as failed rather than guess.
		return fmt.Errorf("sync manifest: %w", err)
	}
	m.size += int64(len(data))
	return nil
}

func (m *manifest) close() error {
	if m.f == nil {
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
	s := strings.TrimSpace(string(data))
	var num uint64
	if _, err := fmt.Sscanf(s, "MANIFEST-%06d", &num); err != nil || manifestName(num) != s {
		return 0, fmt.Errorf("file %s names no manifest (%q): %w", filepath.Join(dir, currentFile), s, rowttl.ErrCorruption)
	}
	return num, nil
}

// replayManifest reads every edit of a manifest and cuts a torn tail.
func replayManifest(fs vfs.FS, dir string, num uint64) ([]*versionEdit, int64, error) {
	name := filepath.Join(dir, manifestName(num))
	f, err := fs.Open(name)
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
			return nil, 0, fmt.Errorf("manifest %s: record %d does not decode (%v): %w", name, i, err, rowttl.ErrCorruption)
		}
		edits = append(edits, e)
	}
	if len(edits) == 0 || edits[0].Definition == nil {
		return nil, 0, fmt.Errorf("manifest %s: no table definition: %w", name, rowttl.ErrCorruption)
	}
	if edits[0].Format != manifestFormat {
		return nil, 0, fmt.Errorf("manifest %s: format %d, this build reads %d: %w", name, edits[0].Format, manifestFormat, rowttl.ErrCorruption)
	}
	if valid < len(data) {
		af, err := fs.OpenAppend(name)
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
