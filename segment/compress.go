package segment

import (
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

// appendLZ4 appends the LZ4 block of body to dst[:0] and returns it, or nil
// when LZ4 finds nothing to gain.
func appendLZ4(dst, body []byte) []byte {
	dst = grow(dst, lz4.CompressBlockBound(len(body)))
	n, err := lz4.CompressBlock(body, dst, nil)
	if err != nil || n == 0 {
		return dst[:0]
	}
	return dst[:n]
}

var errDecompressedLen = errors.New("decompressed length differs from the footer")

// decompress decodes a block compressed with comp (zstd or LZ4) into dst,
// which must have capacity for exactly bodyLen bytes. Neither decoder
// writes past that capacity, so a corrupt block cannot overflow it.
func decompress(dst, block []byte, comp compression, bodyLen int) ([]byte, error) {
	if comp == compLZ4 {
		n, err := lz4.UncompressBlock(block, dst[:bodyLen:bodyLen])
		if err != nil {
			return nil, err
		}
		if n != bodyLen {
			return nil, errDecompressedLen
		}
		return dst[:n], nil
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
