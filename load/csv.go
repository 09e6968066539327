package load

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Format is the shape of a CSV input, as Stream Load describes it.
type Format struct {
	// ColumnSeparator separates fields; one or more bytes. Default "\t".
	ColumnSeparator []byte
	// LineDelimiter ends records; one or more bytes. Default "\n". With
	// the default, a '\r' ending a record is dropped (CRLF files).
	LineDelimiter []byte
	// Enclose, when not 0, quotes fields: a field that starts with it runs
	// to the next lone Enclose byte, separators and line delimiters
	// included; a doubled Enclose inside stands for one.
	Enclose byte
	// Escape, when not 0, makes the byte after it literal inside an
	// enclosed field.
	Escape byte
}

// DefaultMaxRecordBytes bounds one record: a file without line delimiters
// must not make a load buffer all of it.
const DefaultMaxRecordBytes = 64 << 20

// readChunk is how much the reader asks its source for at a time.
const readChunk = 1 << 20

// ErrRecordTooLong marks a record longer than the reader's bound.
var ErrRecordTooLong = errors.New("record too long")

// Reader splits a CSV stream into records and fields. Fields alias the
// reader's buffers and are valid until the next call to Next.
type Reader struct {
	src    io.Reader
	f      Format
	crlf   bool // drop a '\r' before the delimiter
	maxRec int

	buf       []byte // data[start:end] is unread
	start     int
	end       int
	eof       bool
	srcErr    error
	bytesRead int64

	fields  [][]byte
	scratch []byte
	record  int64 // records returned, empty ones included
}

// NewReader returns a reader of r in format f (zero fields take their
// defaults).
func NewReader(r io.Reader, f Format) *Reader {
	if len(f.ColumnSeparator) == 0 {
		f.ColumnSeparator = []byte{'\t'}
	}
	if len(f.LineDelimiter) == 0 {
		f.LineDelimiter = []byte{'\n'}
	}
	return &Reader{
		src: r, f: f, crlf: len(f.LineDelimiter) == 1 && f.LineDelimiter[0] == '\n',
		maxRec: DefaultMaxRecordBytes,
	}
}

// BytesRead returns the bytes consumed from the source so far.
func (r *Reader) BytesRead() int64 { return r.bytesRead }

// Record returns the number of the last record Next returned, from 1,
// counting every line delimiter (empty records included).
func (r *Reader) Record() int64 { return r.record }

