package table

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/vfs"
)

// lostFoundDir is the directory inside a table where Open moves segment
// files that no manifest record accounts for: they may hold acknowledged
// rows, so they are kept for an operator to look at, never deleted.
const lostFoundDir = "lost+found"

// Kinds of segment files, as their tags say (see the manifest format).
const (
	tagVersion = 1
	// kindData is a file of a rowset that a manifest record will list.
	kindData = 1
	// kindRun is a load's spilled run: read back before the load commits,
	// never listed, removed by the load or by the next open.
	kindRun = 2
	// kindOutput is a file of a compaction's output: a copy of rows its
	// inputs hold, so when no record lists it (a crash before the install)
	// the next open removes it instead of keeping it in lost+found/.
	kindOutput = 3
)

// segmentTag is what the table records in a segment file it writes.
func segmentTag(kind byte, after uint64) []byte {
	return binary.AppendUvarint([]byte{tagVersion, kind}, after)
}

// parseSegmentTag reads a segment tag; ok is false for a file written
// before tags (or by someone else).
func parseSegmentTag(tag []byte) (kind byte, after uint64, ok bool) {
	if len(tag) < 3 || tag[0] != tagVersion || (tag[1] != kindData && tag[1] != kindRun && tag[1] != kindOutput) {
		return 0, 0, false
	}
	after, n := binary.Uvarint(tag[2:])
	// Only the tag segmentTag makes: no overlong varint.
	if n <= 0 || 2+n != len(tag) || len(binary.AppendUvarint(nil, after)) != n {
		return 0, 0, false
	}
	return tag[1], after, true
}

// tagFor is the tag of the next file the table writes (see
// versionSet.lastSeq for what a writer without the lock reads).
func (t *Table) tagFor(kind byte) []byte {
	return segmentTag(kind, t.vs.lastSeq())
}

// strayFile is a segment file that no live rowset lists.
type strayFile struct {
	name   string // base name in the table directory
	num    uint64
	kind   byte   // from its tag, 0 when it has none
	after  uint64 // from its tag
	tagged bool
	why    string // for the log line
}

// inventory sorts the files of a table directory against a replayed
// manifest.
type inventory struct {
	tmp       []string // temporary files: never published
	manifests []string // manifests other than the live one
	obsolete  []string // segment files of rowsets a record removed
	runs      []strayFile
	outputs   []strayFile // of compactions never installed
	strays    []strayFile // to move to lost+found/
	lostFound []string    // already in lost+found/
	maxNum    uint64      // the largest file number seen, lost+found/ included
}

