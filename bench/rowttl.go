package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/table"
	"github.com/rowttl/rowttl/ttlcol"
)

// Workloads are the workloads of the harness, in the order they run: the Go
// API's, then the SQL suite's queries (Suite).
var Workloads = append(append([]string(nil), apiWorkloads...), suiteNames()...)

var apiWorkloads = []string{"load", "count", "sum", "groupby", "project", "reclaim", "upsert", "export", "import", "smallwrites", "memtable"}

// ParseWorkloads splits a comma-separated list and checks every name.
func ParseWorkloads(s string) ([]string, error) {
	var out []string
	for _, w := range strings.Split(s, ",") {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		if w == "all" {
			out = append(out, Workloads...)
			continue
		}
		if w == "suite" {
			out = append(out, suiteNames()...)
			continue
		}
		ok := false
		for _, k := range Workloads {
			ok = ok || k == w
		}
		if !ok {
			return nil, fmt.Errorf("unknown workload %q (want some of %s, or suite or all)", w, strings.Join(Workloads, ","))
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil, errors.New("no workload given")
	}
	return out, nil
}

// Engine is the engine name rowttl's results carry.
const Engine = "rowttl"

// Options configure a harness run.
type Options struct {
	// Dir holds the tables; the prepared base tables are cached there
	// between runs (keyed by layout, rows and seed).
	Dir    string
	Rows   int64
	Layout Layout
	Seed   uint64
	// Runs is the number of measured runs (the result is their median);
	// Warmup runs come first and are not counted. Runs 0 means 3; Warmup
	// < 0 means none, 0 means 1.
	Runs, Warmup int
	// Progress receives progress lines; nil discards them.
	Progress io.Writer
	// Mem allocates every Arrow buffer; nil means the Go allocator.
	Mem memory.Allocator
	// PageRows and SegmentRows pass through to table.Options (0: defaults).
	PageRows    int
	SegmentRows int64
	// ZstdLevel passes through to table.Options (0: the engine's default,
	// < 0: no zstd).
	ZstdLevel int
	// Writes is the number of single-row writes of the small-writes
	// workloads; 0 means DefaultSmallWrites.
	Writes int
	// MemtableRows is the number of rows the memtable workload keeps in
	// memtables; 0 means MemtableRows(Rows).
	MemtableRows int64
	// TraceDir, when set, receives an execution trace (runtime/trace) of
	// smallwrites_compaction's first round, its idle writes and the writes
	// during the compaction each a region ("write idle", "write during
	// compaction"): what a slow write waited on (a processor, its log
	// sync, a lock) is in the states of its goroutine there, which a CPU
	// profile does not show.
	TraceDir string
	// SQL opens a session over an open data directory for the suite's
	// queries; the harness opens the directory (with the options its
	// workload needs) and closes it after the session.
	SQL func(ctx context.Context, db *table.DB) (SQLSession, error)
	// Load loads a Parquet file into a table as `rowttl load --format
	// parquet` does and returns the rows loaded (package load sits above
	// this one); nil skips import_load.
	Load func(ctx context.Context, tbl *table.Table, path string) (int64, error)
}

func (o *Options) defaults() {
	if o.Runs <= 0 {
		o.Runs = 3
	}
	if o.Warmup == 0 {
		o.Warmup = 1
	} else if o.Warmup < 0 {
		o.Warmup = 0
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Mem == nil {
		o.Mem = memory.DefaultAllocator
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.Layout == "" {
		o.Layout = Random
	}
}

func (o *Options) logf(format string, args ...any) {
	fmt.Fprintf(o.Progress, "rowttl bench: "+format+"\n", args...)
}

func (o *Options) tableOptions() *table.Options {
	return &table.Options{Allocator: o.Mem, DisableAutoCompaction: true,
		PageRows: o.PageRows, SegmentRows: o.SegmentRows, ZstdLevel: o.ZstdLevel}
}

// generatorVersion is part of the cache key of prepared tables: bump it when
// the generator's output changes.
const generatorVersion = 2 // 2: the events table lives in a data directory, beside users

// BaseDir is where the prepared tables of one data set live.
func (o Options) BaseDir() string {
	o.defaults()
	name := fmt.Sprintf("rowttl-g%d-%s-%d-%d", generatorVersion, o.Layout, o.Rows, o.Seed)
	if o.PageRows != 0 || o.SegmentRows != 0 || o.ZstdLevel != 0 {
		name += fmt.Sprintf("-p%d-s%d-z%d", o.PageRows, o.SegmentRows, o.ZstdLevel)
	}
	return filepath.Join(o.Dir, name)
}

// SQLDir is the prepared data directory: the events and users tables in
// its default database. EventsDir is the prepared events table; LiveDir the
// table holding only its rows alive at Now.
func (o Options) SQLDir() string { return filepath.Join(o.BaseDir(), "db") }
func (o Options) EventsDir() string {
	return filepath.Join(o.SQLDir(), table.DefaultDatabase, "events")
}
func (o Options) LiveDir() string   { return filepath.Join(o.BaseDir(), "live") }
func (o Options) readyFile() string { return filepath.Join(o.BaseDir(), "READY") }

// EventsDefinition is the events table: DUPLICATE KEY(id), direct-mode row
// TTL (the writer supplies __TTL__).
func EventsDefinition(model schema.Model) *table.Definition {
	props := map[string]string{table.PropEnableRowTTL: "true"}
	switch model {
	case schema.UniqueMOW:
		props[table.PropMergeOnWrite] = "true"
	case schema.UniqueMOR:
		props[table.PropMergeOnWrite] = "false"
	}
	return &table.Definition{
		Model: model,
		Schema: schema.Schema{KeyCount: 1, Columns: []schema.Column{
			{Name: ColID, Type: schema.BigIntType},
			{Name: ColEventTime, Type: schema.DatetimeType(6), Nullable: true},
			{Name: ColUserID, Type: schema.BigIntType, Nullable: true},
			{Name: ColAmount, Type: schema.DoubleType, Nullable: true},
			{Name: ColMessage, Type: schema.StringType, Nullable: true},
		}},
		Properties: props,
	}
}

// Prepare makes the events table of the data set and its live-only twin,
// unless a previous run left them complete.
func Prepare(ctx context.Context, o Options) error {
	o.defaults()
	if _, err := os.Stat(o.readyFile()); err == nil {
		o.logf("reusing prepared %s", o.BaseDir())
		return nil
	}
	if err := os.RemoveAll(o.BaseDir()); err != nil {
		return err
	}
	if err := os.MkdirAll(o.BaseDir(), 0o755); err != nil {
		return err
	}
	o.logf("preparing %d %s rows in %s", o.Rows, o.Layout, o.BaseDir())
	db, err := table.OpenDB(o.SQLDir(), o.tableOptions())
	if err != nil {
		return err
	}
	defer db.Close()
	ev, err := db.CreateTable(table.DefaultDatabase, "events", EventsDefinition(schema.Duplicate), false)
	if err != nil {
		return err
	}
	users, err := db.CreateTable(table.DefaultDatabase, "users", UsersDefinition(), false)
	if err != nil {
		return err
	}
	ub := UsersBatches(o.Mem, o.Seed)
	err = users.WriteBatches(ctx, ub, table.WriteOptions{})
	releaseAll(ub)
	if err != nil {
		return err
	}
	live, err := table.Create(o.LiveDir(), EventsDefinition(schema.Duplicate), o.tableOptions())
	if err != nil {
		return err
	}
	defer live.Close()
	began := time.Now()
	step := func(what string) { o.logf("prepare: %s (%.1fs)", what, time.Since(began).Seconds()) }
	step("wrote the users table")
	g := Events(o.Rows, o.Layout, o.Seed)
	batches := g.Batches(o.Mem)
	defer releaseAll(batches)
	step(fmt.Sprintf("generated %d events in %d batches; writing them", o.Rows, len(batches)))
	if err := ev.WriteBatches(ctx, batches, table.WriteOptions{}); err != nil {
		return err
	}
	step("wrote the events table; writing its live-only twin")
	liveBatches := make([]arrow.RecordBatch, 0, len(batches))
	defer func() { releaseAll(liveBatches) }()
	for _, b := range batches {
		lb, err := LiveRows(ctx, o.Mem, b)
		if err != nil {
			return err
		}
		liveBatches = append(liveBatches, lb)
	}
	if err := live.WriteBatches(ctx, liveBatches, table.WriteOptions{}); err != nil {
		return err
	}
	step("wrote the live-only twin")
	if err := db.Close(); err != nil {
		return err
	}
	if err := live.Close(); err != nil {
		return err
	}
	return os.WriteFile(o.readyFile(), nil, 0o644)
}

// LiveRows returns the rows of a generated batch alive at Now.
func LiveRows(ctx context.Context, mem memory.Allocator, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	ttl := rec.Column(5).(*array.Int64)
	n := ttl.Len()
	mask := make([]byte, (n+7)/8)
	var validity []byte
	if ttl.NullN() > 0 {
		validity = ttl.NullBitmapBytes()
	}
	ttlcol.LiveMask(ttl.Int64Values(), validity, ttl.Data().Offset(), Now.UnixMicro(), mask)
	return query.FilterBatch(ctx, mem, rec, mask)
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		if r != nil {
			r.Release()
		}
	}
}

// bytesOnDisk sums the sizes of the regular files under dir.
func bytesOnDisk(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}

// Run runs one workload and returns its results (upsert gives four: the
// writes and the count after them, for merge-on-write and merge-on-read;
// reclaim three: the events table's, then reclaim_mow and reclaim_mor).
// The events table must have been prepared (Prepare) for every workload but
// load and upsert. Peak RSS is VmHWM at the end: run a workload in a fresh
// process, or call ResetPeakRSS first, for it to be the workload's own.
func Run(ctx context.Context, o Options, workload string) ([]Result, error) {
	o.defaults()
	res := Result{Engine: Engine, Workload: workload, Layout: string(o.Layout), Rows: o.Rows}
	var err error
	switch workload {
	case "load":
		err = runLoad(ctx, &o, &res)
	case "count", "sum", "groupby", "project":
		err = runRead(ctx, &o, &res)
	case "reclaim":
		if err = runReclaim(ctx, &o, &res); err != nil {
			break
		}
		res.PeakRSSBytes = PeakRSS()
		rs := []Result{res}
		for _, m := range []schema.Model{schema.UniqueMOW, schema.UniqueMOR} {
			r, err := runReclaimUpserts(ctx, &o, m)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.Workload, err)
			}
			rs = append(rs, r)
		}
		return rs, nil
	case "upsert":
		return runUpserts(ctx, &o)
	case "smallwrites":
		return runSmallWrites(ctx, &o)
	case "memtable":
		rs, err := runMemtable(ctx, &o)
		if err != nil {
			return nil, fmt.Errorf("memtable: %w", err)
		}
		return rs, nil
	case "export":
		err = runExport(ctx, &o, &res)
	case "import":
		if err = runImport(ctx, &o, &res); err != nil || o.Load == nil {
			break
		}
		res.PeakRSSBytes = PeakRSS()
		lr, err := runImportLoad(ctx, &o)
		if err != nil {
			return nil, fmt.Errorf("import_load: %w", err)
		}
		return []Result{res, lr}, nil
	default:
		q, ok := SuiteQuery(workload)
		if !ok {
			err = fmt.Errorf("unknown workload %q", workload)
			break
		}
		err = runQuery(ctx, &o, &res, q)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", workload, err)
	}
	res.PeakRSSBytes = PeakRSS()
	return []Result{res}, nil
}

