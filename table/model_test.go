package table

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/bufpool"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/ttlcol"
	"github.com/rowttl/rowttl/vfs"
)

// The model test applies one random sequence of operations to a table and
// to a plain in-memory reference, and compares full scans at random nows
// after every step. ROWTTL_MODEL_STEPS raises the number of steps.

type modelRow struct {
	id  int64
	v   int64
	ttl *int64 // direct: the expiration; source: the source instant
}

type refModel struct {
	unique    bool
	source    bool
	retention int64 // µs, source mode
	dup       []modelRow
	keys      map[int64]modelRow
}

func (m *refModel) expired(r modelRow, now int64) bool {
	if r.ttl == nil {
		return false
	}
	exp := *r.ttl
	if m.source {
		exp += m.retention
	}
	return exp <= now
}

func (m *refModel) write(rows []modelRow) {
	if !m.unique {
		m.dup = append(m.dup, rows...)
		return
	}
	for _, r := range rows {
		m.keys[r.id] = r
	}
}

// visible returns "id:v" strings of the rows alive at now, sorted.
func (m *refModel) visible(now int64) []string {
	var out []string
	if !m.unique {
		for _, r := range m.dup {
			if !m.expired(r, now) {
				out = append(out, fmt.Sprintf("%d:%d", r.id, r.v))
			}
		}
	} else {
		for _, r := range m.keys {
			if !m.expired(r, now) {
				out = append(out, fmt.Sprintf("%d:%d", r.id, r.v))
			}
		}
	}
	slices.Sort(out)
	return out
}

// deleteWhere removes the rows alive at now with v < lim.
func (m *refModel) deleteWhere(now, lim int64) int64 {
	var n int64
	if !m.unique {
		keep := m.dup[:0]
		for _, r := range m.dup {
			if !m.expired(r, now) && r.v < lim {
				n++
				continue
			}
			keep = append(keep, r)
		}
		m.dup = keep
		return n
	}
	for k, r := range m.keys {
		if !m.expired(r, now) && r.v < lim {
			delete(m.keys, k)
			n++
		}
	}
	return n
}

// updateWhere sets v = nv on the rows alive at now with v < lim.
func (m *refModel) updateWhere(now, lim, nv int64) int64 {
	var n int64
	for k, r := range m.keys {
		if !m.expired(r, now) && r.v < lim {
			r.v = nv
			m.keys[k] = r
			n++
		}
	}
	return n
}

func modelDef(model schema.Model, source bool) *Definition {
	def := &Definition{Model: model, Schema: schema.Schema{KeyCount: 1, Columns: []schema.Column{
		{Name: "id", Type: schema.BigIntType},
		{Name: "v", Type: schema.BigIntType, Nullable: true},
		{Name: "ts", Type: schema.DatetimeType(6), Nullable: true},
	}}, Properties: map[string]string{PropEnableRowTTL: "true"}}
	if model == schema.UniqueMOR {
		def.Model = schema.UniqueMOW
		def.Properties[PropMergeOnWrite] = "false"
	}
	if source {
		def.Properties[PropTTLCol] = "ts"
		def.Properties[PropTTL] = "10 hours"
		def.Properties[PropTTLTimeZone] = "UTC"
	}
	return def
}

func modelBatch(mem memory.Allocator, rows []modelRow, source bool) arrow.RecordBatch {
	fields := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}
	if source {
		fields = append(fields, arrow.Field{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true})
	} else {
		fields = append(fields, arrow.Field{Name: "__TTL__", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.id)
		b.Field(1).(*array.Int64Builder).Append(r.v)
		if r.ttl == nil {
			b.Field(2).AppendNull()
		} else if source {
			b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(*r.ttl))
		} else {
			b.Field(2).(*array.Int64Builder).Append(*r.ttl)
		}
	}
	return b.NewRecordBatch()
}

func tableVisible(t *testing.T, tbl *Table, now int64) []string {
	t.Helper()
	rows := scanAll(t, tbl, query.Request{Now: time.UnixMicro(now), Columns: []string{"id", "v"}})
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%d:%d", r[0].Int, r[1].Int)
	}
	slices.Sort(out)
	return out
}

func modelSteps() int {
	if s := os.Getenv("ROWTTL_MODEL_STEPS"); s != "" {
		var n int
		fmt.Sscan(s, &n)
		return n
	}
	if testing.Short() {
		return 40
	}
	return 120
}

func TestModelRandomized(t *testing.T) {
	// ROWTTL_SOAK (a Go duration such as 10m) keeps drawing new seeds after
	// the fixed ones.
	soak, _ := time.ParseDuration(os.Getenv("ROWTTL_SOAK"))
	for _, model := range []schema.Model{schema.Duplicate, schema.UniqueMOW, schema.UniqueMOR} {
		for _, source := range []bool{false, true} {
			name := fmt.Sprintf("%s/source=%v", strings.Fields(model.String())[0], source)
			if model == schema.UniqueMOR {
				name = fmt.Sprintf("MOR/source=%v", source)
			}
			t.Run(name, func(t *testing.T) {
				for seed := uint64(1); seed <= 3; seed++ {
					runModel(t, model, source, seed, modelSteps())
				}
				end := time.Now().Add(soak / 6)
				for seed := uint64(1000); time.Now().Before(end); seed++ {
					runModel(t, model, source, seed, modelSteps())
				}
			})
		}
	}
}

