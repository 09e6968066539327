package bench

import (
	"fmt"
	"math/bits"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Layout says how the expirations of the generated rows relate to their
// order.
type Layout string

const (
	// Random: rows are in event-time order, but each row's expiration is
	// drawn independently of its position, so every page mixes live,
	// expired and never-expiring rows.
	Random Layout = "random"
	// Correlated: expiration = event_time + Retention, rows in event-time
	// order, so expired rows form a prefix of the table (apart from the
	// NULL expirations, which are spread through it).
	Correlated Layout = "correlated"
)

// ParseLayout accepts "random" or "correlated".
func ParseLayout(s string) (Layout, error) {
	switch Layout(s) {
	case Random, Correlated:
		return Layout(s), nil
	}
	return "", fmt.Errorf("unknown layout %q (want random or correlated)", s)
}

// Constants of the events shape.
const (
	// DefaultBatchRows is the number of rows of a generated record batch.
	DefaultBatchRows = 64 << 10
	// Users is the size of the user_id domain: about a million distinct
	// users once the table holds several million rows.
	Users = 1_000_000
	// DefaultSeed is the seed every command uses unless told otherwise.
	DefaultSeed uint64 = 20260101
	// NullPercent of rows have a NULL __TTL__ (never expire).
	NullPercent = 10
	// ExpiredPercent of all rows are expired at Now.
	ExpiredPercent = 50
	// Span is the event-time range the rows cover.
	Span = 30 * 24 * time.Hour
	// Retention is the constant that the correlated layout adds to the
	// event time.
	Retention = 7 * 24 * time.Hour
)

// Now is the benchmark's now: every workload judges expiry at this instant.
var Now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Names of the generated columns, in order.
const (
	ColID        = "id"
	ColEventTime = "event_time"
	ColUserID    = "user_id"
	ColAmount    = "amount"
	ColMessage   = "message"
	ColTTL       = "__TTL__"
)

// ArrowSchema is the schema of generated batches: the five user columns and
// the direct-mode __TTL__ column (epoch µs, NULL = never expires).
func ArrowSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: ColID, Type: arrow.PrimitiveTypes.Int64},
		{Name: ColEventTime, Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
		{Name: ColUserID, Type: arrow.PrimitiveTypes.Int64},
		{Name: ColAmount, Type: arrow.PrimitiveTypes.Float64},
		{Name: ColMessage, Type: arrow.BinaryTypes.String},
		{Name: ColTTL, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
}

// Generator makes the rows of the events shape. Every value of row i is a
// pure function of (Seed, Layout, KeySpace, i), so any range of rows can be
// regenerated, in any batching and in parallel, with identical results: the
// DuckDB side of the comparison regenerates exactly what rowttl loaded.
type Generator struct {
	// Rows is the number of rows of the stream.
	Rows int64
	// Layout places the expirations.
	Layout Layout
	// Seed selects the data set.
	Seed uint64
	// KeySpace, when positive, draws id at random from [0, KeySpace) (an
	// upsert stream over KeySpace keys) instead of numbering rows 0..Rows-1.
	KeySpace int64
	// BatchRows is the size of a batch; 0 means DefaultBatchRows.
	BatchRows int
}

// Events returns the generator of the events table.
func Events(rows int64, layout Layout, seed uint64) *Generator {
	return &Generator{Rows: rows, Layout: layout, Seed: seed}
}

// Row is one generated row, for brute-force checks.
type Row struct {
	ID        int64
	EventTime int64 // µs, DATETIME wall clock in UTC
	UserID    int64
	Amount    float64
	Message   string
	TTL       int64 // µs since the epoch; meaningful when HasTTL
	HasTTL    bool
}

// Live reports whether the row is alive at now (µs).
func (r Row) Live(now int64) bool { return !r.HasTTL || r.TTL > now }

func (g *Generator) batchRows() int {
	if g.BatchRows > 0 {
		return g.BatchRows
	}
	return DefaultBatchRows
}

// NumBatches is the number of batches Batch serves.
func (g *Generator) NumBatches() int {
	b := int64(g.batchRows())
	return int((g.Rows + b - 1) / b)
}

// splitmix64 is a bijective mixer with good avalanche; it turns a counter
// into independent-looking 64-bit words.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// below maps a random word to [0, n) (Lemire's multiply-shift; the bias is
// negligible for the n used here).
func below(r uint64, n uint64) uint64 {
	hi, _ := bits.Mul64(r, n)
	return hi
}

// scale returns i*num/den without overflow (i < den).
func scale(i, num, den uint64) uint64 {
	hi, lo := bits.Mul64(i, num)
	q, _ := bits.Div64(hi, lo, den)
	return q
}

var verbs = [...]string{"view", "click", "login", "logout", "search", "cart_add", "checkout", "refund"}

// stream is the per-generator salt of the row hash.
func (g *Generator) stream() uint64 {
	s := splitmix64(g.Seed ^ 0x726f7774746c) // "rowttl"
	if g.Layout == Correlated {
		s = splitmix64(s ^ 1)
	}
	if g.KeySpace > 0 {
		s = splitmix64(s ^ uint64(g.KeySpace)<<1)
	}
	return s
}

// rowGen holds what every row of a generator shares.
type rowGen struct {
	salt       uint64
	now        int64
	t0         int64 // event time of row 0
	span       int64
	expiredPos int64 // correlated: offset from t0 where expiration reaches now
	rows       int64
	layout     Layout
	keySpace   int64
}

func (g *Generator) rowGen() rowGen {
	now := Now.UnixMicro()
	span := Span.Microseconds()
	// The non-NULL rows are 90% of all; ExpiredPercent of all must be
	// expired, so that share of the non-NULL ones: 50/90 = 5/9.
	expiredPos := span * ExpiredPercent / (100 - NullPercent)
	// Correlated: ttl(i) = event_time(i) + Retention <= now exactly when
	// event_time(i) - t0 <= expiredPos.
	t0 := now - Retention.Microseconds() - expiredPos
	return rowGen{salt: g.stream(), now: now, t0: t0, span: span, expiredPos: expiredPos,
		rows: max(g.Rows, 1), layout: g.Layout, keySpace: g.KeySpace}
}

// row computes row i. msg receives the message bytes (appended to msg[:0]).
func (rg *rowGen) row(i int64, msg []byte) (r Row, m []byte) {
	h1 := splitmix64(rg.salt + uint64(i)*0x9e3779b97f4a7c15)
	h2 := splitmix64(h1)
	h3 := splitmix64(h2)
	r.ID = i
	if rg.keySpace > 0 {
		r.ID = int64(below(h3, uint64(rg.keySpace)))
	}
	off := int64(scale(uint64(i), uint64(rg.span), uint64(rg.rows)))
	if rg.keySpace > 0 {
		// An upsert stream: times drawn over the span.
		off = int64(below(h3>>7|h3<<57, uint64(rg.span)))
	}
	r.EventTime = rg.t0 + off
	r.UserID = int64(below(h1, Users))
	r.Amount = float64(below(h2, 1_000_000)) / 100
	m = append(msg[:0], verbs[h1&7]...)
	m = append(m, ' ', '#')
	m = strconv.AppendUint(m, 1_000_000_000+below(h3, 9_000_000_000), 10)
	// The low bits of h2 decide NULL and expiry; they are independent of
	// the high bits used for the amount.
	r.HasTTL = (h2&0xffff)%100 >= NullPercent
	if r.HasTTL {
		if rg.layout == Correlated && rg.keySpace == 0 {
			r.TTL = r.EventTime + Retention.Microseconds()
		} else {
			// Random: expired with probability 5/9 among the non-NULL.
			u := below(splitmix64(h3), uint64(rg.span))
			if int64(u) < rg.expiredPos {
				r.TTL = rg.now - rg.expiredPos + int64(u) // <= now
			} else {
				r.TTL = rg.now + 1 + int64(u) - rg.expiredPos
			}
		}
	}
	return r, m
}

// Row returns row i (for checks; batches are far faster).
func (g *Generator) Row(i int64) Row {
	rg := g.rowGen()
	r, m := rg.row(i, nil)
	r.Message = string(m)
	return r
}

// Range builds rows [start, start+n) as one record batch.
func (g *Generator) Range(mem memory.Allocator, start int64, n int) arrow.RecordBatch {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	rg := g.rowGen()
	ids := make([]int64, n)
	times := make([]arrow.Timestamp, n)
	users := make([]int64, n)
	amounts := make([]float64, n)
	ttls := make([]int64, n)
	valid := make([]bool, n)
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	sb.Reserve(n)
	sb.ReserveData(n * 21)
	var msg []byte
	anyNull := false
	for k := 0; k < n; k++ {
		var r Row
		r, msg = rg.row(start+int64(k), msg)
		ids[k], times[k], users[k], amounts[k] = r.ID, arrow.Timestamp(r.EventTime), r.UserID, r.Amount
		ttls[k], valid[k] = r.TTL, r.HasTTL
		anyNull = anyNull || !r.HasTTL
		sb.BinaryBuilder.Append(msg)
	}
	cols := make([]arrow.Array, 0, 6)
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	ib.AppendValues(ids, nil)
	cols = append(cols, ib.NewArray())
	tb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond})
	defer tb.Release()
	tb.AppendValues(times, nil)
	cols = append(cols, tb.NewArray())
	ib.AppendValues(users, nil)
	cols = append(cols, ib.NewArray())
	fb := array.NewFloat64Builder(mem)
	defer fb.Release()
	fb.AppendValues(amounts, nil)
	cols = append(cols, fb.NewArray())
	cols = append(cols, sb.NewArray())
	if anyNull {
		ib.AppendValues(ttls, valid)
	} else {
		ib.AppendValues(ttls, nil)
	}
	cols = append(cols, ib.NewArray())
	rec := array.NewRecordBatch(ArrowSchema(), cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// Batch returns batch b of NumBatches.
func (g *Generator) Batch(mem memory.Allocator, b int) arrow.RecordBatch {
	size := int64(g.batchRows())
	start := int64(b) * size
	return g.Range(mem, start, int(min(size, g.Rows-start)))
}

// Batches generates every batch, using all cores; the caller releases them.
func (g *Generator) Batches(mem memory.Allocator) []arrow.RecordBatch {
	n := g.NumBatches()
	out := make([]arrow.RecordBatch, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				out[b] = g.Batch(mem, b)
			}
		}()
	}
	for b := 0; b < n; b++ {
		next <- b
	}
	close(next)
	wg.Wait()
	return out
}

