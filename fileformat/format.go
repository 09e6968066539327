package fileformat

import (
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
)

// Format is a file format this package reads and writes.
type Format string

// The formats.
const (
	Parquet Format = "parquet"
	CSV     Format = "csv"
	// CSVWithNames is CSV with a first record of column names.
	CSVWithNames Format = "csv_with_names"
)

// ParseFormat reads a format name, case-insensitively.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case Parquet, CSV, CSVWithNames:
		return f, nil
	}
	return "", rowttl.Errorf(rowttl.ErrInvalidArgument, "format %q: only parquet, csv and csv_with_names are supported", s)
}

// Writer streams record batches of one schema into a file.
type Writer interface {
	// Write appends the rows of a batch of the writer's schema.
	Write(rec arrow.RecordBatch) error
	// Rows returns the rows written so far.
	Rows() int64
	// Close finishes the file (a Parquet footer, buffered CSV text); it
	// does not close the underlying io.Writer.
	Close() error
}

// WriterOptions are the options of NewWriter; each format reads its own.
type WriterOptions struct {
	Parquet ParquetOptions
	CSV     CSVOptions
}

// NewWriter returns a writer of format f into w.
func NewWriter(f Format, w io.Writer, sc *arrow.Schema, o WriterOptions, mem memory.Allocator) (Writer, error) {
	switch f {
	case Parquet:
		return NewParquetWriter(w, sc, o.Parquet, mem)
	case CSV, CSVWithNames:
		co := o.CSV
		co.Header = co.Header || f == CSVWithNames
		return NewCSVWriter(w, sc, co)
	}
	return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "format %q: only parquet, csv and csv_with_names are supported", f)
}

// Close flushes the buffered text.
func (cw *CSVWriter) Close() error { return cw.Flush() }
