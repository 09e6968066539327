package table

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/vfs"
)

// TestWALDamagedZeroRunIsCorruption: a synced record whose body holds a
// run of zeros longer than a sector (a column of zeros), damaged elsewhere
// by the medium, is corruption naming the segment, not a torn tail that
// would drop it and the acknowledged records after it.
func TestWALDamagedZeroRunIsCorruption(t *testing.T) {
	zeros := func(seq uint64) []byte {
		if seq == 2 {
			return append(walBody(seq), make([]byte, 3*tornSector)...)
		}
		return walBody(seq)
	}
	fsys := vfs.NewMemFS()
	mkdirDurable(t, fsys, "/t")
	w, err := openWALWriter(fsys, "/t", fileNums(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for s := uint64(1); s <= 4; s++ {
		if _, err := w.commit(zeros(s), false, nil); err != nil {
			t.Fatal(err)
		}
	}
	name := "/t/" + walName(1)
	if got := replayedWith(t, fsys, "/t", zeros); fmt.Sprint(got) != "[1 2 3 4]" {
		t.Fatalf("replayed %v before any damage", got)
	}
	data, err := vfs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	// The second record starts after the first; damage its body's text,
	// ahead of the zeros.
	first := recordHeaderLen + 1 + len(walBody(1)) + 1
	for _, pos := range []int{first + recordHeaderLen + 3, first + recordHeaderLen + 1 + len(walBody(2)) + 3*tornSector} {
		c := fsys.Clone()
		d := bytes.Clone(data)
		d[pos] ^= 0x10
		if err := vfs.WriteFileAtomic(c, name, d); err != nil {
			t.Fatal(err)
		}
		_, err := replayWAL(c, "/t")
		if !errors.Is(err, rowttl.ErrCorruption) || !strings.Contains(err.Error(), name) {
			t.Fatalf("byte %d flipped: replay = %v, want corruption naming %s", pos, err, name)
		}
	}
}

// TestWALReplaysUnmaskedFormat: segments written before records were
// masked (testdata/wal-format1, one closed, one live with its
// preallocated zeros) replay, and a writer carries on after them.
func TestWALReplaysUnmaskedFormat(t *testing.T) {
	dir := filepath.Join("testdata", "wal-format1")
	if got := replayedSeqs(t, vfs.Default, dir); fmt.Sprint(got) != "[1 2 3 4 5 6 7]" {
		t.Fatalf("replayed %v", got)
	}
	fsys := vfs.NewMemFS()
	mkdirDurable(t, fsys, "/t")
	names, err := vfs.Default.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		data, err := vfs.ReadFile(vfs.Default, filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFileAtomic(fsys, "/t/"+n, data); err != nil {
			t.Fatal(err)
		}
	}
	segs, err := replayWAL(fsys, "/t")
	if err != nil {
		t.Fatal(err)
	}
	nums := fileNums()
	nums() // the fixture's segments hold 1 and 2
	nums()
	w, err := openWALWriter(fsys, "/t", nums, 8, segs)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := commitNumbered(w, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := replayedSeqs(t, fsys, "/t"); fmt.Sprint(got) != "[1 2 3 4 5 6 7 8 9]" {
		t.Fatalf("replayed %v", got)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
}

// TestWALMaskedRandomDamage: in segments of records whose bodies hold
// runs of zeros at random, any sectors lost from the last write end the
// segment at a record boundary after every record written before it, and
// any one flipped byte of the records is corruption.
func TestWALMaskedRandomDamage(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	for range 200 {
		var data []byte
		var offs []int
		var bodies [][]byte
		for s := range uint64(2 + rng.IntN(8)) {
			body := make([]byte, rng.IntN(3000))
			for i := range body {
				if rng.IntN(4) == 0 {
					body[i] = byte(rng.Uint32())
				}
			}
			if rng.IntN(2) == 0 && len(body) > 0 {
				// A run of zeros longer than any sector.
				k := rng.IntN(len(body))
				clear(body[k:min(len(body), k+tornSector+rng.IntN(1500))])
			}
			offs = append(offs, len(data))
			bodies = append(bodies, body)
			data = appendMaskedRecord(data, int64(len(data)), binary.AppendUvarint(nil, s+1), body)
		}
		end := len(data)
		data = append(data, make([]byte, 2*tornSector)...)
		check := func(seg walSegment, upTo int) {
			t.Helper()
			if len(seg.records) < upTo {
				t.Fatalf("seed %d: replayed %d records, %d were synced", seed, len(seg.records), upTo)
			}
			for i, r := range seg.records {
				if r.seq != uint64(i+1) || !bytes.Equal(r.body, bodies[i]) {
					t.Fatalf("seed %d: record %d: seq %d, %d bytes", seed, i, r.seq, len(r.body))
				}
			}
		}

		// The last write began at a record boundary; each of its sectors
		// reached the disk or not.
		g := rng.IntN(len(offs))
		d := bytes.Clone(data)
		for s := offs[g] - offs[g]%tornSector; s < end; s += tornSector {
			if rng.IntN(2) == 0 {
				clear(d[max(s, offs[g]) : s+tornSector])
			}
		}
		seg, err := decodeWALSegment(walName(1), d)
		if err != nil {
			t.Fatalf("seed %d: sectors lost after offset %d: %v", seed, offs[g], err)
		}
		check(seg, g)

		d = bytes.Clone(data)
		pos := rng.IntN(end)
		d[pos] ^= byte(1 + rng.IntN(255))
		if _, err := decodeWALSegment(walName(1), d); !errors.Is(err, rowttl.ErrCorruption) {
			t.Fatalf("seed %d: byte %d of %d flipped: decode = %v, want corruption", seed, pos, end, err)
		}
	}
}