// fill reads more input after moving the unread bytes to the front,
// growing the buffer when it is full.
func (r *Reader) fill() error {
	if r.eof {
		return nil
	}
	if r.buf == nil {
		r.buf = make([]byte, readChunk)
	}
	if r.start > 0 {
		n := copy(r.buf, r.buf[r.start:r.end])
		r.start, r.end = 0, n
	}
	if r.end == len(r.buf) {
		if len(r.buf) >= r.maxRec+len(r.f.LineDelimiter) {
			return fmt.Errorf("record %d is longer than %d bytes: %w", r.record+1, r.maxRec, ErrRecordTooLong)
		}
		nb := make([]byte, min(2*len(r.buf), r.maxRec+len(r.f.LineDelimiter)+readChunk))
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	for {
		n, err := r.src.Read(r.buf[r.end:])
		r.end += n
		r.bytesRead += int64(n)
		if err == io.EOF {
			r.eof = true
			return nil
		}
		if err != nil {
			r.srcErr = err
			return err
		}
		if n > 0 {
			return nil
		}
	}
}

// Next returns the fields of the next record, nil fields for an empty
// record, and io.EOF after the last. A malformed record (an enclosed
// field left open at the end of the input) returns its fields as read and
// an error wrapping ErrMalformed; reading may go on.
func (r *Reader) Next() ([][]byte, error) {
	for {
		if r.start == r.end && r.eof {
			return nil, io.EOF
		}
		n, ok := r.recordEnd(r.buf[r.start:r.end])
		if !ok {
			if r.eof {
				// The last record has no delimiter.
				n = r.end - r.start
			} else {
				if err := r.fill(); err != nil {
					return nil, err
				}
				continue
			}
		}
		rec := r.buf[r.start : r.start+n]
		r.start += n
		if ok {
			r.start += len(r.f.LineDelimiter)
		}
		r.record++
		if r.crlf && len(rec) > 0 && rec[len(rec)-1] == '\r' {
			rec = rec[:len(rec)-1]
		}
		if len(rec) == 0 {
			return nil, nil
		}
		return r.split(rec)
	}
}

// ErrMalformed marks a record whose enclosed field never closes.
var ErrMalformed = errors.New("malformed record")

// recordEnd finds the end of the first record of data: its length and
// whether a line delimiter follows it.
func (r *Reader) recordEnd(data []byte) (int, bool) {
	d := r.f.LineDelimiter
	if r.f.Enclose == 0 {
		i := bytes.Index(data, d)
		return i, i >= 0
	}
	// Quote-aware: a delimiter inside an enclosed field does not count.
	sep := r.f.ColumnSeparator
	atFieldStart := true
	for i := 0; i < len(data); {
		if atFieldStart && data[i] == r.f.Enclose {
			j, closed := r.closeQuote(data, i+1)
			if !closed {
				return 0, false
			}
			i = j
			atFieldStart = false
			continue
		}
		if bytes.HasPrefix(data[i:], d) {
			return i, true
		}
		if bytes.HasPrefix(data[i:], sep) {
			i += len(sep)
			atFieldStart = true
			continue
		}
		atFieldStart = false
		i++
	}
	return 0, false
}

// closeQuote returns the position just past the Enclose byte that closes a
// field whose text starts at i, and whether there is one.
func (r *Reader) closeQuote(data []byte, i int) (int, bool) {
	q, esc := r.f.Enclose, r.f.Escape
	for i < len(data) {
		c := data[i]
		switch {
		case esc != 0 && c == esc:
			i += 2
		case c == q:
			if i+1 < len(data) && data[i+1] == q {
				i += 2
				continue
			}
			if i+1 == len(data) {
				// A doubled quote may be split by the buffer's end.
				return 0, false
			}
			return i + 1, true
		default:
			i++
		}
	}
	return 0, false
}

// split cuts a record into fields.
func (r *Reader) split(rec []byte) ([][]byte, error) {
	r.fields = r.fields[:0]
	sep := r.f.ColumnSeparator
	if r.f.Enclose == 0 {
		if len(sep) == 1 {
			c := sep[0]
			for {
				i := bytes.IndexByte(rec, c)
				if i < 0 {
					break
				}
				r.fields = append(r.fields, rec[:i])
				rec = rec[i+1:]
			}
		} else {
			for {
				i := bytes.Index(rec, sep)
				if i < 0 {
					break
				}
				r.fields = append(r.fields, rec[:i])
				rec = rec[i+len(sep):]
			}
		}
		r.fields = append(r.fields, rec)
		return r.fields, nil
	}
	// Unquoted text never outgrows the record, so fields pointing into
	// scratch stay valid while it fills.
	if cap(r.scratch) < len(rec) {
		r.scratch = make([]byte, 0, len(rec))
	}
	r.scratch = r.scratch[:0]
	var malformed error
	for {
		var field []byte
		if len(rec) > 0 && rec[0] == r.f.Enclose {
			start := len(r.scratch)
			i, closed := r.unquote(rec)
			field = r.scratch[start:]
			rec = rec[i:]
			if !closed {
				malformed = fmt.Errorf("record %d: enclosed field not closed: %w", r.record, ErrMalformed)
			}
			// Text between the closing quote and the separator is kept.
			if j := bytes.Index(rec, sep); j != 0 {
				if j < 0 {
					j = len(rec)
				}
				r.scratch = append(r.scratch, rec[:j]...)
				field = r.scratch[start:]
				rec = rec[j:]
			}
		} else {
			j := bytes.Index(rec, sep)
			if j < 0 {
				j = len(rec)
			}
			field = rec[:j]
			rec = rec[j:]
		}
		r.fields = append(r.fields, field)
		if len(rec) == 0 {
			break
		}
		rec = rec[len(sep):]
		if len(rec) == 0 {
			r.fields = append(r.fields, rec)
			break
		}
	}
	return r.fields, malformed
}

// unquote appends the text of the enclosed field at the start of rec to
// scratch and returns the bytes consumed (the closing quote included).
func (r *Reader) unquote(rec []byte) (int, bool) {
	q, esc := r.f.Enclose, r.f.Escape
	i := 1
	for i < len(rec) {
		c := rec[i]
		switch {
		case esc != 0 && c == esc && i+1 < len(rec):
			r.scratch = append(r.scratch, rec[i+1])
			i += 2
		case c == q:
			if i+1 < len(rec) && rec[i+1] == q {
				r.scratch = append(r.scratch, q)
				i += 2
				continue
			}
			return i + 1, true
		default:
			r.scratch = append(r.scratch, c)
			i++
		}
	}
	return i, false
}
