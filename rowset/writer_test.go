package rowset

import (
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/segment"
	"github.com/rowttl/rowttl/vfs"
)

var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: schema.TTLColumn, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

// batch builds rows of (id, ttl); a ttl of -1 is NULL.
func batch(mem memory.Allocator, ids, ttls []int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, testSchema)
	defer b.Release()
	for i, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		if ttls[i] < 0 {
			b.Field(1).(*array.Int64Builder).AppendNull()
		} else {
			b.Field(1).(*array.Int64Builder).Append(ttls[i])
		}
	}
	return b.NewRecordBatch()
}

func newTestWriter(fsys vfs.FS, segRows int64) *Writer {
	var num uint64
	return NewWriter(WriterOptions{
		FS: fsys, Dir: "/t", Schema: testSchema, TTLIndex: 1, SegmentRows: segRows,
		Segment:    segment.WriterOptions{PageRows: 2},
		NewFileNum: func() uint64 { num++; return num },
	})
}

func TestWriterMeta(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	fsys := vfs.NewMemFS()
	if err := fsys.MkdirAll("/t"); err != nil {
		t.Fatal(err)
	}
	w := newTestWriter(fsys, 3)
	for _, rec := range []arrow.RecordBatch{
		batch(mem, []int64{1, 2}, []int64{500, -1}),
		batch(mem, []int64{3, 4, 5, 6}, []int64{100, 900, -1, 300}),
		batch(mem, []int64{7}, []int64{200}),
	} {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	m, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	// Seven rows cut at three per segment.
	if got := []int64{m.Segments[0].Rows, m.Segments[1].Rows, m.Segments[2].Rows}; len(m.Segments) != 3 || !slices.Equal(got, []int64{3, 3, 1}) {
		t.Fatalf("segments %+v", m.Segments)
	}
	if m.Rows != 7 {
		t.Errorf("rows %d", m.Rows)
	}
	if want := (TTLStats{Nulls: 2, HasMinMax: true, Min: 100, Max: 900}); m.TTL != want {
		t.Errorf("TTL stats %+v, want %+v", m.TTL, want)
	}
	if m.Hist == nil || m.Hist.Rows() != 5 || m.Hist.Nulls() != 2 {
		t.Errorf("histogram %v", m.Hist)
	}
	var bytes int64
	for _, s := range m.Segments {
		st, err := fsys.Stat(SegmentFileName("/t", s.FileNum))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() != s.Bytes {
			t.Errorf("segment %d: %d bytes on disk, meta says %d", s.FileNum, st.Size(), s.Bytes)
		}
		bytes += s.Bytes
	}
	if bytes != m.Bytes {
		t.Errorf("bytes %d, segments sum to %d", m.Bytes, bytes)
	}
	names, _ := fsys.List("/t")
	for _, n := range names {
		if _, ok := ParseSegmentFileName(n); !ok {
			t.Errorf("left %s behind", n)
		}
	}

	// The handle reads what was written, and closes and removes its files
	// when the last reference of an obsolete rowset goes.
	m.ID = 9
	var released, removed bool
	h, err := Open(fsys, "/t", m, func(_ *Handle, rm bool) { released, removed = true, rm })
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	kc := NewKeyCursor(h, mem, 1)
	for {
		ok, err := kc.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		ids = append(ids, int64(kc.Ordinal))
	}
	kc.Close()
	if !slices.Equal(ids, []int64{0, 1, 2, 3, 4, 5, 6}) {
		t.Errorf("ordinals %v", ids)
	}
	h.Ref()
	h.MarkObsolete()
	h.Unref()
	if released {
		t.Fatal("released with a reference left")
	}
	h.Unref()
	if !released || !removed {
		t.Fatalf("released %v removed %v", released, removed)
	}
	if names, _ := fsys.List("/t"); len(names) != 0 {
		t.Errorf("files left after the obsolete rowset went: %v", names)
	}
}

func TestWriterAbort(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, keep := range []bool{false, true} {
		fsys := vfs.NewMemFS()
		fsys.MkdirAll("/t")
		w := newTestWriter(fsys, 2)
		w.opts.MayRemove = func() bool { return !keep }
		rec := batch(mem, []int64{1, 2, 3}, []int64{1, 2, 3})
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		// One published segment, one temporary: Abort always removes the
		// temporary, the published one unless MayRemove says no.
		w.Abort()
		names, _ := fsys.List("/t")
		want := 0
		if keep {
			want = 1
		}
		if len(names) != want {
			t.Errorf("keep=%v: files left %v", keep, names)
		}
	}
}

func TestOpenRefusesDamagedRowsets(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	fsys := vfs.NewMemFS()
	fsys.MkdirAll("/t")
	w := newTestWriter(fsys, 10)
	rec := batch(mem, []int64{1, 2}, []int64{5, 6})
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	m, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(Meta) Meta{
		"missing file": func(m Meta) Meta { m.Segments = []SegmentMeta{{FileNum: 77, Rows: 2, Bytes: m.Bytes}}; return m },
		"wrong size": func(m Meta) Meta {
			m.Segments = []SegmentMeta{{FileNum: m.Segments[0].FileNum, Rows: 2, Bytes: m.Bytes + 1}}
			return m
		},
		"wrong rows": func(m Meta) Meta {
			m.Segments = []SegmentMeta{{FileNum: m.Segments[0].FileNum, Rows: 3, Bytes: m.Bytes}}
			return m
		},
	} {
		if _, err := Open(fsys, "/t", change(m), nil); !errors.Is(err, rowttl.ErrCorruption) {
			t.Errorf("%s: %v, want corruption", name, err)
		}
	}
}