// modelConfig is one engine configuration of the metamorphic test: the same
// operations must give the same answers under every one.
type modelConfig struct {
	pageRows    int
	segmentRows int64
	zstd        int
	auto        bool // run the auto-compaction policy after every step
	pool        bool // decoded pages come from a recycling, non-zeroing pool
	// keyStride spreads the keys: 1 keeps them dense (the merge-on-read
	// merge takes its bitmap path), a large stride sparse (its heap path).
	keyStride int64
	// smallRows and memBytes are the memtable options: which writes go
	// through the write-ahead log, and how soon a memtable is flushed.
	smallRows int
	memBytes  int64
	chunkRows int64
	// memFS runs the table on an in-memory file system, where a reopen may
	// be a crash of the process (no close, no flush: the log is replayed).
	memFS bool
}

func randomConfig(rng *rand.Rand) modelConfig {
	return modelConfig{
		pageRows:    []int{3, 7, 16, 64, 8192}[rng.IntN(5)],
		segmentRows: []int64{10, 50, 1000, 1 << 20}[rng.IntN(4)],
		zstd:        []int{-1, 0, 1, 19}[rng.IntN(4)],
		auto:        rng.IntN(2) == 0,
		pool:        rng.IntN(2) == 0,
		keyStride:   []int64{1, 1 << 40}[rng.IntN(2)],
		smallRows:   []int{-1, 0, 10}[rng.IntN(3)],
		memBytes:    []int64{0, 2 << 10, 16 << 10}[rng.IntN(3)],
		memFS:       rng.IntN(2) == 0,
		chunkRows:   []int64{0, 7, 50}[rng.IntN(3)],
	}
}

