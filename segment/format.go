package segment

import (
	"encoding/binary"
	"hash/crc32"
	"strconv"
)

// The segment file format.
//
// All fixed-size integers are little-endian. "uvarint" and "varint" are the
// encoding/binary varints (varint is zig-zag signed).
//
//	segment := | header | chunk | chunk | ... | footer | trailer |
//
//	header  := | magic "rowttlsg" (8B) | format version (4B) |        12 bytes
//
//	chunk   := | block (len-5 B) | compression (1B) | CRC32C (4B) |
//	           the CRC covers block and compression byte
//	block   := body                      when compression = none
//	         | zstd frame of body        when compression = zstd
//	         | lz4 parts of body         when compression = lz4 (format 5)
//	lz4 parts := | parts (uvarint) | part | part | ... |
//	part    := | length (uvarint) | LZ4 block |
//	           part i holds body bytes [i*64Ki, min((i+1)*64Ki, body length)),
//	           so there are exactly ⌈body length/64Ki⌉ parts; a read that
//	           needs a few values decompresses the parts holding them
//	body    := | validity bitmap (⌈rows/8⌉B) | values (see encoding_*.go) |
//	           the bitmap is present only when 0 < nulls < rows; it is
//	           LSB-first like Arrow's, 1 = valid, unused high bits zero
//
//	footer  := | page rows (uvarint) | rows (uvarint) | schema |
//	           | pages (uvarint) | rows of each page (uvarint each) |
//	           | chunk meta for each page p, each column c (page-major) |
//	           | zone map of each column | [tag] |
//	           page rows is informational (Dump): the writer's PageRows
//	           option, or the largest page it copied if larger; pages may
//	           have any size from 1 to MaxPageRows rows
//	chunk meta := | length (uvarint) | encoding (1B) | compression (1B) |
//	           | body length (uvarint) | zone map |
//	zone map   := | nulls (uvarint) | bounds (1B, 0 or 1) | [min | max] |
//	           | [sum] |
//	           min/max: varint for integer-like columns, float64 bits (8B)
//	           for floats, uvarint length + bytes (≤ 64) for strings
//	sum     := | has sum (1B, 0 or 1) | [hi (varint) | lo (uvarint) |
//	           | [scale (1B)]] |
//	           format 3, page zone maps of integer-like and float columns
//	           only: the exact sum of the non-null values as a 128-bit
//	           integer; for floats only on scaled pages, with the page's
//	           decimal exponent
//	tag     := | length (uvarint, ≤ MaxTagBytes) | bytes |   format 4: what
//	           the file's owner recorded about it (WriterOptions.Tag),
//	           opaque here
//	schema  := | metadata | fields (uvarint) | field ... |
//	field   := | name | type id (1B) | type params | nullable (1B) | metadata |
//	metadata := | pairs (uvarint) | key | value | ... |   strings are uvarint length + bytes
//
//	trailer := | footer length (4B) | footer CRC32C (4B) | format version (4B) |
//	           | magic "rowttlsg" (8B) |                                20 bytes
//
// Chunks are written page-major (page 0 column 0, page 0 column 1, ...,
// page 1 column 0, ...) and tile the file from the end of the header to the
// start of the footer without gaps, so the offset of a chunk is implied by the
// lengths before it and no byte of a file is unchecked: Open verifies the
// header, trailer and footer checksum, ReadPage verifies the chunk checksum.

// formatVersion is the version written in the header and trailer.
//
// History (one line per bump):
//
//	1: initial format.
//	2: the scaled encoding of doubles (decimals as bit-packed integers).
//	3: page zone maps of integer and float columns end with a sum field.
//	4: the footer ends with the owner's tag.
//	5: chunks may be compressed as LZ4 parts of 64 KiB (compression 2).
const formatVersion = 5

// minFormatVersion is the oldest version this build reads.
const minFormatVersion = 1

const (
	magic        = "rowttlsg"
	headerLen    = 8 + 4         // magic, version
	trailerLen   = 4 + 4 + 4 + 8 // footer length, footer CRC, version, magic
	chunkTrailer = 1 + 4         // compression byte, CRC
)

// Limits that keep a corrupt or hostile file from causing huge allocations.
// The writer refuses to produce anything beyond them.
const (
	// MaxPageRows is the largest WriterOptions.PageRows.
	MaxPageRows = 1 << 20
	// maxPageBytes bounds the decoded size of one chunk body and the value
	// bytes of one string page.
	maxPageBytes = 1 << 28
	// maxColumns bounds the number of columns in a schema.
	maxColumns = 1 << 16
	// MaxTagBytes is the longest WriterOptions.Tag.
	MaxTagBytes = 1 << 10
)

// encoding identifies how the values of a chunk body are laid out. The
// numbers are stored in files: append only, never renumber.
type encoding uint8

const (
	// encPlain: fixed-width values back to back (width bytes each, LE), or
	// for strings lengths (FOR) followed by the bytes.
	encPlain encoding = 0
	// encConstant: one value, repeated for every row.
	encConstant encoding = 1
	// encFOR: frame of reference + bit packing.
	encFOR encoding = 2
	// encDelta: delta + frame of reference + bit packing.
	encDelta encoding = 3
	// encDict: a dictionary of distinct strings and bit-packed indexes.
	encDict encoding = 4
	// encBitmap: booleans as a bitmap.
	encBitmap encoding = 5
	// encScaled: doubles as integers times a power of ten (format 2).
	encScaled encoding = 6
)

var encodingNames = [...]string{
	encPlain:    "plain",
	encConstant: "constant",
	encFOR:      "for",
	encDelta:    "delta",
	encDict:     "dict",
	encBitmap:   "bitmap",
	encScaled:   "scaled",
}

func (e encoding) String() string {
	if int(e) < len(encodingNames) {
		return encodingNames[e]
	}
	return "encoding(" + strconv.Itoa(int(e)) + ")"
}

// compression identifies how a chunk block holds its body. Stored in files.
type compression uint8

const (
	compNone compression = 0
	compZstd compression = 1
	compLZ4  compression = 2 // format 5
)

// maxCompression returns the largest compression a file of version v may
// use: an older file holding a newer one is corrupt.
func maxCompression(v uint32) compression {
	if v >= 5 {
		return compLZ4
	}
	return compZstd
}

func (c compression) String() string {
	switch c {
	case compNone:
		return "none"
	case compZstd:
		return "zstd"
	case compLZ4:
		return "lz4"
	}
	return "compression(" + strconv.Itoa(int(c)) + ")"
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

func appendHeader(dst []byte) []byte {
	dst = append(dst, magic...)
	return binary.LittleEndian.AppendUint32(dst, formatVersion)
}

// trailer locates and checks the footer.
type trailer struct {
	footerLen uint32
	footerCRC uint32
	version   uint32
}

func (t trailer) Marshal(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, t.footerLen)
	dst = binary.LittleEndian.AppendUint32(dst, t.footerCRC)
	dst = binary.LittleEndian.AppendUint32(dst, t.version)
	return append(dst, magic...)
}
