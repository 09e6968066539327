package segment

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestMappedChunkChecks checks what reading a segment as mapped bytes
// changes about corruption: every read of a damaged chunk fails, by every
// way of reading it, the first as the later ones (a failed check is not
// remembered as a pass); an intact chunk is checksummed on its first read
// alone; the mapping hears of every chunk read.
func TestMappedChunkChecks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	orig := smallSegment(t, mem)
	r0 := openBytes(t, orig, "m.seg")
	for c := range r0.Schema().Fields() {
		for p := 0; p < r0.NumPages(); p++ {
			ch := r0.f.chunk(c, p)
			bad := bytes.Clone(orig)
			bad[ch.offset+ch.length/2] ^= 0x40
			hm := newHeapMapped(bad)
			r, err := Open(hm, int64(len(bad)), "m.seg")
			if err != nil {
				t.Fatal(err)
			}
			if r.data == nil || r.checked == nil {
				t.Fatal("a Mapped reader reads through ReadAt")
			}
			n := r.f.pages[p]
			sel := make([]byte, (n+7)/8)
			sel[0] = 1
			var v Values
			reads := []struct {
				name string
				read func() error
			}{
				{"ReadPage", func() error {
					a, err := r.ReadPage(mem, c, p)
					if err == nil {
						a.Release()
					}
					return err
				}},
			}
			if r.ValuesOK(c) {
				reads = append(reads,
					struct {
						name string
						read func() error
					}{"ReadPacked", func() error { return r.ReadPacked(c, p, &v) }},
					struct {
						name string
						read func() error
					}{"ReadSelected", func() error { return r.ReadSelected(c, p, &v, sel) }})
			}
			if r.f.cols[c].kind == kindBytes {
				reads = append(reads, struct {
					name string
					read func() error
				}{"ReadPageSelected", func() error {
					a, err := r.ReadPageSelected(mem, c, p, sel)
					if err == nil {
						a.Release()
					}
					return err
				}})
			}
			for round := range 2 {
				for _, rd := range reads {
					err := rd.read()
					if err == nil {
						t.Fatalf("column %d page %d, %s, read %d: a damaged chunk read without error", c, p, rd.name, round)
					}
					checkCorrupt(t, err, "m.seg")
				}
			}
			if r.checked[ch.ord].Load() {
				t.Fatalf("column %d page %d: a damaged chunk is marked checked", c, p)
			}
			if hm.used.Load() < ch.length {
				t.Fatalf("column %d page %d: the mapping heard of %d bytes read", c, p, hm.used.Load())
			}
		}
	}

	// Intact: checked once, then read without the checksum, to the same
	// values.
	r := openHeapMapped(t, orig)
	for c := range r.Schema().Fields() {
		for p := 0; p < r.NumPages(); p++ {
			for round := range 2 {
				a, err := r.ReadPage(mem, c, p)
				if err != nil {
					t.Fatal(err)
				}
				b, err := r0.ReadPage(mem, c, p)
				if err != nil {
					t.Fatal(err)
				}
				if !arraysIdentical(a, b) {
					t.Fatalf("column %d page %d read %d: %v, want %v", c, p, round, a, b)
				}
				a.Release()
				b.Release()
				if !r.checked[r.f.chunk(c, p).ord].Load() {
					t.Fatalf("column %d page %d: an intact chunk read is not marked checked", c, p)
				}
			}
		}
	}
}

// openHeapMapped opens b as heap-mapped bytes.
func openHeapMapped(t *testing.T, b []byte) *Reader {
	t.Helper()
	r, err := Open(newHeapMapped(b), int64(len(b)), fmt.Sprintf("heap-%d.seg", len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestVerifyChecksumsRechecks checks that VerifyChecksums and Verify read
// every checksum again: a byte of a mapped file changed after its chunk was
// read and checked is found there, though reads trust the chunk.
func TestVerifyChecksumsRechecks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := bytes.Clone(smallSegment(t, mem))
	r := openHeapMapped(t, b)
	if err := r.VerifyChecksums(); err != nil {
		t.Fatal(err)
	}
	a, err := r.ReadPage(mem, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	a.Release()
	ch := r.f.chunk(0, 1)
	b[ch.offset+ch.length-1] ^= 1 // its stored checksum
	a, err = r.ReadPage(mem, 0, 1)
	if err != nil {
		t.Fatalf("a read of a checked chunk checked it again: %v", err)
	}
	a.Release()
	for _, verify := range []func() error{r.VerifyChecksums, r.Verify} {
		err := verify()
		if err == nil {
			t.Fatal("a changed chunk went unnoticed")
		}
		checkCorrupt(t, err, "heap-")
	}
}