func runLoad(ctx context.Context, o *Options, res *Result) error {
	o.logf("load: generating %d %s rows", o.Rows, o.Layout)
	batches := Events(o.Rows, o.Layout, o.Seed).Batches(o.Mem)
	defer releaseAll(batches)
	dir := filepath.Join(o.Dir, "rowttl-load")
	var tbl *table.Table
	t := Trial{
		Setup: func() error {
			var err error
			tbl, err = freshEvents(dir, schema.Duplicate, o)
			return err
		},
		Run: func() (string, error) {
			if err := tbl.WriteBatches(ctx, batches, table.WriteOptions{}); err != nil {
				return "", err
			}
			return strconv.FormatInt(o.Rows, 10), nil
		},
		Teardown: func() error {
			if err := tbl.Close(); err != nil {
				return err
			}
			var err error
			res.BytesOnDisk, err = bytesOnDisk(dir)
			return err
		},
	}
	o.logf("load: %d warm-up + %d runs", o.Warmup, o.Runs)
	var err error
	res.Seconds, res.Runs, res.Answer, err = Measure(o.Warmup, o.Runs, &res.CPUSeconds, t)
	res.OpRows = o.Rows
	os.RemoveAll(dir)
	return err
}

// ReadWorkload runs one read workload (count, sum, groupby, project) over
// tbl at Now and returns its answer.
func ReadWorkload(ctx context.Context, tbl *table.Table, workload string) (string, error) {
	switch workload {
	case "count":
		n, err := tbl.Count(ctx, Now, nil)
		return strconv.FormatInt(n, 10), err
	case "sum":
		s, err := SumLive(ctx, tbl)
		return FormatSum(s), err
	case "groupby":
		d, err := GroupByLive(ctx, tbl)
		if err != nil {
			return "", err
		}
		return FormatDigest(d), nil
	case "project":
		p, err := ProjectLive(ctx, tbl)
		return p.String(), err
	}
	return "", fmt.Errorf("not a read workload: %q", workload)
}

