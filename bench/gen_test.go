package bench

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Batches of different sizes, generated in parallel or one by one, hold
// exactly the rows Row describes.
func TestGeneratorDeterministic(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, layout := range []Layout{Random, Correlated} {
		g := &Generator{Rows: 10_000, Layout: layout, Seed: 7, BatchRows: 3000}
		h := &Generator{Rows: 10_000, Layout: layout, Seed: 7, BatchRows: 4096}
		a := g.Batches(mem)
		var b []arrow.RecordBatch
		if err := h.Each(mem, func(_ int, rec arrow.RecordBatch) error {
			rec.Retain()
			b = append(b, rec)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		rowsOf := func(recs []arrow.RecordBatch) []Row {
			var out []Row
			for _, rec := range recs {
				ttl := rec.Column(5).(*array.Int64)
				for i := 0; i < int(rec.NumRows()); i++ {
					out = append(out, Row{
						ID:        rec.Column(0).(*array.Int64).Value(i),
						EventTime: int64(rec.Column(1).(*array.Timestamp).Value(i)),
						UserID:    rec.Column(2).(*array.Int64).Value(i),
						Amount:    rec.Column(3).(*array.Float64).Value(i),
						Message:   rec.Column(4).(*array.String).Value(i),
						TTL:       map[bool]int64{true: ttl.Value(i)}[ttl.IsValid(i)],
						HasTTL:    ttl.IsValid(i),
					})
				}
			}
			return out
		}
		ra, rb := rowsOf(a), rowsOf(b)
		if len(ra) != 10_000 || len(rb) != 10_000 {
			t.Fatalf("%s: %d and %d rows", layout, len(ra), len(rb))
		}
		for i := range ra {
			want := g.Row(int64(i))
			if ra[i] != want || rb[i] != want {
				t.Fatalf("%s row %d: %+v / %+v, want %+v", layout, i, ra[i], rb[i], want)
			}
		}
		releaseAll(a)
		releaseAll(b)
		if g.Row(5) == (&Generator{Rows: 10_000, Layout: layout, Seed: 8}).Row(5) {
			t.Fatalf("%s: another seed gives the same row", layout)
		}
	}
}

// The data has the advertised shape: 10% NULL expirations, 50% expired,
// ~20-byte messages, and in the correlated layout expiration = event_time +
// Retention with the expired rows a prefix of the non-NULL ones.
func TestGeneratorShape(t *testing.T) {
	const n = 200_000
	now := Now.UnixMicro()
	for _, layout := range []Layout{Random, Correlated} {
		g := Events(n, layout, DefaultSeed)
		var nulls, expired, msgBytes int
		lastExpired, firstLive := int64(-1), int64(n)
		users := map[int64]bool{}
		for i := int64(0); i < n; i++ {
			r := g.Row(i)
			msgBytes += len(r.Message)
			users[r.UserID] = true
			if r.ID != i || r.UserID < 0 || r.UserID >= Users || r.Amount < 0 || r.Amount >= 10_000 {
				t.Fatalf("%s row %d: %+v", layout, i, r)
			}
			if i > 0 && r.EventTime < g.Row(i-1).EventTime {
				t.Fatalf("%s: rows not in event-time order at %d", layout, i)
			}
			if !r.HasTTL {
				nulls++
				continue
			}
			if layout == Correlated && r.TTL != r.EventTime+Retention.Microseconds() {
				t.Fatalf("correlated row %d: ttl %d, event_time %d", i, r.TTL, r.EventTime)
			}
			if r.TTL <= now {
				expired++
				lastExpired = i
			} else if firstLive == n {
				firstLive = i
			}
		}
		near := func(got, wantPct int) bool { return math.Abs(float64(got)/n*100-float64(wantPct)) < 1 }
		if !near(nulls, NullPercent) || !near(expired, ExpiredPercent) {
			t.Errorf("%s: %d NULL, %d expired of %d", layout, nulls, expired, n)
		}
		if avg := float64(msgBytes) / n; avg < 17 || avg > 23 {
			t.Errorf("%s: messages of %.1f bytes on average", layout, avg)
		}
		if layout == Correlated && lastExpired > firstLive {
			t.Errorf("correlated: an expired row (%d) after a live one (%d)", lastExpired, firstLive)
		}
		if layout == Random && lastExpired < firstLive {
			t.Errorf("random: expired rows form a prefix")
		}
		if len(users) < n*9/10 {
			t.Errorf("%s: only %d distinct users in %d rows", layout, len(users), n)
		}
	}
}

// The upsert stream draws its keys from rows/10 and cuts into 10 writes.
func TestUpserts(t *testing.T) {
	g, writes := Upserts(1000, 1)
	if g.Rows != 500 || g.KeySpace != 100 || writes != 10 {
		t.Fatalf("Upserts(1000) = %d rows over %d keys in %d writes", g.Rows, g.KeySpace, writes)
	}
	keys := map[int64]bool{}
	for i := int64(0); i < g.Rows; i++ {
		id := g.Row(i).ID
		if id < 0 || id >= 100 {
			t.Fatalf("key %d out of range", id)
		}
		keys[id] = true
	}
	if len(keys) < 95 {
		t.Fatalf("only %d distinct keys", len(keys))
	}
	rs := WriteRanges(g.Rows, writes)
	if len(rs) != 10 || rs[0][0] != 0 || rs[9][1] != 500 {
		t.Fatalf("WriteRanges = %v", rs)
	}
	for i := 1; i < len(rs); i++ {
		if rs[i][0] != rs[i-1][1] {
			t.Fatalf("WriteRanges = %v", rs)
		}
	}
}
