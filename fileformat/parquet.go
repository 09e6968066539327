package fileformat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/rowttl/rowttl"
)

// Default Parquet layout: row groups big enough that scanners amortise
// their metadata, small enough that a writer holds one in memory.
const (
	DefaultRowGroupRows  = 1 << 20
	DefaultRowGroupBytes = 128 << 20
)

// dictionaryPageLimit is where a column's dictionary gives up for plain
// pages. Low-cardinality columns (codes, countries, flags) stay well
// under it; on high-cardinality ones (ids, messages) an early fallback
// costs nothing, where arrow-go's 1 MiB default spent CPU and memory on a
// dictionary only to write a bigger file (1M bench events rows: 10.3 MB
// with it, 9.1 MB with this, 30% less CPU).
const dictionaryPageLimit = 128 << 10

// zstdLevel is zstd's fastest level. On the bench events table it writes
// a smaller file than arrow-go's default (level 3: 11.2 against 11.3 MiB
// for 500K rows) in 20% less CPU, the encoder having been 40% of an
// export's CPU; other codecs ignore it.
const zstdLevel = 1

// ParquetOptions shape a Parquet file.
type ParquetOptions struct {
	// Compression is "zstd" (the default), "snappy" or "none".
	Compression string
	// RowGroupRows and RowGroupBytes cut row groups: after that many rows,
	// or once the buffered row group holds that many encoded bytes.
	RowGroupRows  int64
	RowGroupBytes int64
	// NoDictionary writes every column plain; by default columns are
	// dictionary-encoded until their dictionary outgrows a page.
	NoDictionary bool
}

// ParseCompression checks a compression name.
func ParseCompression(s string) (compress.Compression, error) {
	switch strings.ToLower(s) {
	case "", "zstd":
		return compress.Codecs.Zstd, nil
	case "snappy":
		return compress.Codecs.Snappy, nil
	case "none", "uncompressed":
		return compress.Codecs.Uncompressed, nil
	}
	return 0, rowttl.Errorf(rowttl.ErrInvalidArgument, "compression %q: only zstd, snappy and none are supported", s)
}

// ParquetWriter streams record batches into a Parquet file.
type ParquetWriter struct {
	fw       *pqarrow.FileWriter
	maxBytes int64
	rows     int64
}

