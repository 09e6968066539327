package segment

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Dump writes a readable description of the file: header, schema, every
// chunk (offset, length, encoding, compression, body length, stored CRC and
// whether it matches, zone map), footer, column zone maps and trailer. It is
// the format's golden-test view and the inspect command's.
func (r *Reader) Dump(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "segment %s: %d bytes, format version %d, %d rows, %d pages of up to %d rows\n",
		r.name, r.size, r.f.version, r.f.rows, len(r.f.pages), r.f.pageRows)
	fmt.Fprintf(bw, "header: offset 0 length %d magic %q version %d\n", headerLen, magic, r.f.version)
	fmt.Fprintf(bw, "schema:%s\n", dumpMetadata(r.f.schema.Metadata()))
	for i, f := range r.f.schema.Fields() {
		null := "not null"
		if f.Nullable {
			null = "null"
		}
		fmt.Fprintf(bw, "  column %d %q %s %s%s\n", i, f.Name, f.Type, null, dumpMetadata(f.Metadata))
	}
	var raw []byte
	for p, n := range r.f.pages {
		fmt.Fprintf(bw, "page %d: rows [%d, %d)\n", p, r.firstRows[p], r.firstRows[p]+int64(n))
		for col := range r.f.cols {
			c := r.f.chunk(col, p)
			raw = grow(raw, int(c.length))
			crc := "unread"
			if err := r.readAt(raw, c.offset); err == nil {
				stored := binary.LittleEndian.Uint32(raw[len(raw)-4:])
				status := "ok"
				if checksum(raw[:len(raw)-4]) != stored {
					status = "MISMATCH"
				}
				crc = fmt.Sprintf("%08x %s", stored, status)
			}
			fmt.Fprintf(bw, "  column %d: offset %d length %d encoding %s compression %s body %d crc %s: %s\n",
				col, c.offset, c.length, c.enc, c.comp, c.bodyLen, crc, c.zone)
		}
	}
	fmt.Fprintf(bw, "footer: offset %d length %d crc %08x\n", r.footerOff, r.footerLen, r.footerCRC)
	for col, z := range r.f.columns {
		fmt.Fprintf(bw, "  column %d: %s\n", col, z)
	}
	if len(r.f.tag) > 0 {
		fmt.Fprintf(bw, "  tag: %d bytes %x\n", len(r.f.tag), r.f.tag)
	}
	fmt.Fprintf(bw, "trailer: offset %d length %d\n", r.size-trailerLen, trailerLen)
	return bw.Flush()
}

func dumpMetadata(md arrow.Metadata) string {
	if md.Len() == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(" metadata {")
	for i, k := range md.Keys() {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q: %q", k, md.Values()[i])
	}
	b.WriteString("}")
	return b.String()
}