// Each calls fn with every batch in order, generating them a few ahead on
// other cores; fn must not keep a batch past its return unless it retains
// it.
func (g *Generator) Each(mem memory.Allocator, fn func(b int, rec arrow.RecordBatch) error) error {
	n := g.NumBatches()
	workers := max(1, runtime.GOMAXPROCS(0))
	slots := make([]chan arrow.RecordBatch, n)
	for i := range slots {
		slots[i] = make(chan arrow.RecordBatch, 1)
	}
	sem := make(chan struct{}, workers+1) // batches generated but not consumed
	stop := make(chan struct{})
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				slots[b] <- g.Batch(mem, b)
			}
		}()
	}
	go func() {
		defer close(next)
		for b := 0; b < n; b++ {
			select {
			case sem <- struct{}{}:
			case <-stop:
				return
			}
			select {
			case next <- b:
			case <-stop:
				<-sem
				return
			}
		}
	}()
	var err error
	b := 0
	for ; b < n && err == nil; b++ {
		rec := <-slots[b]
		<-sem
		err = fn(b, rec)
		rec.Release()
	}
	close(stop)
	wg.Wait()
	// Release batches generated past an error.
	for ; b < n; b++ {
		select {
		case rec := <-slots[b]:
			rec.Release()
		default:
		}
	}
	return err
}

