package segment

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// footer is the decoded footer of a segment: everything Open needs to plan
// reads without touching a page.
type footer struct {
	version  uint32 // of the file, from its trailer; zone map sums from 3
	pageRows int    // the writer's PageRows option, or its largest copied page if larger; informational
	rows     int64
	schema   *arrow.Schema
	cols     []colType
	pages    []int // rows of each page
	chunks   []chunkMeta
	columns  []ZoneMap // whole-segment zone map per column
	tag      []byte    // from 4
}

// chunkMeta describes one chunk, the data of one column in one page.
type chunkMeta struct {
	offset  int64 // implied by the lengths of the chunks before it
	length  int64 // on disk, block + compression byte + CRC
	enc     encoding
	comp    compression
	bodyLen int // decoded body length
	zone    ZoneMap
	ord     int // its index in footer.chunks, for Reader.checked
}

func (f *footer) chunk(col, page int) *chunkMeta { return &f.chunks[page*len(f.cols)+col] }

// Marshal appends the footer to dst.
func (f *footer) Marshal(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(f.pageRows))
	dst = binary.AppendUvarint(dst, uint64(f.rows))
	dst = marshalSchema(dst, f.schema)
	dst = binary.AppendUvarint(dst, uint64(len(f.pages)))
	for _, n := range f.pages {
		dst = binary.AppendUvarint(dst, uint64(n))
	}
	for i := range f.chunks {
		c := &f.chunks[i]
		dst = binary.AppendUvarint(dst, uint64(c.length))
		dst = append(dst, byte(c.enc), byte(c.comp))
		dst = binary.AppendUvarint(dst, uint64(c.bodyLen))
		kind := f.cols[i%len(f.cols)].kind
		dst = marshalZone(dst, c.zone, kind, sumField(kind, c.enc))
	}
	for i, z := range f.columns {
		dst = marshalZone(dst, z, f.cols[i].kind, false)
	}
	if f.version >= 4 {
		dst = binary.AppendUvarint(dst, uint64(len(f.tag)))
		dst = append(dst, f.tag...)
	}
	return dst
}

var (
	errFooterRows  = errors.New("page rows do not add up")
	errFooterChunk = errors.New("bad chunk description")
	errFooterNulls = errors.New("column null count differs from its pages")
	errTrailing    = errors.New("trailing bytes")
	errTag         = errors.New("bad tag")
)