func runModel(t *testing.T, model schema.Model, source bool, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, uint64(model)*10+map[bool]uint64{false: 0, true: 1}[source]))
	cfg := randomConfig(rng)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(t.TempDir(), "t")
	clock := base
	opts := &Options{Allocator: mem, PageRows: cfg.pageRows, SegmentRows: cfg.segmentRows, ZstdLevel: cfg.zstd, Clock: func() time.Time { return clock }, DisableAutoCompaction: true,
		SmallWriteRows: cfg.smallRows, MemtableBytes: cfg.memBytes, memChunkRows: cfg.chunkRows}
	var memFS *vfs.MemFS
	if cfg.memFS {
		memFS = vfs.NewMemFS()
		opts.FS, dir = memFS, "/t"
	}
	if cfg.pool {
		// Recycled buffers hold earlier pages' bytes: any reliance on
		// zeroed page memory shows up as wrong rows.
		pageMem := memory.NewCheckedAllocator(new(bufpool.Pool))
		defer pageMem.AssertSize(t, 0)
		opts.PageAllocator = pageMem
	}
	tbl := mustCreate(t, dir, modelDef(model, source), opts)
	defer func() { checkClose(t, tbl) }()
	ref := &refModel{unique: model.IsUnique(), source: source, retention: 10 * 3600e6, keys: map[int64]modelRow{}}
	var log []string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d, model %s, source %v, config %+v: %s\nops:\n%s", seed, model, source, cfg, fmt.Sprintf(format, args...), strings.Join(log, "\n"))
	}
	hour := int64(3600e6)
	randTTL := func() *int64 {
		now := clock.UnixMicro()
		var v int64
		switch rng.IntN(6) {
		case 0:
			return nil
		case 1:
			v = now - rng.Int64N(30*hour) // already expired (or source in the past)
		case 2:
			v = now // exactly at now
			if source {
				v = now - ref.retention
			}
		case 3:
			v = now + 1000*hour // far future
		default:
			v = now + rng.Int64N(20*hour) - 5*hour
		}
		return &v
	}
	for step := 0; step < steps; step++ {
		now := clock.UnixMicro()
		switch op := rng.IntN(20); {
		case op < 8: // write
			n := 1 + rng.IntN(40)
			rows := make([]modelRow, n)
			for i := range rows {
				rows[i] = modelRow{id: rng.Int64N(60) * cfg.keyStride, v: rng.Int64N(1000), ttl: randTTL()}
			}
			log = append(log, fmt.Sprintf("write %d rows at %d", n, now))
			rec := modelBatch(mem, rows, source)
			err := tbl.Write(context.Background(), rec)
			rec.Release()
			if err != nil {
				fail("write: %v", err)
			}
			ref.write(rows)
		case op < 10: // delete
			lim := rng.Int64N(300)
			log = append(log, fmt.Sprintf("delete v < %d at %d", lim, now))
			got, err := tbl.DeleteWhere(context.Background(), Matcher{Filter: query.Compare("v", query.Lt, lim)}, WriteOptions{Now: clock})
			if err != nil {
				fail("delete: %v", err)
			}
			if want := ref.deleteWhere(now, lim); got != want {
				fail("delete affected %d rows, want %d", got, want)
			}
		case op < 12 && ref.unique: // update
			lim, nv := rng.Int64N(300), rng.Int64N(1000)
			log = append(log, fmt.Sprintf("update v = %d where v < %d at %d", nv, lim, now))
			got, err := tbl.UpdateWhere(context.Background(), Matcher{Filter: query.Compare("v", query.Lt, lim)},
				func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
					cols := append([]arrow.Array{}, rec.Columns()...)
					nvArr := schema.ConstArray(mem, arrow.PrimitiveTypes.Int64, schema.IntVal(nv), int(rec.NumRows()))
					defer nvArr.Release()
					cols[1] = nvArr
					return array.NewRecordBatch(rec.Schema(), cols, rec.NumRows()), nil
				}, WriteOptions{Now: clock})
			if err != nil {
				fail("update: %v", err)
			}
			if want := ref.updateWhere(now, lim, nv); got != want {
				fail("update affected %d rows, want %d", got, want)
			}
		case op < 14: // clock moves forward
			d := rng.Int64N(6 * hour)
			clock = clock.Add(time.Duration(d) * time.Microsecond)
			log = append(log, fmt.Sprintf("clock +%dµs", d))
		case op < 17: // compaction
			kind := []CompactionKind{Cumulative, Base, Full, TTLDrop}[rng.IntN(4)]
			log = append(log, fmt.Sprintf("compact %s at %d", kind, now))
			if _, err := tbl.compactAtForTest(kind, clock); err != nil {
				fail("compact %s: %v", kind, err)
			}
		case op < 18 && source: // shorten retention
			if ref.retention > hour {
				ref.retention -= hour
				log = append(log, fmt.Sprintf("retention %d", ref.retention))
				if err := tbl.SetProperties(context.Background(), map[string]string{PropTTL: fmt.Sprint(ref.retention / 1e6)}); err != nil {
					fail("alter: %v", err)
				}
			}
		case op < 19 && memFS != nil && rng.IntN(2) == 0: // crash
			log = append(log, "crash")
			// What the process wrote survives it: every acknowledged write
			// was synced, so a power cut would keep the same.
			crashed := memFS.CrashClone(nil)
			tbl.Close()
			memFS = crashed
			opts.FS = crashed
			var err error
			if tbl, err = Open(dir, opts); err != nil {
				fail("open after a crash: %v", err)
			}
		case op < 19: // reopen
			log = append(log, "reopen")
			checkClose(t, tbl)
			var err error
			if tbl, err = Open(dir, opts); err != nil {
				fail("reopen: %v", err)
			}
		case rng.IntN(2) == 0:
			log = append(log, "flush")
			if err := tbl.Flush(context.Background()); err != nil {
				fail("flush: %v", err)
			}
		default:
		}
		if cfg.auto {
			for {
				did, err := tbl.CompactAuto(context.Background())
				if err != nil {
					fail("auto compaction: %v", err)
				}
				if !did {
					break
				}
			}
		}
		// Compare at the clock and a little later.
		for _, d := range []int64{0, rng.Int64N(12 * hour)} {
			at := clock.UnixMicro() + d
			got, want := tableVisible(t, tbl, at), ref.visible(at)
			if !slices.Equal(got, want) {
				fail("step %d: scan at %d: got %d rows %v\nwant %d rows %v", step, at, len(got), trunc(got), len(want), trunc(want))
			}
			// The reducing path must agree with the rows: count and sums,
			// with and without a filter.
			lim := int64(1000)
			var filter query.Expr
			if rng.IntN(2) == 0 {
				lim = rng.Int64N(1000)
				filter = query.Compare("v", query.Lt, lim)
			}
			tot, err := tbl.Aggregate(context.Background(), query.Request{Now: time.UnixMicro(at), Columns: []string{"v", "id"}, Filter: filter})
			if err != nil {
				fail("aggregate at %d: %v", at, err)
			}
			var rows, sumV, sumID int64
			for _, r := range want {
				var id, v int64
				fmt.Sscanf(r, "%d:%d", &id, &v)
				if v < lim {
					rows, sumV, sumID = rows+1, sumV+v, sumID+id
				}
			}
			if tot.Rows != rows || tot.Sums[0].Count != rows || tot.Sums[0].Int != sumV || tot.Sums[1].Int != sumID {
				fail("step %d: aggregate at %d (v < %d): %+v, want rows %d, sum(v) %d, sum(id) %d", step, at, lim, tot, rows, sumV, sumID)
			}
		}
	}
	if ref.source && tbl.Policy().Mode == ttlcol.SourceMode && tbl.Policy().Retention*1e6 != ref.retention {
		fail("retention %d, want %d", tbl.Policy().Retention, ref.retention/1e6)
	}
}

func trunc(s []string) []string {
	if len(s) > 20 {
		return append(s[:20:20], "...")
	}
	return s
}

// compactAtForTest runs a compaction judging expiry at now.
func (t *Table) compactAtForTest(kind CompactionKind, now time.Time) (bool, error) {
	return t.compactKind(context.Background(), kind, now)
}