// NewParquetWriter returns a writer of batches of schema sc to w.
func NewParquetWriter(w io.Writer, sc *arrow.Schema, o ParquetOptions, mem memory.Allocator) (*ParquetWriter, error) {
	codec, err := ParseCompression(o.Compression)
	if err != nil {
		return nil, err
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if o.RowGroupRows <= 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	if o.RowGroupBytes <= 0 {
		o.RowGroupBytes = DefaultRowGroupBytes
	}
	props := parquet.NewWriterProperties(
		parquet.WithAllocator(mem),
		parquet.WithCompression(codec),
		parquet.WithCompressionLevel(zstdLevel),
		parquet.WithMaxRowGroupLength(o.RowGroupRows),
		parquet.WithDictionaryDefault(!o.NoDictionary),
		parquet.WithStats(true),
		parquet.WithDictionaryPageSizeLimit(dictionaryPageLimit),
		parquet.WithCreatedBy("rowttl"),
	)
	fw, err := pqarrow.NewFileWriter(sc, w, props, pqarrow.NewArrowWriterProperties(
		pqarrow.WithAllocator(mem), pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "parquet: %w", err)
	}
	if types, ok := fileTypes(sc); ok {
		if err := fw.AppendKeyValueMetadata(typesKey, types); err != nil {
			return nil, fmt.Errorf("parquet: %w", err)
		}
	}
	return &ParquetWriter{fw: fw, maxBytes: o.RowGroupBytes}, nil
}

// fileTypes lists the rowttl types of a schema's fields, when each has one.
func fileTypes(sc *arrow.Schema) (string, bool) {
	var ts []string
	for _, f := range sc.Fields() {
		t, ok := f.Metadata.GetValue(TypeKey)
		if !ok || strings.Contains(t, ";") {
			return "", false
		}
		ts = append(ts, t)
	}
	return strings.Join(ts, ";"), true
}

// Write appends the rows of rec, which must have the writer's schema.
func (pw *ParquetWriter) Write(rec arrow.RecordBatch) error {
	if rec.NumRows() == 0 {
		return nil
	}
	if err := pw.fw.WriteBuffered(rec); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	pw.rows += rec.NumRows()
	// Encoded pages count; the page each column is filling (at most the
	// data page size) does not, which bounds the error.
	if pw.fw.RowGroupTotalCompressedBytes() >= pw.maxBytes {
		if err := pw.fw.NewBufferedRowGroupChecked(); err != nil {
			return fmt.Errorf("parquet: %w", err)
		}
	}
	return nil
}

// Rows returns the rows written so far.
func (pw *ParquetWriter) Rows() int64 { return pw.rows }

// Close writes the last row group and the footer. It does not close the
// underlying writer.
func (pw *ParquetWriter) Close() error {
	if err := pw.fw.Close(); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	return nil
}

// parquetMagic starts and ends every Parquet file (the encrypted-footer
// variant "PARE" is not read).
const parquetMagic = "PAR1"

// ReaderAtSeeker is what reading a Parquet file needs: random access.
type ReaderAtSeeker = parquet.ReaderAtSeeker

// ParquetReader reads a Parquet file as record batches of its columns.
type ParquetReader struct {
	name string
	pf   *file.Reader
	fr   *pqarrow.FileReader
	sc   *arrow.Schema
}

// DefaultBatchRows is the rows of each batch a ParquetReader returns.
const DefaultBatchRows = 64 << 10

// OpenParquet checks the frame of a Parquet file (the magic at both ends,
// the footer and the schema) and returns its reader; name is the file's
// name in messages. Every error about the file's contents wraps
// rowttl.ErrCorruption (a file that is not Parquet, or cut short) or
// rowttl.ErrNotSupported (encryption, types rowttl cannot hold are only
// refused when read).
func OpenParquet(name string, r ReaderAtSeeker, size int64, mem memory.Allocator) (pr *ParquetReader, err error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	defer recoverCorrupt(name, &err)
	var head, tail [4]byte
	if size < 12 {
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "%s: not a Parquet file: %d bytes is shorter than a Parquet frame", name, size)
	}
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if _, err := r.ReadAt(tail[:], size-4); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if string(head[:]) != parquetMagic {
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "%s: not a Parquet file: it starts with %q, not %q", name, head[:], parquetMagic)
	}
	if string(tail[:]) != parquetMagic {
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "%s: not a whole Parquet file: it ends with %q, not %q (truncated?)", name, tail[:], parquetMagic)
	}
	props := parquet.NewReaderProperties(mem)
	// Pages stream through a buffer instead of whole column chunks being
	// read at once, so memory stays near a batch whatever the row groups.
	props.BufferedStreamEnabled = true
	props.BufferSize = 1 << 20
	pf, err := file.NewParquetReader(r, file.WithReadProps(props))
	if err != nil {
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "%s: bad Parquet footer: %w", name, err)
	}
	types := trustMetadata(pf)
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: DefaultBatchRows}, mem)
	if err != nil {
		pf.Close()
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "%s: bad Parquet schema: %w", name, err)
	}
	sc, err := fr.Schema()
	if err != nil {
		pf.Close()
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "%s: bad Parquet schema: %w", name, err)
	}
	if len(types) == sc.NumFields() {
		fs := sc.Fields()
		for i := range fs {
			fs[i].Metadata = arrow.NewMetadata([]string{TypeKey}, []string{types[i]})
		}
		sc = arrow.NewSchema(fs, nil)
	}
	return &ParquetReader{name: name, pf: pf, fr: fr, sc: sc}, nil
}

// Footer keys: the Arrow schema pqarrow stores, and the rowttl types this
// package stores beside it (one per top-level column, ';'-separated).
const (
	arrowSchemaKey = "ARROW:schema"
	typesKey       = "rowttl.types"
)

// trustMetadata removes the stored Arrow schema from a file's footer
// before pqarrow sees it, and returns the rowttl types of the columns
// when the file names them. Arrow's flatbuffer decoder allocates whatever
// lengths a damaged schema claims (a few bytes can ask for gigabytes,
// which no recover catches), and everything rowttl needs from it is in
// the Parquet schema and the rowttl types.
func trustMetadata(pf *file.Reader) []string {
	md := pf.MetaData()
	kv := md.KeyValueMetadata()
	var types []string
	kept := kv[:0:0]
	for _, e := range kv {
		switch e.Key {
		case arrowSchemaKey:
			continue
		case typesKey:
			if e.Value != nil {
				types = strings.Split(*e.Value, ";")
			}
		}
		kept = append(kept, e)
	}
	md.FileMetaData.KeyValueMetadata = kept
	return types
}

