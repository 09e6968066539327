package table

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/segment"
)

// messageCodecs returns, per segment file of dir, the compression of the
// message column's first page.
func messageCodecs(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := segment.Open(strings.NewReader(string(b)), int64(len(b)), name)
		if err != nil {
			t.Fatal(err)
		}
		col := r.Schema().FieldIndices("message")[0]
		_, comp := r.PageEncoding(col, 0)
		out[filepath.Base(name)] = comp
	}
	return out
}

// TestCompressionProperty: the compression property chooses the codec of
// the files written after it is set, at CREATE or by ALTER (files written
// before keep theirs and still read), is stored in upper case, survives a
// reopen, and refuses what it does not know with the documented errors,
// leaving the table as it was.
func TestCompressionProperty(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewPCG(1, 2))
	batch := func(start int64) []eventRow {
		rows := genEvents(rng, start, 3000)
		for i := range rows {
			rows[i].message = fmt.Sprintf("refund #%010d of the day", rng.Int64N(1e10))
		}
		return rows
	}
	write := func(tbl *Table, start int64) {
		rec := eventBatch(mem, batch(start), true)
		mustWrite(t, tbl, rec)
		rec.Release()
	}
	for _, tc := range []struct{ value, stored, comp string }{
		{"", "", "lz4"}, {" Zstd ", "ZSTD", "zstd"}, {"lz4", "LZ4", "lz4"}, {"LZ4F", "LZ4", "lz4"},
		{"none", "NONE", "none"}, {"default_compression", "DEFAULT", "lz4"},
	} {
		dir := filepath.Join(t.TempDir(), "t")
		def := directDef()
		if tc.value != "" {
			def.Properties[PropCompression] = tc.value
		}
		tbl := mustCreate(t, dir, def, quiet())
		if got := tbl.Definition().Properties[PropCompression]; got != tc.stored {
			t.Fatalf("%q stored as %q, want %q", tc.value, got, tc.stored)
		}
		write(tbl, 0)
		for f, comp := range messageCodecs(t, dir) {
			if comp != tc.comp {
				t.Fatalf("compression %q: %s stores messages %s, want %s", tc.value, f, comp, tc.comp)
			}
		}
		checkClose(t, tbl)
	}

	dir := filepath.Join(t.TempDir(), "t")
	def := directDef()
	def.Properties[PropCompression] = "zstd"
	tbl := mustCreate(t, dir, def, quiet())
	write(tbl, 0)
	before := messageCodecs(t, dir)
	if err := tbl.SetProperties(ctx, map[string]string{"COMPRESSION": "lz4"}); err != nil {
		t.Fatal(err)
	}
	write(tbl, 3000)
	after := messageCodecs(t, dir)
	if len(after) != len(before)+1 {
		t.Fatalf("files %v then %v", before, after)
	}
	for f, comp := range after {
		want := "lz4"
		if _, old := before[f]; old {
			want = "zstd"
		}
		if comp != want {
			t.Fatalf("after ALTER, %s stores messages %s, want %s", f, comp, want)
		}
	}
	for _, bad := range []struct {
		value string
		is    error
		text  string
	}{
		{"brotli", rowttl.ErrInvalidProperty, `unknown compression "brotli": default, zstd, lz4 or none`},
		{"", rowttl.ErrInvalidProperty, `unknown compression ""`},
		{"snappy", rowttl.ErrNotSupported, `compression "snappy" is not supported: only default, zstd, lz4 and none are`},
		{"LZ4HC", rowttl.ErrNotSupported, `compression "LZ4HC"`},
	} {
		err := tbl.SetProperties(ctx, map[string]string{PropCompression: bad.value})
		if !errors.Is(err, bad.is) || !strings.Contains(err.Error(), bad.text) {
			t.Errorf("ALTER compression %q: %v, want %v with %q", bad.value, err, bad.is, bad.text)
		}
		d := directDef()
		d.Properties[PropCompression] = bad.value
		_, err = Create(filepath.Join(t.TempDir(), "bad"), d, quiet())
		if !errors.Is(err, bad.is) || !strings.Contains(err.Error(), bad.text) {
			t.Errorf("CREATE with compression %q: %v, want %v with %q", bad.value, err, bad.is, bad.text)
		}
	}
	if got := tbl.Definition().Properties[PropCompression]; got != "LZ4" {
		t.Fatalf("after failed ALTERs, compression is %q", got)
	}
	checkClose(t, tbl)
	tbl, err := Open(dir, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer checkClose(t, tbl)
	if got := tbl.Definition().Properties[PropCompression]; got != "LZ4" {
		t.Fatalf("reopened, compression is %q", got)
	}
	if n := mustCount(t, tbl, time.Unix(0, 0), nil); n != 6000 {
		t.Fatalf("%d rows read back from both codecs' files, want 6000", n)
	}
}