// FormatSum renders a sum as the answer of the sum workload: ten
// significant digits, which engines summing in different orders agree on.
func FormatSum(s float64) string { return strconv.FormatFloat(s, 'g', 10, 64) }

// FormatDigest renders a GROUP BY digest as the answer of the groupby
// workload.
func FormatDigest(d GroupDigest) string {
	return fmt.Sprintf("groups=%d total=%s checksum=%016x", d.Groups, FormatSum(d.Total), d.Checksum)
}

// SumLive returns sum(amount) over the rows alive at Now, reduced inside
// the scan (Table.Aggregate): no batch is built.
func SumLive(ctx context.Context, tbl *table.Table) (float64, error) {
	tot, err := tbl.Aggregate(ctx, query.Request{Now: Now, Columns: []string{ColAmount}})
	if err != nil {
		return 0, err
	}
	return tot.Sums[0].Float, nil
}

// GroupByLive computes user_id, sum(amount) over the rows alive at Now
// with the engine's hash aggregation (exec.NewHashAggregate) over the scan,
// and returns the digest of the groups. The scan runs on this goroutine
// and the aggregation on the workers, so the two overlap on two cores.
func GroupByLive(ctx context.Context, tbl *table.Table) (GroupDigest, error) {
	r, err := tbl.Scan(ctx, query.Request{Now: Now, Columns: []string{ColUserID, ColAmount}})
	if err != nil {
		return GroupDigest{}, err
	}
	in := &scanOperator{r: r, schema: exec.Schema{
		{Name: ColUserID, Type: schema.BigIntType}, {Name: ColAmount, Type: schema.DoubleType},
	}}
	env := &exec.Env{Mem: memory.DefaultAllocator}
	agg, err := exec.NewHashAggregate(env, in, []int{0},
		[]exec.Aggregate{{Func: exec.Sum, Arg: 1, Name: "sum(" + ColAmount + ")"}})
	if err != nil {
		return GroupDigest{}, err
	}
	defer agg.Close()
	var d GroupDigest
	for {
		b, err := agg.Next(ctx)
		if err != nil || b == nil {
			return d, err
		}
		keys := b.Column(0).(*array.Int64)
		sums := b.Column(1).(*array.Float64)
		for i := range keys.Len() {
			d.Add(keys.Value(i), sums.Value(i))
		}
		b.Release()
	}
}

