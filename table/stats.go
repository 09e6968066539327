package table

import (
	"context"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/rowset"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
)

// Stats describe a table's storage at one now.
type Stats struct {
	Rowsets int
	// RowsOnDisk counts physical rows in live data files, superseded,
	// deleted and expired ones included; BytesOnDisk their files' size.
	RowsOnDisk  int64
	BytesOnDisk int64
	// VisibleRows is what count(*) returns at now.
	VisibleRows int64
	// ExpiredRowsOnDisk counts physical rows whose own expiration has
	// passed at now (exact, from zone maps and the __TTL__ pages).
	ExpiredRowsOnDisk int64
	// ExpiredBytesOnDisk estimates their bytes (rows × the rowset's average
	// row size).
	ExpiredBytesOnDisk int64
	// OldestExpiration is the earliest expiration (µs) among expired rows
	// still on disk, or 0 when there is none.
	OldestExpiration int64
	ReclaimedRows    int64
	ReclaimedBytes   int64
	// Compactions counts compactions run, by kind.
	Compactions map[string]int64
	// IngestedBytes and CompactedBytes are the bytes written by writes and
	// by compactions; their ratio is the write amplification.
	IngestedBytes  int64
	CompactedBytes int64
	// Triggers counts compactions by what started them.
	Triggers map[string]int64
	// LiveBytes estimates the bytes of the visible rows: bytes on disk at
	// the average row size.
	LiveBytes int64
	// ReclaimDeadline is the table's rowttl.reclaim_deadline (0: none).
	// Behind is set when an expired row has stayed on disk longer than the
	// deadline after its expiration, and BehindBy says by how much.
	ReclaimDeadline time.Duration
	Behind          bool
	BehindBy        time.Duration
	// Memtables, MemtableRows and MemtableBytes describe the rows of small
	// writes not yet flushed to a rowset (active and frozen memtables),
	// their bytes those of the writes and of the in-memory rowsets reads
	// built of them; WALBytes is the size of the write-ahead log segments
	// kept for them.
	Memtables     int
	MemtableRows  int64
	MemtableBytes int64
	WALBytes      int64
	// Flushes counts memtable flushes since open; WriteStalls the writes
	// that waited because flushing fell behind.
	Flushes     int64
	WriteStalls int64
}

// WriteAmplification is the bytes written by compactions per byte
// ingested.
func (s Stats) WriteAmplification() float64 {
	if s.IngestedBytes == 0 {
		return 0
	}
	return float64(s.CompactedBytes) / float64(s.IngestedBytes)
}

// OldestExpiredAge is how long the oldest expired row still on disk has
// been expired at now.
func (s Stats) OldestExpiredAge(now time.Time) time.Duration {
	if s.OldestExpiration == 0 {
		return 0
	}
	return now.Sub(time.UnixMicro(s.OldestExpiration))
}

// TotalCompactions sums Compactions.
func (s Stats) TotalCompactions() int64 {
	var n int64
	for _, v := range s.Compactions {
		n += v
	}
	return n
}

// RowsetInfo describes one rowset at one now.
type RowsetInfo struct {
	ID     uint64
	Lo, Hi int64
	Rows   int64
	Bytes  int64
	// MinTTL and MaxTTL bound the rowset's expirations (µs, retention
	// applied); nil when no row has one.
	MinTTL, MaxTTL *int64
	// ExpiredRows counts rows whose expiration has passed at now.
	ExpiredRows int64
	// DeletedRows counts rows that deletes or newer versions of their key
	// (merge-on-write) have marked.
	DeletedRows int64
	// Hist counts the rowset's expirations by bucket (retention applied),
	// nil without row TTL.
	Hist *ttlcol.Histogram
}

// Rowsets describes the current rowsets in version order.
func (t *Table) Rowsets(ctx context.Context, now time.Time) ([]RowsetInfo, error) {
	v, err := t.pin()
	if err != nil {
		return nil, err
	}
	defer v.unref()
	if now.IsZero() {
		now = t.opts.Clock()
	}
	threshold := v.policy.Threshold(now.UnixMicro())
	out := make([]RowsetInfo, 0, len(v.rowsets))
	for _, h := range v.rowsets {
		info := RowsetInfo{ID: h.Meta.ID, Lo: h.Meta.Lo, Hi: h.Meta.Hi, Rows: h.Meta.Rows, Bytes: h.Meta.Bytes}
		if v.policy.Mode != ttlcol.NoTTL && h.Meta.TTL.HasMinMax {
			lo, _ := v.policy.Expiration(h.Meta.TTL.Min)
			hi, _ := v.policy.Expiration(h.Meta.TTL.Max)
			info.MinTTL, info.MaxTTL = &lo, &hi
			n, _, err := expiredRows(h, threshold)
			if err != nil {
				return nil, err
			}
			info.ExpiredRows = n
		}
		if d := v.deleted[h.Meta.ID]; d != nil {
			info.DeletedRows = int64(d.GetCardinality())
		}
		if h.Meta.Hist != nil {
			info.Hist = shiftHist(h.Meta.Hist, v.policy)
		}
		out = append(out, info)
	}
	return out, nil
}

// EstimateRows estimates the rows a scan of the rowsets returns at now (the
// table's clock when zero), memtables left out. Unlike Rowsets, whose
// expired counts are exact, it reads no page: planners call it per table
// per statement, and on a large table whose pages straddle the TTL
// threshold the exact count decodes every __TTL__ page, costing a sizeable
// share of the query it plans. Expired rows come from the zone maps and,
// for a rowset that straddles the threshold, from its histogram of
// expirations (or, without one, half of each straddling page).
func (t *Table) EstimateRows(now time.Time) (int64, error) {
	v, err := t.pin()
	if err != nil {
		return 0, err
	}
	defer v.unref()
	if now.IsZero() {
		now = t.opts.Clock()
	}
	threshold := v.policy.Threshold(now.UnixMicro())
	var n int64
	for _, h := range v.rowsets {
		rows := h.Meta.Rows
		if v.policy.Mode != ttlcol.NoTTL {
			rows -= estimateExpired(h, threshold)
		}
		if d := v.deleted[h.Meta.ID]; d != nil {
			rows -= int64(d.GetCardinality())
		}
		n += max(rows, 0)
	}
	return n, nil
}