// Unmarshal decodes a footer and checks it for consistency. It returns the
// bytes after the footer.
func (f *footer) Unmarshal(src []byte) ([]byte, error) {
	d := &decoder{src: src}
	pageRows := d.uvarint()
	rows := d.uvarint()
	if d.err == nil && (pageRows == 0 || pageRows > MaxPageRows || rows > 1<<62) {
		d.fail(errFooterRows)
	}
	f.pageRows, f.rows = int(pageRows), int64(rows)
	f.schema, f.cols = unmarshalSchema(d)
	npages := d.count(1)
	if d.err != nil {
		return nil, d.err
	}
	f.pages = make([]int, npages)
	var sum int64
	for i := range f.pages {
		n := d.uvarint()
		if n == 0 || n > MaxPageRows {
			d.fail(errFooterRows)
		}
		f.pages[i] = int(n)
		sum += int64(n)
	}
	if d.err == nil && sum != f.rows {
		d.fail(errFooterRows)
	}
	ncols := len(f.cols)
	// Every chunk meta takes at least 5 bytes.
	if d.err == nil && int64(npages)*int64(ncols) > int64(len(d.src)/5) {
		d.fail(errCount)
	}
	if d.err != nil {
		return nil, d.err
	}
	f.chunks = make([]chunkMeta, npages*ncols)
	nulls := make([]int64, ncols)
	for i := range f.chunks {
		c := &f.chunks[i]
		col, page := i%ncols, i/ncols
		ct := f.cols[col]
		length := d.uvarint()
		c.enc = encoding(d.byte())
		c.comp = compression(d.byte())
		bodyLen := d.uvarint()
		if d.err != nil {
			return nil, d.err
		}
		if length < chunkTrailer || length > 1<<62 || bodyLen > maxPageBytes ||
			!ct.encodingAllowed(c.enc) || c.comp > maxCompression(f.version) ||
			(c.comp == compNone && bodyLen != length-chunkTrailer) {
			return nil, errFooterChunk
		}
		c.length, c.bodyLen = int64(length), int(bodyLen)
		c.zone = unmarshalZone(d, ct, int64(f.pages[page]), f.version >= 3 && sumField(ct.kind, c.enc))
		nulls[col] += c.zone.NullCount
	}
	f.columns = make([]ZoneMap, ncols)
	for i := range f.columns {
		f.columns[i] = unmarshalZone(d, f.cols[i], f.rows, false)
		if d.err == nil && f.columns[i].NullCount != nulls[i] {
			d.fail(errFooterNulls)
		}
	}
	if f.version >= 4 {
		n := d.uvarint()
		if d.err == nil && (n > MaxTagBytes || n > uint64(len(d.src))) {
			d.fail(errTag)
		}
		if d.err == nil {
			f.tag = append([]byte(nil), d.src[:n]...)
			d.src = d.src[n:]
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	return d.src, nil
}

// marshalSchema appends names, types, nullability and metadata of every
// field, and the schema metadata.
func marshalSchema(dst []byte, sc *arrow.Schema) []byte {
	md := sc.Metadata()
	dst = marshalMetadata(dst, &md)
	dst = binary.AppendUvarint(dst, uint64(sc.NumFields()))
	for _, fl := range sc.Fields() {
		dst = appendString(dst, fl.Name)
		ct, err := newColType(fl.Type)
		if err != nil {
			panic(err) // NewWriter checked every field
		}
		dst = append(dst, byte(ct.id))
		switch t := fl.Type.(type) {
		case *arrow.TimestampType:
			dst = append(dst, byte(t.Unit))
			dst = appendString(dst, t.TimeZone)
		case *arrow.Decimal128Type:
			dst = binary.AppendUvarint(dst, uint64(t.Precision))
			dst = binary.AppendVarint(dst, int64(t.Scale))
		}
		nullable := byte(0)
		if fl.Nullable {
			nullable = 1
		}
		dst = append(dst, nullable)
		dst = marshalMetadata(dst, &fl.Metadata)
	}
	return dst
}

func marshalMetadata(dst []byte, md *arrow.Metadata) []byte {
	dst = binary.AppendUvarint(dst, uint64(md.Len()))
	for i, k := range md.Keys() {
		dst = appendString(dst, k)
		dst = appendString(dst, md.Values()[i])
	}
	return dst
}

var errSchema = errors.New("bad schema")

func unmarshalSchema(d *decoder) (*arrow.Schema, []colType) {
	md, hasMD := unmarshalMetadata(d)
	n := d.count(4) // name length, type, nullable, metadata count
	if d.err == nil && n > maxColumns {
		d.fail(errSchema)
	}
	if d.err != nil {
		return nil, nil
	}
	fields := make([]arrow.Field, n)
	cols := make([]colType, n)
	for i := range fields {
		fl := &fields[i]
		fl.Name = d.string()
		fl.Type = unmarshalType(d)
		switch d.byte() {
		case 0:
		case 1:
			fl.Nullable = true
		default:
			d.fail(errSchema)
		}
		if fmd, ok := unmarshalMetadata(d); ok {
			fl.Metadata = fmd
		}
		if d.err != nil {
			return nil, nil
		}
		ct, err := newColType(fl.Type)
		if err != nil {
			d.fail(errSchema)
			return nil, nil
		}
		cols[i] = ct
	}
	if hasMD {
		return arrow.NewSchema(fields, &md), cols
	}
	return arrow.NewSchema(fields, nil), cols
}

func unmarshalType(d *decoder) arrow.DataType {
	switch typeID(d.byte()) {
	case typeBool:
		return arrow.FixedWidthTypes.Boolean
	case typeInt8:
		return arrow.PrimitiveTypes.Int8
	case typeInt16:
		return arrow.PrimitiveTypes.Int16
	case typeInt32:
		return arrow.PrimitiveTypes.Int32
	case typeInt64:
		return arrow.PrimitiveTypes.Int64
	case typeFloat32:
		return arrow.PrimitiveTypes.Float32
	case typeFloat64:
		return arrow.PrimitiveTypes.Float64
	case typeString:
		return arrow.BinaryTypes.String
	case typeBinary:
		return arrow.BinaryTypes.Binary
	case typeDate32:
		return arrow.FixedWidthTypes.Date32
	case typeTimestamp:
		unit := arrow.TimeUnit(d.byte())
		tz := d.string()
		if unit > arrow.Nanosecond {
			d.fail(errSchema)
			return nil
		}
		return &arrow.TimestampType{Unit: unit, TimeZone: tz}
	case typeDecimal128:
		p := d.uvarint()
		s := d.varint()
		if p < 1 || p > 38 || s < -(1<<31) || s >= 1<<31 {
			d.fail(errSchema)
			return nil
		}
		return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}
	}
	d.fail(fmt.Errorf("%w: unknown column type", errSchema))
	return nil
}

func unmarshalMetadata(d *decoder) (arrow.Metadata, bool) {
	n := d.count(2)
	if d.err != nil || n == 0 {
		return arrow.Metadata{}, false
	}
	keys := make([]string, n)
	vals := make([]string, n)
	for i := range keys {
		keys[i] = d.string()
		vals[i] = d.string()
	}
	return arrow.NewMetadata(keys, vals), d.err == nil
}
