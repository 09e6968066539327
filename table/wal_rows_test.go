package table

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/vfs"
)

// encodeRowsStream is the first format of a log record's rows: the label,
// then a whole Arrow IPC stream, schema included. Logs written by earlier
// versions hold it.
func encodeRowsStream(mem memory.Allocator, rec arrow.RecordBatch, label string) ([]byte, error) {
	buf := bytes.NewBuffer(binary.AppendUvarint(nil, uint64(len(label))))
	buf.WriteString(label)
	w := ipc.NewWriter(buf, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(mem))
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// rewriteWAL replaces the body of every record of the log in dir with
// what re makes of it, keeping numbers and framing.
func rewriteWAL(t *testing.T, fsys vfs.FS, dir string, re func(walRecord) []byte) {
	t.Helper()
	segs, err := replayWAL(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		var data []byte
		for _, r := range s.records {
			data = appendRecord(data, append(binary.AppendUvarint(nil, r.seq), re(r)...))
		}
		if err := vfs.WriteFileAtomic(fsys, filepath.Join(dir, walName(s.num)), data); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWALRowsFirstFormatReplays: a log whose records hold their rows as
// whole IPC streams (the first format) or IPC batches (the second)
// replays to the same rows, labels and versions as the current format,
// mixed in one segment too.
func TestWALRowsFirstFormatReplays(t *testing.T) {
	for _, model := range []schema.Model{schema.Duplicate, schema.UniqueMOW} {
		t.Run(modelName(model), func(t *testing.T) {
			alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer alloc.AssertSize(t, 0)
			fsys := vfs.NewMemFS()
			tbl := mustCreate(t, "/t", modelDef(model, false), loggedOpts(fsys, alloc))
			ctx := context.Background()
			for i := range 4 {
				rec := modelBatch(alloc, modelRowsFor(i*3, 3, 5, int64(i*10), false), false)
				err := tbl.WriteWith(ctx, rec, WriteOptions{Label: fmt.Sprintf("l%d", i)})
				rec.Release()
				if err != nil {
					t.Fatal(err)
				}
			}
			req := query.Request{Now: early}
			want := scanAll(t, tbl, req)
			crashed := fsys.CrashClone(nil)
			tbl.Close()

			v := tbl.vs.current
			phys := physicalSchema(v.def, v.policy)
			physMsg, err := schemaMessage(alloc, phys)
			if err != nil {
				t.Fatal(err)
			}
			old := 0
			rewriteWAL(t, crashed, "/t", func(r walRecord) []byte {
				if r.seq%3 == 0 {
					return r.body // the current format, next to the earlier ones
				}
				ver, label, rec, err := decodeRecord(alloc, "x", r, phys, physMsg)
				if err != nil {
					t.Fatal(err)
				}
				defer rec.Release()
				enc := encodeRowsStream
				if r.seq%3 == 2 {
					enc = encodeRowsBatch
				}
				body, err := enc(alloc, rec, label)
				if err != nil {
					t.Fatal(err)
				}
				old++
				return append(binary.AppendUvarint(nil, uint64(ver)), body...)
			})
			if old == 0 {
				t.Fatal("no record rewritten in the first format")
			}
			re, err := Open("/t", loggedOpts(crashed, alloc))
			if err != nil {
				t.Fatal(err)
			}
			defer re.Close()
			if got := scanAll(t, re, req); !reflect.DeepEqual(got, want) {
				t.Fatalf("replayed %v, want %v", got, want)
			}
			if err := re.WriteWith(ctx, emptyBatch(alloc, phys), WriteOptions{Label: "l1"}); !errors.Is(err, rowttl.ErrLabelExists) {
				t.Fatalf("label of a first-format record after replay: %v", err)
			}
		})
	}
}

// TestWALRowsLeaveSchemaOut: a record of one row in the walRowsBatch
// shape carries the batch alone, not the table's schema, which replay
// supplies.
func TestWALRowsLeaveSchemaOut(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	rec := modelBatch(alloc, modelRowsFor(0, 1, 0, 0, false), false)
	defer rec.Release()
	body, err := encodeRowsBatch(alloc, rec, "")
	if err != nil {
		t.Fatal(err)
	}
	stream, err := encodeRowsStream(alloc, rec, "")
	if err != nil {
		t.Fatal(err)
	}
	physMsg, err := schemaMessage(alloc, rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	if body[1] != walRowsBatch || bytes.Contains(body, physMsg) || len(body) >= len(stream)-len(physMsg)/2 {
		t.Fatalf("record of %d bytes (a stream takes %d, its schema %d): %x", len(body), len(stream), len(physMsg), body)
	}
	r := walRecord{seq: 1, body: append([]byte{7}, body...)}
	ver, _, got, err := decodeRecord(alloc, "x", r, rec.Schema(), physMsg)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if ver != 7 || !array.RecordEqual(got, rec) {
		t.Fatalf("decoded version %d rows %v, want 7 and %v", ver, got, rec)
	}
}

// FuzzWALRows: decoding any record body either fails with ErrCorruption or
// yields one batch of the table's physical schema.
func FuzzWALRows(f *testing.F) {
	mem := memory.NewGoAllocator()
	rec := modelBatch(mem, modelRowsFor(0, 3, 0, 0, false), false)
	defer rec.Release()
	for _, enc := range []func(memory.Allocator, arrow.RecordBatch, string) ([]byte, error){encodeRows, encodeRowsBatch, encodeRowsStream} {
		body, err := enc(mem, rec, "lab")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append([]byte{3}, body...))
		f.Add(append([]byte{3}, body[:len(body)-9]...))
	}
	f.Add([]byte{1, 0, walRowsBatch})
	f.Add([]byte{})
	phys := rec.Schema()
	physMsg, err := schemaMessage(mem, phys)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		_, _, got, err := decodeRecord(alloc, "x", walRecord{seq: 1, body: body}, phys, physMsg)
		if err != nil {
			// No size check here: the IPC reader recovers from a panic
			// on a damaged batch without releasing the buffers it had
			// sliced (the Go allocator's memory is collected all the same).
			if !errors.Is(err, rowttl.ErrCorruption) {
				t.Fatalf("error %v is not corruption", err)
			}
			return
		}
		if !got.Schema().Equal(phys) {
			t.Fatalf("schema %v", got.Schema())
		}
		got.Release()
		alloc.AssertSize(t, 0)
	})
}

// BenchmarkWALRecordEncode compares the rows of a one-row log record in
// the current shape with the first format's whole stream.
//
//	go test ./table -run XXX -bench WALRecordEncode
func BenchmarkWALRecordEncode(b *testing.B) {
	mem := memory.NewGoAllocator()
	rec := modelBatch(mem, modelRowsFor(0, 1, 0, 0, false), false)
	defer rec.Release()
	for _, c := range []struct {
		name string
		enc  func(memory.Allocator, arrow.RecordBatch, string) ([]byte, error)
	}{{"raw", encodeRows}, {"batch", encodeRowsBatch}, {"stream", encodeRowsStream}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				body, err := c.enc(mem, rec, "")
				if err != nil {
					b.Fatal(err)
				}
				n = len(body)
			}
			b.ReportMetric(float64(n), "bytes/record")
		})
	}
}