// recoverCorrupt turns a panic of the Parquet decoder on malformed input
// into a corruption error: a file's bytes must never crash the process.
func recoverCorrupt(name string, err *error) {
	if p := recover(); p != nil {
		*err = rowttl.Errorf(rowttl.ErrCorruption, "%s: malformed Parquet data: %v", name, p)
	}
}

// Schema returns the file's columns as Arrow fields.
func (pr *ParquetReader) Schema() *arrow.Schema { return pr.sc }

// NumRows returns the rows the footer announces.
func (pr *ParquetReader) NumRows() int64 { return pr.pf.NumRows() }

// NumRowGroups returns the file's row groups.
func (pr *ParquetReader) NumRowGroups() int { return pr.pf.NumRowGroups() }

// Close releases the reader. It does not close the underlying file.
func (pr *ParquetReader) Close() error { return pr.pf.Close() }

// Records returns a stream of batches of the given columns (indices into
// Schema; nil for all) of every row group.
func (pr *ParquetReader) Records(ctx context.Context, cols []int) (rr array.RecordReader, err error) {
	defer recoverCorrupt(pr.name, &err)
	var leaves []int
	if cols != nil {
		// pqarrow selects leaf columns; rowttl files are flat, and a nested
		// column has no rowttl type, so a field is a leaf here.
		for _, c := range cols {
			l, err := pr.leaves(c)
			if err != nil {
				return nil, err
			}
			leaves = append(leaves, l...)
		}
		if len(leaves) == 0 {
			return &emptyReader{sc: arrow.NewSchema(nil, nil)}, nil
		}
	}
	if pr.pf.NumRowGroups() == 0 {
		fs := pr.sc.Fields()
		if cols != nil {
			fs = nil
			for _, c := range cols {
				fs = append(fs, pr.sc.Field(c))
			}
		}
		return &emptyReader{sc: arrow.NewSchema(fs, nil)}, nil
	}
	rdr, err := pr.fr.GetRecordReader(ctx, leaves, nil)
	if err != nil {
		return nil, rowttl.Errorf(rowttl.ErrCorruption, "%s: %w", pr.name, err)
	}
	return &safeReader{name: pr.name, RecordReader: rdr}, nil
}

// leaves returns the leaf column indices of top-level field i.
func (pr *ParquetReader) leaves(i int) ([]int, error) {
	if i < 0 || i >= len(pr.fr.Manifest.Fields) {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "%s: no column %d", pr.name, i)
	}
	var out []int
	var walk func(f *pqarrow.SchemaField)
	walk = func(f *pqarrow.SchemaField) {
		if f.IsLeaf() {
			out = append(out, f.ColIndex)
			return
		}
		for j := range f.Children {
			walk(&f.Children[j])
		}
	}
	walk(&pr.fr.Manifest.Fields[i])
	return out, nil
}

// safeReader marks the decoder's errors as corruption and turns its panics
// on malformed pages into errors.
type safeReader struct {
	name string
	pqarrow.RecordReader
	err error
}

func (s *safeReader) Next() (ok bool) {
	if s.err != nil {
		return false
	}
	defer func() {
		if p := recover(); p != nil {
			s.err = rowttl.Errorf(rowttl.ErrCorruption, "%s: malformed Parquet data: %v", s.name, p)
			ok = false
		}
	}()
	return s.RecordReader.Next()
}

func (s *safeReader) Err() error {
	if s.err != nil {
		return s.err
	}
	if err := s.RecordReader.Err(); err != nil && !errors.Is(err, io.EOF) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return rowttl.Errorf(rowttl.ErrCorruption, "%s: reading Parquet data: %w", s.name, err)
	}
	return nil
}

// emptyReader is the stream of a file without row groups.
type emptyReader struct {
	sc *arrow.Schema
}

func (e *emptyReader) Retain()                        {}
func (e *emptyReader) Release()                       {}
func (e *emptyReader) Schema() *arrow.Schema          { return e.sc }
func (e *emptyReader) Next() bool                     { return false }
func (e *emptyReader) RecordBatch() arrow.RecordBatch { return nil }
func (e *emptyReader) Record() arrow.RecordBatch      { return nil }
func (e *emptyReader) Err() error                     { return nil }