// takeInventory sorts names, the files of dir listed before the manifest
// was replayed; live are the file numbers the replayed state lists,
// obsolete those of rowsets it removed. Listed first, no file can be newer
// than the replay, even while the table's owner writes beside a read-only
// open: a file's tag names a record durable before the file existed.
func takeInventory(fsys vfs.FS, dir string, names []string, liveManifest uint64, live, obsolete map[uint64]bool) (*inventory, error) {
	inv := &inventory{}
	for _, n := range names {
		switch {
		case strings.HasSuffix(n, ".tmp"):
			inv.tmp = append(inv.tmp, n)
		case strings.HasPrefix(n, "MANIFEST-"):
			if n != manifestName(liveManifest) {
				inv.manifests = append(inv.manifests, n)
			}
			var num uint64
			if _, err := fmt.Sscanf(n, "MANIFEST-%06d", &num); err == nil {
				inv.maxNum = max(inv.maxNum, num)
			}
		default:
			num, ok := rowset.ParseSegmentFileName(n)
			if !ok {
				continue
			}
			inv.maxNum = max(inv.maxNum, num)
			switch {
			case live[num]:
			case obsolete[num]:
				inv.obsolete = append(inv.obsolete, n)
			default:
				s, err := inspectStray(fsys, filepath.Join(dir, n))
				if err != nil {
					return nil, err
				}
				s.name, s.num = n, num
				switch s.kind {
				case kindRun:
					inv.runs = append(inv.runs, s)
				case kindOutput:
					inv.outputs = append(inv.outputs, s)
				default:
					inv.strays = append(inv.strays, s)
				}
			}
		}
	}
	lf, err := fsys.List(filepath.Join(dir, lostFoundDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, n := range lf {
		inv.lostFound = append(inv.lostFound, filepath.Join(lostFoundDir, n))
		if num, ok := rowset.ParseSegmentFileName(strings.SplitN(n, "~", 2)[0]); ok {
			inv.maxNum = max(inv.maxNum, num)
		}
	}
	return inv, nil
}

// inspectStray reads the tag of a segment file that nothing lists. A file
// that does not open as a segment has none; it is kept all the same. A
// failed read is returned: the tag might have shown a loss.
func inspectStray(fsys vfs.FS, path string) (strayFile, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return strayFile{}, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return strayFile{}, fmt.Errorf("stat %s: %w", path, err)
	}
	r, err := segment.Open(f, st.Size(), path)
	if errors.Is(err, rowttl.ErrCorruption) {
		return strayFile{why: "not a whole segment: " + err.Error()}, nil
	}
	if err != nil {
		return strayFile{}, err
	}
	kind, after, ok := parseSegmentTag(r.Tag())
	if !ok {
		return strayFile{why: fmt.Sprintf("%d rows, written by a build that did not tag its files", r.NumRows())}, nil
	}
	return strayFile{kind: kind, after: after, tagged: true, why: fmt.Sprintf("%d rows, written after record %d", r.NumRows(), after)}, nil
}

// checkPublished fails when the files show that the manifest lost records
// it had made durable: CURRENT records a later one, or a file was written
// after a later one. Up to one write — the one in flight at a crash — may
// have left files written after the last record.
func (inv *inventory) checkPublished(r *replayed, current string, published uint64) error {
	lost := func(why string) error {
		return rowttl.Errorf(rowttl.ErrCorruption, "manifest %s holds records up to %d, but %s: acknowledged changes are lost (restore the manifest; no file was changed)",
			r.name, r.lastSeq, why)
	}
	if published > r.lastSeq {
		return lost(fmt.Sprintf("%s records that record %d was published", current, published))
	}
	for _, s := range inv.unlisted() {
		if s.tagged && s.after > r.lastSeq {
			return lost(fmt.Sprintf("segment file %s was written after record %d was published", s.name, s.after))
		}
	}
	return nil
}

// missingWithLoss names the manifest when a segment file it lists is
// missing while files written after its last record exist: a cut manifest
// that lost the record of a compaction (whose inputs are gone) looks so.
func (inv *inventory) missingWithLoss(r *replayed, nextFileNum uint64, err error) error {
	if !errors.Is(err, rowttl.ErrCorruption) || !strings.Contains(err.Error(), "missing") {
		return err
	}
	var newer []string
	for _, s := range inv.unlisted() {
		if (s.tagged && s.after >= r.lastSeq) || s.num >= nextFileNum {
			newer = append(newer, s.name)
		}
	}
	if len(newer) == 0 {
		return err
	}
	return rowttl.Errorf(rowttl.ErrCorruption, "manifest %s has lost records: %s, and segment files %s were written after its last record %d",
		r.name, err.Error(), strings.Join(newer, ", "), r.lastSeq)
}

// unlisted are the segment files that no record lists, whatever wrote them.
func (inv *inventory) unlisted() []strayFile {
	return slices.Concat(inv.strays, inv.runs, inv.outputs)
}

// settleFiles deletes what no state can need (temporary files, other
// manifests, files of removed rowsets, spilled runs, outputs of compactions
// never installed) and moves the strays
// to lost+found/, logging each. The live manifest is durable when it runs.
func (t *Table) settleFiles(inv *inventory) error {
	changed := false
	for _, group := range [][]string{inv.tmp, inv.manifests, inv.obsolete, strayNames(inv.runs), strayNames(inv.outputs)} {
		for _, n := range group {
			if err := t.fs.Remove(filepath.Join(t.dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove orphan %s: %w", n, err)
			}
			changed = true
		}
	}
	if len(inv.strays) > 0 {
		lf := filepath.Join(t.dir, lostFoundDir)
		if err := t.fs.MkdirAll(lf); err != nil {
			return fmt.Errorf("create %s: %w", lf, err)
		}
		taken := map[string]bool{}
		for _, n := range inv.lostFound {
			taken[filepath.Base(n)] = true
		}
		for _, s := range inv.strays {
			dst := s.name
			for i := 1; taken[dst]; i++ {
				dst = fmt.Sprintf("%s~%d", s.name, i)
			}
			taken[dst] = true
			if err := t.fs.Rename(filepath.Join(t.dir, s.name), filepath.Join(lf, dst)); err != nil {
				return fmt.Errorf("move %s to %s: %w", s.name, lostFoundDir, err)
			}
			t.logf("table %s: segment file %s is listed by no manifest record (%s); moved to %s/%s", t.Name(), s.name, s.why, lostFoundDir, dst)
			inv.lostFound = append(inv.lostFound, filepath.Join(lostFoundDir, dst))
		}
		if err := t.fs.SyncDir(lf); err != nil {
			return err
		}
		inv.strays = nil
		changed = true
	}
	if changed {
		return t.fs.SyncDir(t.dir)
	}
	return nil
}

func strayNames(s []strayFile) []string {
	out := make([]string, len(s))
	for i := range s {
		out[i] = s[i].name
	}
	return out
}

func (t *Table) logf(format string, args ...any) {
	if t.opts.Logf != nil {
		t.opts.Logf(format, args...)
		return
	}
	log.Printf(format, args...)
}

// LostFound lists, relative to the table directory, the segment files that
// no manifest record accounts for: those in lost+found/ and, on a
// read-only open, those an ordinary open would move there. They may hold
// rows of a write that was in flight at a crash; the table never reads
// them.
func (t *Table) LostFound() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.mu.lostFound)
}
