package table

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/vfs"
)

// FuzzManifestReplay opens a table whose manifest is arbitrary bytes, next
// to the segment files of a real table, and reads everything it opens. It
// must never panic, and every error must be marked as corruption (or as a
// missing table). Each input is tried twice: as the raw manifest, and with
// each of its lines framed as one record with valid checksums, which lets
// the fuzzer reach the decoding and the replay of edits (a real manifest
// as lines is in the seed corpus).
//
//	go test -run XXX -fuzz FuzzManifestReplay -fuzztime 5m ./table
func FuzzManifestReplay(f *testing.F) {
	fx := manifestFuzzFixture(f)
	f.Add(fx.manifest)
	f.Add(fx.manifest[:len(fx.manifest)-7])          // a torn tail
	f.Add(append(bytes.Clone(fx.manifest), 0, 0, 0)) // a zero tail
	f.Add(bytes.Join(fx.payloads, []byte("\n")))
	f.Add(bytes.Join(fx.payloads[:1], []byte("\n")))
	f.Add([]byte{})
	f.Add(make([]byte, 30))
	f.Add([]byte(`{"format":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		replayFuzzOne(t, fx, data)
		var framed []byte
		for _, line := range bytes.Split(data, []byte("\n")) {
			framed = appendRecord(framed, line)
		}
		replayFuzzOne(t, fx, framed)
	})
}

// manifestFuzz is a table's files, built once.
type manifestFuzz struct {
	fs       *vfs.MemFS
	manifest []byte
	payloads [][]byte
}

var (
	fuzzFixtureOnce sync.Once
	fuzzFixture     *manifestFuzz
	fuzzFixtureErr  error
)

func manifestFuzzFixture(tb testing.TB) *manifestFuzz {
	fuzzFixtureOnce.Do(func() { fuzzFixture, fuzzFixtureErr = buildManifestFuzzFixture() })
	if fuzzFixtureErr != nil {
		tb.Fatal(fuzzFixtureErr)
	}
	return fuzzFixture
}

// buildManifestFuzzFixture makes a merge-on-write table in source mode
// with writes, a delete, a compaction and an ALTER, so that its manifest
// holds every kind of edit.
func buildManifestFuzzFixture() (*manifestFuzz, error) {
	ctx := context.Background()
	mem := newCountingAllocator()
	fsys := vfs.NewMemFS()
	tbl, err := Create("/t", modelDef(schema.UniqueMOW, true), reliabilityOpts(fsys, mem))
	if err != nil {
		return nil, err
	}
	defer tbl.Close()
	ref := newRef(schema.UniqueMOW, true)
	for i := 0; i < 3; i++ {
		if err := writeModelRows(tbl, mem, ref, modelRowsFor(i*20, 30, 40, int64(i*100), true)); err != nil {
			return nil, err
		}
	}
	if _, err := tbl.DeleteWhere(ctx, Matcher{Filter: query.Compare("v", query.Lt, int64(20))}, WriteOptions{Now: base}); err != nil {
		return nil, err
	}
	if err := tbl.CompactAt(ctx, Cumulative, base); err != nil {
		return nil, err
	}
	if err := tbl.SetProperties(ctx, map[string]string{PropTTL: "9 hours"}); err != nil {
		return nil, err
	}
	if err := writeModelRows(tbl, mem, ref, modelRowsFor(100, 10, 0, 500, true)); err != nil {
		return nil, err
	}
	data, err := vfs.ReadFile(fsys, "/t/"+manifestName(1))
	if err != nil {
		return nil, err
	}
	payloads, _, err := readRecords("fixture", data)
	if err != nil {
		return nil, err
	}
	return &manifestFuzz{fs: fsys, manifest: data, payloads: payloads}, nil
}

// replayFuzzOne opens the fixture's table with manifest as its manifest.
func replayFuzzOne(t *testing.T, fx *manifestFuzz, manifest []byte) {
	fsys := fx.fs.Clone()
	w, err := fsys.Create("/t/" + manifestName(1))
	if err != nil {
		t.Fatal(err)
	}
	w.Write(manifest)
	w.Close()
	mem := newCountingAllocator()
	marked := func(step string, err error) {
		t.Helper()
		if err != nil && !errors.Is(err, rowttl.ErrCorruption) {
			t.Fatalf("%s: unmarked error: %v", step, err)
		}
	}
	tbl, err := Open("/t", reliabilityOpts(fsys, mem))
	if err != nil {
		if !errors.Is(err, rowttl.ErrNotFound) {
			marked("open", err)
		}
		return
	}
	defer func() {
		tbl.Close()
		mem.AssertSize(t, 0)
	}()
	_, err = visibleRowsAll(tbl)
	marked("scan", err)
	marked("check", tbl.Check())
}

// visibleRowsAll scans every column of the table at base.
func visibleRowsAll(tbl *Table) (int64, error) {
	r, err := tbl.Scan(context.Background(), query.Request{Now: base})
	if err != nil {
		return 0, err
	}
	defer r.Release()
	var n int64
	for r.Next() {
		n += r.RecordBatch().NumRows()
	}
	return n, r.Err()
}