// Upserts returns the stream of the upsert workload for an events table of
// rows rows: rows/2 full-row writes over rows/10 keys (5M over 1M at 10M
// rows), random expirations. Writes says into how many versions it is cut.
func Upserts(rows int64, seed uint64) (g *Generator, writes int) {
	n := max(rows/2, 1)
	keys := max(rows/10, 1)
	return &Generator{Rows: n, Layout: Random, Seed: seed, KeySpace: keys}, 10
}

// WriteRanges cuts [0, rows) into writes contiguous ranges of whole
// batches (at least one row each), as [start, end) pairs.
func WriteRanges(rows int64, writes int) [][2]int64 {
	var out [][2]int64
	per := (rows + int64(writes) - 1) / int64(writes)
	for s := int64(0); s < rows; s += per {
		out = append(out, [2]int64{s, min(s+per, rows)})
	}
	return out
}

// WriteBatches generates the rows [wr[0], wr[1]) of g, one write of an
// upsert stream, as batches of at most DefaultBatchRows rows.
func (g *Generator) WriteBatches(mem memory.Allocator, wr [2]int64) []arrow.RecordBatch {
	var v []arrow.RecordBatch
	for s := wr[0]; s < wr[1]; s += DefaultBatchRows {
		v = append(v, g.Range(mem, s, int(min(DefaultBatchRows, wr[1]-s))))
	}
	return v
}
