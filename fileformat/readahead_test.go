package fileformat

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
)

// failingReader is a stream of batches that ends with an error.
type failingReader struct {
	array.RecordReader
	err error
}

func (f *failingReader) Err() error { return f.err }

// ReadAhead hands over the batches of its stream in order, whatever
// the depth, then the stream's error; released early or late, it leaks
// no batch.
func TestReadAhead(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := FileSchema(allColumns, false)
	var recs []arrow.RecordBatch
	for i := 0; i < 10; i++ {
		recs = append(recs, sampleBatch(mem, sc, i*50, 50))
	}
	defer releaseRecs(recs)
	stream := func(err error) array.RecordReader {
		rr, e := array.NewRecordReader(sc, recs)
		if e != nil {
			t.Fatal(e)
		}
		return &failingReader{RecordReader: rr, err: err}
	}
	for _, depth := range []int{0, 1, 2, 20} {
		boom := errors.New("boom")
		ra := ReadAhead(stream(boom), depth)
		n := 0
		for ra.Next() {
			if n >= len(recs) || !array.RecordEqual(ra.RecordBatch(), recs[n]) {
				t.Fatalf("depth %d: batch %d differs", depth, n)
			}
			n++
		}
		if n != len(recs) || !errors.Is(ra.Err(), boom) {
			t.Errorf("depth %d: %d batches, error %v", depth, n, ra.Err())
		}
		if ra.Next() {
			t.Errorf("depth %d: a batch after the end", depth)
		}
		ra.Release()
		for stop := 0; stop < 3; stop++ {
			ra := ReadAhead(stream(nil), depth)
			for i := 0; i < stop && ra.Next(); i++ {
			}
			ra.Release() // batches decoded ahead are released with it
		}
	}
}

// A damaged page read ahead fails the stream as corruption, as read
// directly.
func TestReadAheadCorruption(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := FileSchema(allColumns, false)
	rec := sampleBatch(mem, sc, 0, 300)
	good := writeParquet(t, mem, sc, ParquetOptions{NoDictionary: true}, rec)
	rec.Release()
	damaged := bytes.Clone(good)
	for i := 200; i < 260; i++ {
		damaged[i] ^= 0x5a
	}
	pr, err := OpenParquet("test.parquet", bytes.NewReader(damaged), int64(len(damaged)), mem)
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	rr, err := pr.Records(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ra := ReadAhead(rr, 2)
	defer ra.Release()
	for ra.Next() {
	}
	if !errors.Is(ra.Err(), rowttl.ErrCorruption) {
		t.Fatalf("error %v does not wrap ErrCorruption", ra.Err())
	}
}

func releaseRecs(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}
