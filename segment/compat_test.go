package segment

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestFormat2 reads a file written by the format 2 writer (kept in
// testdata: integer, decimal-scaled and plain doubles, timestamps and
// strings, with NULLs, in pages of 8 rows): its pages have no sums, and
// copying them into a format 3 file computes the sums their zone maps
// then must hold.
func TestFormat2(t *testing.T) {
	data, err := os.ReadFile("testdata/format2.seg")
	if err != nil {
		t.Fatal(err)
	}
	r := openBytes(t, data, "format2.seg")
	var sb strings.Builder
	if err := r.Dump(&sb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "format version 2") {
		t.Fatalf("dump of a format 2 file:\n%s", sb.String())
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	encs := map[string]bool{}
	for p := 0; p < r.NumPages(); p++ {
		for c := 0; c < r.Schema().NumFields(); c++ {
			if r.PageStats(c, p).HasSum {
				t.Fatalf("page %d column %d of a format 2 file has a sum", p, c)
			}
			enc, _ := r.PageEncoding(c, p)
			encs[enc] = true
		}
	}
	if !encs["scaled"] || !encs["plain"] {
		t.Fatalf("the file lacks the encodings it is kept for: %v", encs)
	}

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := openBytes(t, copyAll(t, r), "copied.seg")
	for col := 0; col < c.Schema().NumFields(); col++ {
		for p := 0; p < c.NumPages(); p++ {
			a, err := c.ReadPage(mem, col, p)
			if err != nil {
				t.Fatal(err)
			}
			// expectSum reads column 0 of its reader: give it this one.
			sub := &Reader{f: footer{cols: []colType{c.f.cols[col]}, chunks: []chunkMeta{*c.f.chunk(col, p)}, pages: []int{c.f.pages[p]}}}
			if err := expectSum(sub, 0, a); err != nil {
				t.Errorf("column %s: %v", c.Schema().Field(col).Name, err)
			}
			a.Release()
		}
	}
}

// TestVerifySums checks that Verify compares every page sum with the data:
// a footer whose checksum is right but whose sum is not (a writer bug, not
// a flipped bit) is corruption.
func TestVerifySums(t *testing.T) {
	data, err := os.ReadFile("testdata/format2.seg")
	if err != nil {
		t.Fatal(err)
	}
	copied := copyAll(t, openBytes(t, data, "format2.seg"))
	for c := 0; c < len(openBytes(t, copied, "sums.seg").f.cols); c++ {
		r := openBytes(t, copied, "sums.seg")
		if err := r.Verify(); err != nil {
			t.Fatal(err)
		}
		z := &r.f.chunk(c, 1).zone
		if !z.HasSum {
			continue
		}
		z.Sum.Add(1)
		err := r.Verify()
		checkCorrupt(t, err, "sums.seg")
		if !strings.Contains(err.Error(), errSum.Error()) {
			t.Fatalf("column %d: %v, want the sum named", c, err)
		}
	}
}

// copyAll copies every page of r into a new segment with CopyPage.
func copyAll(t *testing.T, r *Reader) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := NewWriter(&out, r.Schema(), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for p := 0; p < r.NumPages(); p++ {
		if err := w.CopyPage(r, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
