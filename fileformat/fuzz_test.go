package fileformat

import (
	"bytes"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
)

// FuzzParquetReader feeds arbitrary bytes (seeded with real files, whole
// and cut) to OpenParquet and reads every column of every row: no panic,
// no leak, and every failure is a corruption or an unsupported type.
func FuzzParquetReader(f *testing.F) {
	mem := memory.NewGoAllocator()
	sc := FileSchema(allColumns, false)
	rec := sampleBatch(mem, sc, 0, 40)
	for _, o := range []ParquetOptions{{}, {NoDictionary: true, Compression: "none", RowGroupRows: 16}, {Compression: "snappy"}} {
		data := writeParquet(f, mem, sc, o, rec)
		f.Add(data)
		f.Add(data[:len(data)*3/4])
		mid := bytes.Clone(data)
		mid[len(mid)/2] ^= 0xff
		f.Add(mid)
	}
	rec.Release()
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		_, err := readValues(t, mem, data, columnTypes(allColumns))
		if err != nil && !errors.Is(err, rowttl.ErrCorruption) && !errors.Is(err, rowttl.ErrNotSupported) &&
			!errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Fatalf("unmarked error: %v", err)
		}
		if err == nil {
			mem.AssertSize(t, 0)
		}
	})
}