// scanOperator streams a table scan as the input of exec operators.
type scanOperator struct {
	r      array.RecordReader
	schema exec.Schema
}

func (s *scanOperator) Schema() exec.Schema { return s.schema }

func (s *scanOperator) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.r == nil || !s.r.Next() {
			if s.r == nil {
				return nil, nil
			}
			return nil, s.r.Err()
		}
		if rec := s.r.RecordBatch(); rec.NumRows() > 0 {
			rec.Retain()
			return rec, nil
		}
	}
}

func (s *scanOperator) Close() {
	if s.r != nil {
		s.r.Release()
		s.r = nil
	}
}

// Projection summarises a projection of every column: rows streamed and
// order-independent sums of id and of message lengths.
type Projection struct {
	Rows, IDSum, MessageBytes int64
}

func (p Projection) String() string {
	return fmt.Sprintf("rows=%d idsum=%d msgbytes=%d", p.Rows, p.IDSum, p.MessageBytes)
}

// Add accounts for one batch of the projection.
func (p *Projection) Add(rec arrow.RecordBatch) {
	p.Rows += rec.NumRows()
	for _, id := range rec.Column(0).(*array.Int64).Int64Values() {
		p.IDSum += id
	}
	switch msg := rec.Column(4).(type) {
	case *array.String:
		if msg.Len() > 0 {
			offs := msg.ValueOffsets()
			p.MessageBytes += int64(offs[len(offs)-1] - offs[0])
		}
	case *array.LargeString:
		if msg.Len() > 0 {
			offs := msg.ValueOffsets()
			p.MessageBytes += offs[len(offs)-1] - offs[0]
		}
	case *array.StringView:
		for i := 0; i < msg.Len(); i++ {
			p.MessageBytes += int64(msg.ValueLen(i))
		}
	}
}