// TestWALLoggedWritesFollowAlter: logged writes prepare their rows for the
// definition current when they run, not one a previous write saw, and the
// records of both definitions replay.
func TestWALLoggedWritesFollowAlter(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	fsys := vfs.NewMemFS()
	tbl := mustCreate(t, "/t", modelDef(schema.Duplicate, false), loggedOpts(fsys, alloc))
	defer tbl.Close()
	ctx := context.Background()
	if err := writeCols(tbl, alloc, map[string]any{"id": int64(1), "v": int64(1)}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.AddColumn(ctx, schema.Column{Name: "extra", Type: schema.BigIntType, Nullable: true}, ""); err != nil {
		t.Fatal(err)
	}
	if err := writeCols(tbl, alloc, map[string]any{"id": int64(2), "v": int64(2), "extra": int64(7)}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.RenameColumn(ctx, "extra", "more"); err != nil {
		t.Fatal(err)
	}
	if err := writeCols(tbl, alloc, map[string]any{"id": int64(3), "v": int64(3), "more": int64(8)}); err != nil {
		t.Fatal(err)
	}
	req := query.Request{Now: early, Columns: []string{"id", "more"}}
	want := "[[1 NULL] [2 7] [3 8]]"
	if got := fmt.Sprint(scanAll(t, tbl, req)); got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
	re, err := Open("/t", loggedOpts(fsys.CrashClone(nil), alloc))
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if got := fmt.Sprint(scanAll(t, re, req)); got != want {
		t.Fatalf("replayed rows %s, want %s", got, want)
	}
}
