package segment

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/rowttl/rowttl"
)

// Compression on top of chunk bodies: zstd, or LZ4 blocks (format 5). One
// zstd decoder and at most one zstd encoder per level serve the whole
// process: EncodeAll and DecodeAll are safe for concurrent use. LZ4 needs no
// shared state: its block functions pool their hash tables.

// minCompressLen is the smallest body worth trying to compress.
const minCompressLen = 64

// DefaultZstdLevel is the zstd level used when WriterOptions.ZstdLevel is 0.
// Level 1 (klauspost's fastest) rather than 3: on the events benchmark it
// cut load CPU by 40% and scan CPU by 20-35% for files 2% smaller, because
// the light encodings underneath already did most of the work.
const DefaultZstdLevel = 1

// Codec chooses how a Writer compresses its chunks (WriterOptions.Codec).
// Whatever it says, a chunk is kept compressed only when that makes it
// smaller than 7/8 of its body, and the columns of WriterOptions.HotColumns
// are never compressed.
type Codec uint8

const (
	// CodecDefault compresses string and binary chunks with LZ4 and the
	// others with zstd. A string page is decoded whole by every read of
	// it, a point lookup and a LIKE alike, and its values (ids in text,
	// messages) are too distinct to be dictionary-encoded: LZ4 decodes
	// such a page about six times faster than zstd for a page about 1.7
	// times larger (on the events benchmark's messages: 0.60 of the
	// plain size against zstd's 0.35). Numeric chunks are small after
	// their light encodings, so zstd's ratio costs little there.
	CodecDefault Codec = iota
	// CodecZstd compresses every chunk with zstd.
	CodecZstd
	// CodecLZ4 compresses every chunk with LZ4.
	CodecLZ4
	// CodecNone compresses nothing.
	CodecNone
)

var codecNames = [...]string{CodecDefault: "default", CodecZstd: "zstd", CodecLZ4: "lz4", CodecNone: "none"}

func (c Codec) String() string {
	if int(c) < len(codecNames) {
		return codecNames[c]
	}
	return "codec(" + strconv.Itoa(int(c)) + ")"
}

// ParseCodec reads a codec by the name Doris gives it in the "compression"
// table property, in any case: "default" (or "default_compression"), "zstd",
// "lz4" (or "lz4f", LZ4 frames in Doris, blocks here as every chunk has its
// own checksum and length) and "none" (or "no_compression"). Doris's other
// codecs (snappy, zlib, lz4hc) are not supported.
func ParseCodec(name string) (Codec, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "default", "default_compression":
		return CodecDefault, nil
	case "zstd":
		return CodecZstd, nil
	case "lz4", "lz4f":
		return CodecLZ4, nil
	case "none", "no_compression":
		return CodecNone, nil
	case "snappy", "zlib", "lz4hc":
		return 0, rowttl.Errorf(rowttl.ErrNotSupported, "compression %q is not supported: only default, zstd, lz4 and none are", name)
	}
	return 0, rowttl.Errorf(rowttl.ErrInvalidArgument, "unknown compression %q: default, zstd, lz4 or none", name)
}

var (
	encoders   [zstd.SpeedBestCompression + 1]*zstd.Encoder
	encodersMu sync.Mutex

	decoderOnce sync.Once
	decoder_    *zstd.Decoder
	decoderErr  error
)

// zstdEncoder returns the shared encoder for a zstd level (1..22, mapped to
// the library's four speeds).
func zstdEncoder(level int) (*zstd.Encoder, error) {
	l := zstd.EncoderLevelFromZstd(level)
	encodersMu.Lock()
	defer encodersMu.Unlock()
	if e := encoders[l]; e != nil {
		return e, nil
	}
	e, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(l),
		zstd.WithEncoderCRC(false), // every chunk has its own CRC32C
	)
	if err != nil {
		return nil, err
	}
	encoders[l] = e
	return e, nil
}

// zstdDecoder returns the shared decoder. Its output is bounded by the
// capacity of the destination (the body length the footer records) and by
// maxPageBytes, so a corrupt frame cannot make it allocate more.
func zstdDecoder() (*zstd.Decoder, error) {
	decoderOnce.Do(func() {
		decoder_, decoderErr = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(maxPageBytes),
			zstd.WithDecodeAllCapLimit(true),
		)
	})
	return decoder_, decoderErr
}

// lz4Part is the body bytes that one LZ4 block of a chunk holds (the last
// holds the rest): a point read decompresses only the blocks that hold what
// it returns (lz4View), 64 KiB instead of a page's megabyte. LZ4 never
// looks back more than 64 KiB, so cutting there costs almost no ratio.
const lz4Part = 64 << 10