// ProjectLive streams every user column of the rows alive at Now.
func ProjectLive(ctx context.Context, tbl *table.Table) (Projection, error) {
	var p Projection
	r, err := tbl.Scan(ctx, query.Request{Now: Now})
	if err != nil {
		return p, err
	}
	defer r.Release()
	for r.Next() {
		p.Add(r.RecordBatch())
	}
	return p, r.Err()
}

func runRead(ctx context.Context, o *Options, res *Result) error {
	tbl, err := table.Open(o.EventsDir(), o.tableOptions())
	if err != nil {
		return fmt.Errorf("open prepared table (run Prepare first): %w", err)
	}
	defer tbl.Close()
	if res.BytesOnDisk, err = bytesOnDisk(o.EventsDir()); err != nil {
		return err
	}
	res.OpRows = o.Rows
	o.logf("%s: %d warm-up + %d runs", res.Workload, o.Warmup, o.Runs)
	res.Seconds, res.Runs, res.Answer, err = Measure(o.Warmup, o.Runs, &res.CPUSeconds, Trial{
		Run: func() (string, error) { return ReadWorkload(ctx, tbl, res.Workload) },
	})
	return err
}

// cloneTable copies a closed table directory: segment files, which are
// immutable, are hard-linked (copied where links fail), the rest copied.
func cloneTable(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || e.Name() == "LOCK" {
			continue
		}
		s, d := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if strings.HasSuffix(e.Name(), ".seg") && os.Link(s, d) == nil {
			continue
		}
		if err := CopyFile(s, d); err != nil {
			return err
		}
	}
	return nil
}

// CopyFile copies a file; the DuckDB side uses it for its prepared
// databases too.
func CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func runReclaim(ctx context.Context, o *Options, res *Result) error {
	live, err := bytesOnDisk(o.LiveDir())
	if err != nil {
		return fmt.Errorf("live-only table (run Prepare first): %w", err)
	}
	res.LiveOnlyBytes = live
	dir := filepath.Join(o.Dir, "rowttl-reclaim")
	var tbl *table.Table
	var answer string
	t := Trial{
		Setup: func() error {
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
			if err := cloneTable(o.EventsDir(), dir); err != nil {
				return err
			}
			var err error
			if res.BytesBefore, err = bytesOnDisk(dir); err != nil {
				return err
			}
			tbl, err = table.Open(dir, o.tableOptions())
			return err
		},
		Run: func() (string, error) {
			return "", tbl.CompactAt(ctx, table.Full, Now)
		},
		Teardown: func() error {
			st, err := tbl.Stats(ctx, Now)
			if err != nil {
				tbl.Close()
				return err
			}
			answer = fmt.Sprintf("rows_on_disk=%d", st.RowsOnDisk)
			if err := tbl.Close(); err != nil {
				return err
			}
			// Every file of the directory counts, the manifest included,
			// as for the live-only table.
			res.BytesOnDisk, err = bytesOnDisk(dir)
			return err
		},
	}
	o.logf("reclaim: %d warm-up + %d runs", o.Warmup, o.Runs)
	res.Seconds, res.Runs, _, err = Measure(o.Warmup, o.Runs, &res.CPUSeconds, t)
	res.Answer = answer
	res.OpRows = o.Rows
	os.RemoveAll(dir)
	return err
}

