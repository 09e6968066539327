package segment

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
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

// TestFormat3 reads a file written by the format 3 writer (format2.seg
// copied, so its pages carry sums): it verifies, has no tag, and reads the
// same values as the format 2 file it was copied from.
func TestFormat3(t *testing.T) {
	data2, err := os.ReadFile("testdata/format2.seg")
	if err != nil {
		t.Fatal(err)
	}
	data3, err := os.ReadFile("testdata/format3.seg")
	if err != nil {
		t.Fatal(err)
	}
	r2, r3 := openBytes(t, data2, "format2.seg"), openBytes(t, data3, "format3.seg")
	if r3.f.version != 3 || r3.Tag() != nil || r2.Tag() != nil {
		t.Fatalf("format %d, tags %q %q", r3.f.version, r3.Tag(), r2.Tag())
	}
	if err := r3.Verify(); err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for col := 0; col < r2.Schema().NumFields(); col++ {
		a2, a3 := readColumn(t, r2, mem, col), readColumn(t, r3, mem, col)
		if !array.Equal(a2, a3) {
			t.Errorf("column %d: format 3 reads %v, format 2 %v", col, a3, a2)
		}
		a2.Release()
		a3.Release()
	}
}

// TestTag: the owner's tag comes back from the footer, copied pages or not;
// a tag longer than MaxTagBytes is refused.
func TestTag(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	arr := buildArray(t, mem, arrow.PrimitiveTypes.Int64, []any{int64(1), nil, int64(3)})
	defer arr.Release()
	rec := newRecord(arr)
	defer rec.Release()
	for _, tag := range [][]byte{nil, {0}, []byte("owner"), bytes.Repeat([]byte{0xab}, MaxTagBytes)} {
		b, _ := writeBatches(t, rec, WriterOptions{Tag: tag}, 0)
		r := openBytes(t, b, "tag.seg")
		if !bytes.Equal(r.Tag(), tag) {
			t.Fatalf("tag %x reads back as %x", tag, r.Tag())
		}
		if err := r.Verify(); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := NewWriter(&buf, rec.Schema(), WriterOptions{Tag: make([]byte, MaxTagBytes+1)}); !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Fatalf("a tag of %d bytes: %v", MaxTagBytes+1, err)
	}
}
