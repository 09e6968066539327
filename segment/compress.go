package segment

import (
	"errors"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// zstd on top of chunk bodies. One decoder and at most one encoder per
// compression level serve the whole process: EncodeAll and DecodeAll are safe
// for concurrent use.

// minCompressLen is the smallest body worth trying to compress.
const minCompressLen = 64

// DefaultZstdLevel is the zstd level used when WriterOptions.ZstdLevel is 0.
// Level 1 (klauspost's fastest) rather than 3: on the events benchmark it
// cut load CPU by 40% and scan CPU by 20-35% for files 2% smaller, because
// the light encodings underneath already did most of the work.
const DefaultZstdLevel = 1

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

var errDecompressedLen = errors.New("decompressed length differs from the footer")

// decompress decodes a zstd block into dst, which must have capacity for
// exactly bodyLen bytes.
func decompress(dst, block []byte, bodyLen int) ([]byte, error) {
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