// reclaimUpsertsName is the result name of the reclaim of a UNIQUE table.
func reclaimUpsertsName(model schema.Model) string {
	if model == schema.UniqueMOR {
		return "reclaim_mor"
	}
	return "reclaim_mow"
}

// runReclaimUpserts is reclaim on a UNIQUE table fed the upsert workload's
// stream (untimed, once): full compaction at Now of a copy, which must drop
// the superseded versions and the expired rows. The live-only table holds
// the rows alive at Now written once.
func runReclaimUpserts(ctx context.Context, o *Options, model schema.Model) (Result, error) {
	name := reclaimUpsertsName(model)
	res := Result{Engine: Engine, Workload: name, Layout: string(o.Layout), Rows: o.Rows}
	src := filepath.Join(o.Dir, "rowttl-"+name+"-src")
	live := filepath.Join(o.Dir, "rowttl-"+name+"-live")
	dir := filepath.Join(o.Dir, "rowttl-"+name)
	defer os.RemoveAll(src)
	defer os.RemoveAll(live)
	g, writes := Upserts(o.Rows, o.Seed)
	o.logf("%s: writing %d upserts over %d keys in %d writes (untimed)", name, g.Rows, g.KeySpace, writes)
	if err := writeUpserts(ctx, o, src, model, g, writes); err != nil {
		return res, err
	}
	if err := writeLiveOnly(ctx, o, src, live, model); err != nil {
		return res, err
	}
	var err error
	if res.LiveOnlyBytes, err = bytesOnDisk(live); err != nil {
		return res, err
	}
	res.OpRows = g.Rows
	var tbl *table.Table
	var answer string
	t := Trial{
		Setup: func() error {
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
			if err := cloneTable(src, dir); err != nil {
				return err
			}
			var err error
			if res.BytesBefore, err = bytesOnDisk(dir); err != nil {
				return err
			}
			tbl, err = table.Open(dir, o.tableOptions())
			return err
		},
		Run: func() (string, error) { return "", tbl.CompactAt(ctx, table.Full, Now) },
		Teardown: func() error {
			st, err := tbl.Stats(ctx, Now)
			if err != nil {
				tbl.Close()
				return err
			}
			answer = fmt.Sprintf("rows_on_disk=%d", st.RowsOnDisk)
			if err := tbl.Close(); err != nil {
				return err
			}
			res.BytesOnDisk, err = bytesOnDisk(dir)
			return err
		},
	}
	o.logf("%s: %d warm-up + %d runs", name, o.Warmup, o.Runs)
	res.Seconds, res.Runs, _, err = Measure(o.Warmup, o.Runs, &res.CPUSeconds, t)
	res.Answer = answer
	res.PeakRSSBytes = PeakRSS()
	os.RemoveAll(dir)
	return res, err
}

// writeUpserts makes a UNIQUE events table in dir from the upsert stream,
// one version per write.
func writeUpserts(ctx context.Context, o *Options, dir string, model schema.Model, g *Generator, writes int) error {
	tbl, err := freshEvents(dir, model, o)
	if err != nil {
		return err
	}
	for _, wr := range WriteRanges(g.Rows, writes) {
		v := g.WriteBatches(o.Mem, wr)
		err := tbl.WriteBatches(ctx, v, table.WriteOptions{})
		releaseAll(v)
		if err != nil {
			tbl.Close()
			return err
		}
	}
	return tbl.Close()
}

