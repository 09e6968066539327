package segment

import (
	"encoding/binary"
	"errors"
)

var (
	errTruncated = errors.New("truncated")
	errVarint    = errors.New("bad varint")
	errCount     = errors.New("count larger than the bytes left")
)

// decoder reads the footer. Its error is sticky: after the first failure
// every read returns a zero value and d.err says what went wrong, so callers
// check once at the end of a group of reads.
type decoder struct {
	src []byte
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.src = nil
}

func (d *decoder) byte() byte {
	if len(d.src) < 1 {
		d.fail(errTruncated)
		return 0
	}
	b := d.src[0]
	d.src = d.src[1:]
	return b
}

func (d *decoder) uint64() uint64 {
	if len(d.src) < 8 {
		d.fail(errTruncated)
		return 0
	}
	v := binary.LittleEndian.Uint64(d.src)
	d.src = d.src[8:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.src)
	if n <= 0 {
		d.fail(errVarint)
		return 0
	}
	d.src = d.src[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.src)
	if n <= 0 {
		d.fail(errVarint)
		return 0
	}
	d.src = d.src[n:]
	return v
}

// bytes returns the next n bytes, without copying.
func (d *decoder) bytes(n int) []byte {
	if n < 0 || n > len(d.src) {
		d.fail(errTruncated)
		return nil
	}
	b := d.src[:n:n]
	d.src = d.src[n:]
	return b
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.src)) {
		d.fail(errTruncated)
		return ""
	}
	return string(d.bytes(int(n)))
}

// count reads a uvarint count of items that take at least minSize bytes each,
// refusing counts the remaining bytes cannot hold (so a corrupt count never
// sizes an allocation).
func (d *decoder) count(minSize int) int {
	n := d.uvarint()
	if d.err != nil {
		return 0
	}
	if n > uint64(len(d.src)/minSize) {
		d.fail(errCount)
		return 0
	}
	return int(n)
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}
