package segment

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
)

// codecRecord is a page of 300 rows that every codec shrinks: a sequence
// of ids, a column of few values and messages like the benchmark's, with
// NULLs. Format 4's writer wrote testdata/format4.seg from the same rows.
func codecRecord(mem memory.Allocator) arrow.RecordBatch {
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	for i := range 300 {
		if i%7 == 3 {
			sb.AppendNull()
		} else {
			sb.Append(fmt.Sprintf("refund #%010d of the day", 1000000000+i*7919))
		}
		ib.Append(int64(i))
	}
	a, b := sb.NewArray(), ib.NewArray()
	defer a.Release()
	defer b.Release()
	return newRecord(b, a)
}

// TestCodec: each codec compresses the columns it names, and only where
// compression pays; a negative zstd level turns all compression off, hot
// columns stay uncompressed, and every file reads back the rows written.
func TestCodec(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// c0 is a tiny delta page (below minCompressLen), c1 the messages, c2
	// a large int page of few distinct values.
	rec0 := codecRecord(mem)
	defer rec0.Release()
	ib := array.NewInt64Builder(mem)
	for i := range 300 {
		ib.Append(int64(i*i%5) << 40)
	}
	ints := ib.NewArray()
	ib.Release()
	defer ints.Release()
	rec := newRecord(rec0.Column(0), rec0.Column(1), ints)
	defer rec.Release()
	tests := []struct {
		name string
		opts WriterOptions
		want [3]string // compression of c0, c1, c2
	}{
		{"default", WriterOptions{}, [3]string{"none", "lz4", "zstd"}},
		{"zstd", WriterOptions{Codec: CodecZstd}, [3]string{"none", "zstd", "zstd"}},
		{"lz4", WriterOptions{Codec: CodecLZ4}, [3]string{"none", "lz4", "lz4"}},
		{"none", WriterOptions{Codec: CodecNone}, [3]string{"none", "none", "none"}},
		{"no zstd level", WriterOptions{ZstdLevel: -1}, [3]string{"none", "none", "none"}},
		{"lz4, no zstd level", WriterOptions{Codec: CodecLZ4, ZstdLevel: -1}, [3]string{"none", "none", "none"}},
		{"hot strings", WriterOptions{HotColumns: []int{1}}, [3]string{"none", "none", "zstd"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := writeBatches(t, rec, tc.opts, 0)
			r := openBytes(t, b, tc.name)
			for c, want := range tc.want {
				if _, comp := r.PageEncoding(c, 0); comp != want {
					t.Errorf("column %d stored %s, want %s", c, comp, want)
				}
			}
			if err := r.Verify(); err != nil {
				t.Fatal(err)
			}
			for c := range tc.want {
				got := readColumn(t, r, mem, c)
				if !arraysIdentical(got, rec.Column(c)) {
					t.Errorf("column %d reads back different", c)
				}
				got.Release()
			}
		})
	}
	if _, err := NewWriter(io.Discard, rec.Schema(), WriterOptions{Codec: CodecNone + 1}); !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Fatalf("an unknown codec: %v, want ErrInvalidArgument", err)
	}
}

// TestParseCodec: the names of Doris's "compression" property.
func TestParseCodec(t *testing.T) {
	for _, tc := range []struct {
		name string
		want Codec
		err  error
	}{
		{"LZ4", CodecLZ4, nil},
		{"lz4f", CodecLZ4, nil},
		{" ZSTD ", CodecZstd, nil},
		{"none", CodecNone, nil},
		{"NO_COMPRESSION", CodecNone, nil},
		{"default_compression", CodecDefault, nil},
		{"Default", CodecDefault, nil},
		{"snappy", 0, rowttl.ErrNotSupported},
		{"zlib", 0, rowttl.ErrNotSupported},
		{"LZ4HC", 0, rowttl.ErrNotSupported},
		{"brotli", 0, rowttl.ErrInvalidArgument},
		{"", 0, rowttl.ErrInvalidArgument},
	} {
		got, err := ParseCodec(tc.name)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("ParseCodec(%q) = %v, %v; want an error wrapping %v", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseCodec(%q) = %v, %v; want %v", tc.name, got, err, tc.want)
		}
		if back, err := ParseCodec(got.String()); err != nil || back != got {
			t.Errorf("ParseCodec(%q) = %v, %v", got.String(), back, err)
		}
	}
}