// estimateExpired estimates, from metadata alone, the rows of a rowset
// whose stored __TTL__ is at or below threshold.
func estimateExpired(h *rowset.Handle, threshold int64) int64 {
	m := h.Meta.TTL
	switch {
	case !m.HasMinMax || m.Min > threshold:
		return 0
	case m.Max <= threshold:
		return h.Meta.Rows - m.Nulls
	case h.Meta.Hist != nil:
		return min(h.Meta.Hist.ExpiredAt(threshold), h.Meta.Rows-m.Nulls)
	}
	var n int64
	for _, r := range h.Segments {
		idx := r.Schema().FieldIndices(schema.TTLColumn)
		if len(idx) == 0 {
			continue
		}
		for p := 0; p < r.NumPages(); p++ {
			z := r.PageStats(idx[0], p)
			switch query.ClassifyPage(z, threshold) {
			case ttlcol.AllExpired:
				n += z.Rows
			case ttlcol.Mixed:
				n += (z.Rows - z.NullCount) / 2
			}
		}
	}
	return n
}

// expiredRows counts the rows of a rowset whose stored __TTL__ is at or
// below threshold, and returns the smallest such value.
func expiredRows(h *rowset.Handle, threshold int64) (int64, int64, error) {
	m := h.Meta.TTL
	if !m.HasMinMax || m.Min > threshold {
		return 0, 0, nil
	}
	var n int64
	oldest := m.Min
	mem := memory.DefaultAllocator
	for _, r := range h.Segments {
		idx := -1
		for i, f := range r.Schema().Fields() {
			if f.Name == schema.TTLColumn {
				idx = i
			}
		}
		if idx < 0 {
			continue
		}
		for p := 0; p < r.NumPages(); p++ {
			z := r.PageStats(idx, p)
			switch query.ClassifyPage(z, threshold) {
			case ttlcol.AllLive:
				continue
			case ttlcol.AllExpired:
				n += z.Rows
				continue
			}
			a, err := r.ReadPage(mem, idx, p)
			if err != nil {
				return 0, 0, err
			}
			d := a.Data()
			vals := arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())[d.Offset() : d.Offset()+a.Len()]
			var validity []byte
			if a.NullN() > 0 {
				validity = d.Buffers()[0].Bytes()
			}
			n += int64(a.Len()-a.NullN()) - int64(ttlcol.CountLive(vals, validity, d.Offset(), threshold)-a.NullN())
			a.Release()
		}
	}
	return n, oldest, nil
}

// Stats reports the table's storage at now (the table's clock when zero).
func (t *Table) Stats(ctx context.Context, now time.Time) (Stats, error) {
	if now.IsZero() {
		now = t.opts.Clock()
	}
	v, err := t.pin()
	if err != nil {
		return Stats{}, err
	}
	t.mu.Lock()
	tot := t.vs.counters.clone()
	t.mu.Unlock()
	s := Stats{
		Rowsets: len(v.rowsets), ReclaimedRows: tot.ReclaimedRows, ReclaimedBytes: tot.ReclaimedBytes,
		Compactions: tot.Compactions, IngestedBytes: tot.IngestedBytes, CompactedBytes: tot.CompactedBytes,
		Triggers:        tot.Triggers,
		ReclaimDeadline: time.Duration(reclaimDeadline(v.def)) * time.Microsecond,
	}
	threshold := v.policy.Threshold(now.UnixMicro())
	for _, h := range v.rowsets {
		s.RowsOnDisk += h.Meta.Rows
		s.BytesOnDisk += h.Meta.Bytes
		if v.policy.Mode == ttlcol.NoTTL {
			continue
		}
		n, oldest, err := expiredRows(h, threshold)
		if err != nil {
			v.unref()
			return Stats{}, err
		}
		if n > 0 {
			s.ExpiredRowsOnDisk += n
			if h.Meta.Rows > 0 {
				s.ExpiredBytesOnDisk += n * h.Meta.Bytes / h.Meta.Rows
			}
			if exp, ok := v.policy.Expiration(oldest); ok && (s.OldestExpiration == 0 || exp < s.OldestExpiration) {
				s.OldestExpiration = exp
			}
		}
	}
	v.unref()
	t.memStats(&s)
	s.VisibleRows, err = t.Count(ctx, now, nil)
	if s.RowsOnDisk > 0 {
		s.LiveBytes = s.BytesOnDisk * s.VisibleRows / s.RowsOnDisk
	}
	if s.ReclaimDeadline > 0 && s.OldestExpiration != 0 {
		if age := s.OldestExpiredAge(now); age > s.ReclaimDeadline {
			s.Behind, s.BehindBy = true, age-s.ReclaimDeadline
		}
	}
	return s, err
}

// shiftHist returns a histogram of expirations from one of stored values:
// in source mode every value moves by the retention.
func shiftHist(h *ttlcol.Histogram, pol ttlcol.Policy) *ttlcol.Histogram {
	out := ttlcol.NewHistogram(h.BucketMicros())
	h.Each(func(start, width, rows int64) {
		exp, ok := pol.Expiration(start)
		if !ok {
			exp = start
		}
		out.AddCounts(exp, rows)
	})
	out.AddNulls(h.Nulls())
	return out
}
