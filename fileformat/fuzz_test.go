package fileformat

import (
	"bytes"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/snappy"
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

// FuzzSnappyFragments: any input, repeated past a fragment's size or not,
// encodes to a snappy block that the reference decoder reads back.
func FuzzSnappyFragments(f *testing.F) {
	f.Add([]byte("view #1234567890 "), uint8(0))
	f.Add([]byte("click #2345678901 buy #3456789012 "), uint8(200))
	f.Add([]byte{0, 1, 2, 3, 255}, uint8(255))
	f.Fuzz(func(t *testing.T, data []byte, reps uint8) {
		src := data
		if reps > 0 && len(data) > 0 {
			// Up to a few fragments: the input with a varying suffix.
			for range int(reps) * (snappyFragment / 64) / max(len(data), 1) {
				src = append(src, data...)
				src = append(src, byte(len(src)))
			}
		}
		enc := encodeSnappyFragments(nil, src)
		if len(enc) > snappyFragmentsBound(len(src), 1) {
			t.Fatalf("%d bytes encoded to %d, more than the bound", len(src), len(enc))
		}
		dec, err := snappy.Decode(nil, enc)
		if err != nil || !bytes.Equal(dec, src) {
			t.Fatalf("%d bytes: snappy.Decode: %v, %d bytes back", len(src), err, len(dec))
		}
	})
}