// TestFormat4 reads a file written by the format 4 writer (testdata: the
// rows of codecRecord in pages of 128, its messages zstd-compressed): it
// verifies, reads the rows the current writer stores as LZ4, and its pages
// copied into a format 5 file read the same.
func TestFormat4(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	data, err := os.ReadFile("testdata/format4.seg")
	if err != nil {
		t.Fatal(err)
	}
	r4 := openBytes(t, data, "format4.seg")
	if r4.f.version != 4 || string(r4.Tag()) != "format 4" {
		t.Fatalf("format %d, tag %q", r4.f.version, r4.Tag())
	}
	if err := r4.Verify(); err != nil {
		t.Fatal(err)
	}
	rec := codecRecord(mem)
	defer rec.Release()
	b5, _ := writeBatches(t, rec, WriterOptions{PageRows: 128}, 0)
	r5 := openBytes(t, b5, "format5.seg")
	c5 := openBytes(t, copyAll(t, r4), "copied.seg")
	for p := 0; p < r4.NumPages(); p++ {
		if _, comp := r4.PageEncoding(1, p); comp != "zstd" {
			t.Fatalf("page %d of the format 4 file stored %s; the test needs zstd", p, comp)
		}
		if _, comp := r5.PageEncoding(1, p); comp != "lz4" {
			t.Fatalf("page %d of the format 5 file stored %s, want lz4", p, comp)
		}
	}
	for col := range rec.Schema().Fields() {
		for _, r := range []*Reader{r4, r5, c5} {
			got := readColumn(t, r, mem, col)
			if !arraysIdentical(got, rec.Column(col)) {
				t.Errorf("%s column %d: reads %v", r.Name(), col, got)
			}
			got.Release()
		}
	}
}

// TestLZ4BeforeFormat5: a file that says it is of format 4 but holds an
// LZ4 chunk is corrupt, as a format 4 reader could not have read it.
func TestLZ4BeforeFormat5(t *testing.T) {
	mem := memory.NewGoAllocator()
	rec := codecRecord(mem)
	defer rec.Release()
	b, _ := writeBatches(t, rec, WriterOptions{}, 0)
	if _, comp := openBytes(t, b, "x").PageEncoding(1, 0); comp != "lz4" {
		t.Fatalf("stored %s, the test needs lz4", comp)
	}
	old := bytes.Clone(b)
	binary.LittleEndian.PutUint32(old[len(magic):], 4)
	binary.LittleEndian.PutUint32(old[len(old)-trailerLen+8:], 4)
	_, err := Open(bytes.NewReader(old), int64(len(old)), "old.seg")
	checkCorrupt(t, err, "old.seg")
	if !errors.Is(err, errFooterChunk) {
		t.Fatalf("%v, want the chunk meta named", err)
	}
}

// FuzzDecompress feeds arbitrary blocks to both decompressors with any
// body length: they must fail or fill exactly that length, never panic or
// write past it.
func FuzzDecompress(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		r, err := Open(bytes.NewReader(s), int64(len(s)), "seed")
		if err != nil {
			f.Fatal(err)
		}
		for i := range r.f.chunks {
			c := &r.f.chunks[i]
			if c.comp == compNone {
				continue
			}
			raw := make([]byte, c.length)
			if err := r.readAt(raw, c.offset); err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(c.comp), uint32(c.bodyLen), raw[:len(raw)-chunkTrailer])
		}
	}
	f.Add(uint8(compLZ4), uint32(10), []byte{0xf0})
	f.Add(uint8(compLZ4), uint32(0), []byte{})
	f.Fuzz(func(t *testing.T, comp uint8, bodyLen uint32, block []byte) {
		n := int(bodyLen % (1 << 20))
		c := compZstd
		if comp%2 == 0 {
			c = compLZ4
		}
		// A canary after the body catches a write past bodyLen.
		buf := make([]byte, n+8)
		for i := range buf[n:] {
			buf[n+i] = 0xa5
		}
		out, err := decompress(buf[:0:n], block, c, n)
		if !bytes.Equal(buf[n:], bytes.Repeat([]byte{0xa5}, 8)) {
			t.Fatalf("%s wrote past the body", c)
		}
		if err == nil && len(out) != n {
			t.Fatalf("%s: %d bytes, want %d", c, len(out), n)
		}
	})
}