// appendLZ4 writes body to dst[:0] as LZ4 parts (format.go) and returns
// it; tmp is scratch kept between calls. It returns an empty slice when
// LZ4 fails, which it does not on a destination of CompressBlockBound.
func appendLZ4(dst, body []byte, tmp *[]byte) []byte {
	k := (len(body) + lz4Part - 1) / lz4Part
	*tmp = grow(*tmp, lz4.CompressBlockBound(min(len(body), lz4Part)))
	dst = binary.AppendUvarint(dst[:0], uint64(k))
	for i := range k {
		part := body[i*lz4Part : min(len(body), (i+1)*lz4Part)]
		n, err := lz4.CompressBlock(part, *tmp, nil)
		if err != nil || n == 0 {
			return dst[:0]
		}
		dst = binary.AppendUvarint(dst, uint64(n))
		dst = append(dst, (*tmp)[:n]...)
	}
	return dst
}

var errLZ4Parts = errors.New("bad LZ4 parts")

// lz4View decodes the LZ4 parts of a chunk body on demand: need decodes the
// parts that cover a range of the body, each once. A whole decode is need
// of the whole body.
type lz4View struct {
	body  []byte   // bodyLen bytes, decoded where done says
	parts [][]byte // the LZ4 block of each part
	done  []bool
	// stage, when not nil, receives a copy of each part before it is
	// decoded: parts that lie in a mapped file then reach the decoder
	// from the cache, streamed in by the copy, rather than a byte at a
	// time from memory.
	stage *[]byte
}

// init parses block, the LZ4 parts of a body of bodyLen bytes to be decoded
// into dst (capacity at least bodyLen). parts and done are reused.
func (v *lz4View) init(dst, block []byte, bodyLen int) error {
	d := decoder{src: block}
	k := d.uvarint()
	if d.err != nil {
		return d.err
	}
	if k != uint64((bodyLen+lz4Part-1)/lz4Part) {
		return errLZ4Parts
	}
	v.body = dst[:bodyLen:bodyLen]
	v.parts = v.parts[:0]
	for range k {
		n := d.uvarint()
		if d.err != nil {
			return d.err
		}
		if n > uint64(len(d.src)) {
			return errLZ4Parts
		}
		v.parts = append(v.parts, d.src[:n])
		d.src = d.src[n:]
	}
	if len(d.src) != 0 {
		return errLZ4Parts
	}
	v.done = append(v.done[:0], make([]bool, k)...)
	return nil
}

// need decodes the parts that hold body[off:end].
func (v *lz4View) need(off, end int) error {
	if end > len(v.body) || off > end {
		return errDecompressedLen
	}
	if off == end {
		return nil
	}
	for i := off / lz4Part; i*lz4Part < end; i++ {
		if v.done[i] {
			continue
		}
		lo, hi := i*lz4Part, min(len(v.body), (i+1)*lz4Part)
		src := v.parts[i]
		if v.stage != nil {
			*v.stage = grow(*v.stage, len(src))
			copy(*v.stage, src)
			src = *v.stage
		}
		n, err := lz4.UncompressBlock(src, v.body[lo:hi:hi])
		if err != nil {
			return err
		}
		if n != hi-lo {
			return errDecompressedLen
		}
		v.done[i] = true
	}
	return nil
}

var errDecompressedLen = errors.New("decompressed length differs from the footer")

// decompress decodes a block compressed with comp (zstd or LZ4) into dst,
// which must have capacity for exactly bodyLen bytes. Neither decoder
// writes past that capacity, so a corrupt block cannot overflow it.
func decompress(dst, block []byte, comp compression, bodyLen int) ([]byte, error) {
	return decompressStaged(dst, block, comp, bodyLen, nil)
}

// decompressStaged is decompress of a block that may lie in a mapped file:
// each LZ4 part is copied into *stage before it is decoded (lz4View.stage).
func decompressStaged(dst, block []byte, comp compression, bodyLen int, stage *[]byte) ([]byte, error) {
	if comp == compLZ4 {
		v := lz4View{stage: stage}
		if err := v.init(dst, block, bodyLen); err != nil {
			return nil, err
		}
		if err := v.need(0, bodyLen); err != nil {
			return nil, err
		}
		return v.body, nil
	}
	d, err := zstdDecoder()
	if err != nil {
		return nil, err
	}
	out, err := d.DecodeAll(block, dst[:0:bodyLen])
	if err != nil {
		return nil, err
	}
	if len(out) != bodyLen {
		return nil, errDecompressedLen
	}
	return out, nil
}
