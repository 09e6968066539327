package rowset

import (
	"fmt"
	"path/filepath"

	"github.com/rowttl/rowttl/ttlcol"
)

// SegmentMeta describes one segment file of a rowset.
type SegmentMeta struct {
	FileNum uint64 `json:"file"`
	Rows    int64  `json:"rows"`
	Bytes   int64  `json:"bytes"`
}

// TTLStats summarises the stored __TTL__ values of a rowset.
type TTLStats struct {
	// Nulls counts rows whose __TTL__ is NULL (they never expire).
	Nulls int64 `json:"nulls"`
	// Min and Max bound the non-null stored values; meaningful when
	// HasMinMax.
	HasMinMax bool  `json:"has_minmax,omitempty"`
	Min       int64 `json:"min,omitempty"`
	Max       int64 `json:"max,omitempty"`
}

// Merge combines the statistics of two row collections.
func (s TTLStats) Merge(o TTLStats) TTLStats {
	r := TTLStats{Nulls: s.Nulls + o.Nulls}
	switch {
	case s.HasMinMax && o.HasMinMax:
		r.HasMinMax = true
		r.Min, r.Max = min(s.Min, o.Min), max(s.Max, o.Max)
	case s.HasMinMax:
		r.HasMinMax, r.Min, r.Max = true, s.Min, s.Max
	case o.HasMinMax:
		r.HasMinMax, r.Min, r.Max = true, o.Min, o.Max
	}
	return r
}

// Meta is what the manifest records about a rowset. It never changes once
// published, except the delete bitmap of a merge-on-write table, which the
// manifest carries separately.
type Meta struct {
	ID       uint64        `json:"id"`
	Lo       int64         `json:"lo"`
	Hi       int64         `json:"hi"`
	Segments []SegmentMeta `json:"segments"`
	Rows     int64         `json:"rows"`
	Bytes    int64         `json:"bytes"`
	TTL      TTLStats      `json:"ttl"`
	// Hist counts the stored __TTL__ values by bucket, so that the reclaim
	// scheduler knows how many rows expire when without reading the files.
	Hist *ttlcol.Histogram `json:"hist,omitempty"`
	// Overlapping is set when the segments' key ranges may overlap (a large
	// write cut into several sorted runs); clear when the rowset is one
	// sorted run across its segments.
	Overlapping bool `json:"overlapping,omitempty"`
}

func (m *Meta) String() string {
	return fmt.Sprintf("rowset %d [%d-%d] %d rows %d bytes in %d segments", m.ID, m.Lo, m.Hi, m.Rows, m.Bytes, len(m.Segments))
}

// SegmentFileName is the name of a published segment file inside a table
// directory.
func SegmentFileName(dir string, fileNum uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%06d.seg", fileNum))
}

// ParseSegmentFileName returns the file number of a published segment file
// name (base name only), or false.
func ParseSegmentFileName(base string) (uint64, bool) {
	var n uint64
	var rest string
	if k, _ := fmt.Sscanf(base, "%06d.%s", &n, &rest); k != 2 || rest != "seg" {
		return 0, false
	}
	if base != fmt.Sprintf("%06d.seg", n) {
		return 0, false
	}
	return n, true
}