// writeLiveOnly writes the rows of the table in src alive at Now, their
// expirations kept, into a new table in dst as one version.
func writeLiveOnly(ctx context.Context, o *Options, src, dst string, model schema.Model) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	in, err := table.Open(src, o.tableOptions())
	if err != nil {
		return err
	}
	defer in.Close()
	r, err := in.Scan(ctx, query.Request{Now: Now, ShowHidden: true})
	if err != nil {
		return err
	}
	var batches []arrow.RecordBatch
	defer func() { releaseAll(batches) }()
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		batches = append(batches, rec)
	}
	err = r.Err()
	r.Release()
	if err != nil {
		return err
	}
	out, err := table.Create(dst, EventsDefinition(model), o.tableOptions())
	if err != nil {
		return err
	}
	if err := out.WriteBatches(ctx, batches, table.WriteOptions{}); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// freshEvents creates an empty events table of model in dir, in place of
// whatever a run before left there.
func freshEvents(dir string, model schema.Model, o *Options) (*table.Table, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	return table.Create(dir, EventsDefinition(model), o.tableOptions())
}

func runUpserts(ctx context.Context, o *Options) ([]Result, error) {
	g, writes := Upserts(o.Rows, o.Seed)
	o.logf("upsert: %d upserts over %d keys in %d writes, each generated (untimed) just before it is written", g.Rows, g.KeySpace, writes)
	ranges := WriteRanges(g.Rows, writes)
	var out []Result
	for _, m := range []struct {
		model schema.Model
		name  string
	}{{schema.UniqueMOW, "upsert_mow"}, {schema.UniqueMOR, "upsert_mor"}} {
		dir := filepath.Join(o.Dir, "rowttl-"+m.name)
		w := Result{Engine: Engine, Workload: m.name, Layout: string(o.Layout), Rows: o.Rows, OpRows: g.Rows}
		c := Result{Engine: Engine, Workload: m.name + "_count", Layout: string(o.Layout), Rows: o.Rows, OpRows: g.Rows}
		var counts, countCPU []float64
		var tbl *table.Table
		var untimed Untimed
		t := Trial{
			Untimed: &untimed,
			Setup: func() error {
				var err error
				tbl, err = freshEvents(dir, m.model, o)
				return err
			},
			Run: func() (string, error) {
				for _, wr := range ranges {
					var v []arrow.RecordBatch
					untimed.Do(func() { v = g.WriteBatches(o.Mem, wr) })
					err := tbl.WriteBatches(ctx, v, table.WriteOptions{})
					releaseAll(v)
					if err != nil {
						return "", err
					}
				}
				return fmt.Sprintf("versions=%d", len(ranges)), nil
			},
			Teardown: func() error {
				// The count after the upserts is timed on its own.
				var cpu float64
				sec, _, a, err := Measure(0, 1, &cpu, Trial{Run: func() (string, error) {
					n, err := tbl.Count(ctx, Now, nil)
					return strconv.FormatInt(n, 10), err
				}})
				if err != nil {
					tbl.Close()
					return err
				}
				counts = append(counts, sec)
				countCPU = append(countCPU, cpu)
				c.Answer = a
				if err := tbl.Close(); err != nil {
					return err
				}
				w.BytesOnDisk, err = bytesOnDisk(dir)
				c.BytesOnDisk = w.BytesOnDisk
				return err
			},
		}
		o.logf("%s: %d warm-up + %d runs", m.name, o.Warmup, o.Runs)
		var err error
		w.Seconds, w.Runs, w.Answer, err = Measure(o.Warmup, o.Runs, &w.CPUSeconds, t)
		os.RemoveAll(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.name, err)
		}
		c.Runs = counts[o.Warmup:]
		c.Seconds = Median(c.Runs)
		c.CPUSeconds = Median(countCPU[o.Warmup:])
		rss := PeakRSS()
		w.PeakRSSBytes, c.PeakRSSBytes = rss, rss
		out = append(out, w, c)
	}
	return out, nil
}
