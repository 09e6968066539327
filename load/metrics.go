package load

import (
	"context"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rowttl/rowttl/table"
)

// Metrics are what GET /metrics shows, in the Prometheus text format:
//
//   - per table (labels db, table), read from table.Stats at each scrape:
//     rowttl_table_rowsets, _rows_on_disk, _bytes_on_disk, _visible_rows,
//     _live_bytes, _expired_rows_on_disk, _expired_bytes_on_disk,
//     _oldest_expiration_seconds, _reclaimed_rows_total,
//     _reclaimed_bytes_total, _ingested_bytes_total,
//     _compacted_bytes_total, _write_amplification,
//     _reclaim_deadline_seconds, _reclaim_behind, _reclaim_behind_seconds,
//     _compactions_total{kind}, _compaction_triggers_total{trigger},
//     _memtables, _memtable_rows, _memtable_bytes, _wal_bytes,
//     _flushes_total, _write_stalls_total, and
//     rowttl_table_up (0 when the table could not be opened or measured);
//   - per table, counted by this process's loads: rowttl_loads_total,
//     rowttl_load_failures_total, rowttl_load_rows_total (loaded),
//     rowttl_load_filtered_rows_total, rowttl_load_bytes_total and the
//     histogram rowttl_load_duration_seconds;
//   - the server's load pool (Workers): rowttl_load_workers (its slots),
//     rowttl_load_workers_busy (held) and rowttl_load_workers_waiting
//     (goroutines of loads waiting for a slot);
//   - the Go runtime and process collectors.
type Metrics struct {
	reg *prometheus.Registry

	loads    *prometheus.CounterVec
	failures *prometheus.CounterVec
	rows     *prometheus.CounterVec
	filtered *prometheus.CounterVec
	bytes    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics registers the metrics of db's tables and of loads.
func NewMetrics(db *table.DB) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	tl := []string{"db", "table"}
	m.loads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rowttl_loads_total", Help: "Loads answered, by status."}, append(tl, "status"))
	m.failures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rowttl_load_failures_total", Help: "Loads that failed (Fail; a used label is not a failure)."}, tl)
	m.rows = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rowttl_load_rows_total", Help: "Rows written by successful loads."}, tl)
	m.filtered = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rowttl_load_filtered_rows_total", Help: "Rows filtered (skipped as bad) by successful loads."}, tl)
	m.bytes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rowttl_load_bytes_total", Help: "Input bytes read by loads, failed ones included."}, tl)
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "rowttl_load_duration_seconds", Help: "Time loads took, from the request to the answer.",
		Buckets: prometheus.ExponentialBuckets(0.005, 4, 10),
	}, tl)
	m.reg.MustRegister(m.loads, m.failures, m.rows, m.filtered, m.bytes, m.duration,
		&tableCollector{db: db},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// watchWorkers adds the gauges of a load pool.
func (m *Metrics) watchWorkers(w *Workers) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rowttl_load_workers", Help: "Slots of the pool the loads compute in."},
			func() float64 { return float64(w.Slots()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rowttl_load_workers_busy", Help: "Slots of the load pool held now."},
			func() float64 { return float64(w.Busy()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rowttl_load_workers_waiting", Help: "Goroutines of loads waiting for a slot of the pool now."},
			func() float64 { return float64(w.Waiting()) }))
}

// Registry returns the registry the metrics are in.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Observe counts a load's answer.
func (m *Metrics) Observe(db, tbl string, r *Result, took time.Duration) {
	m.loads.WithLabelValues(db, tbl, r.Status).Inc()
	m.bytes.WithLabelValues(db, tbl).Add(float64(r.LoadBytes))
	m.duration.WithLabelValues(db, tbl).Observe(took.Seconds())
	switch r.Status {
	case StatusSuccess:
		m.rows.WithLabelValues(db, tbl).Add(float64(r.NumberLoadedRows))
		m.filtered.WithLabelValues(db, tbl).Add(float64(r.NumberFilteredRows))
	case StatusFail:
		m.failures.WithLabelValues(db, tbl).Inc()
	}
}

// tableCollector reads table.Stats of every table at each scrape.
type tableCollector struct {
	db *table.DB
}

func desc(name, help string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append([]string{"db", "table"}, extra...), nil)
}

var (
	descUp              = desc("rowttl_table_up", "1 when the table's statistics were read at this scrape, 0 when it could not be opened or measured.")
	descRowsets         = desc("rowttl_table_rowsets", "Live rowsets.")
	descRowsOnDisk      = desc("rowttl_table_rows_on_disk", "Physical rows in live data files (superseded, deleted and expired ones included).")
	descBytesOnDisk     = desc("rowttl_table_bytes_on_disk", "Bytes of live data files.")
	descVisibleRows     = desc("rowttl_table_visible_rows", "Rows count(*) returns now.")
	descLiveBytes       = desc("rowttl_table_live_bytes", "Estimated bytes of the visible rows.")
	descExpiredRows     = desc("rowttl_table_expired_rows_on_disk", "Physical rows whose expiration has passed, not yet reclaimed.")
	descExpiredBytes    = desc("rowttl_table_expired_bytes_on_disk", "Estimated bytes of the expired rows on disk.")
	descOldest          = desc("rowttl_table_oldest_expiration_seconds", "Expiration (Unix seconds) of the oldest expired row still on disk; 0 when none.")
	descReclaimedRows   = desc("rowttl_table_reclaimed_rows_total", "Rows reclaimed by compactions.")
	descReclaimedBytes  = desc("rowttl_table_reclaimed_bytes_total", "Bytes reclaimed by compactions.")
	descIngestedBytes   = desc("rowttl_table_ingested_bytes_total", "Bytes written by writes and loads.")
	descCompactedBytes  = desc("rowttl_table_compacted_bytes_total", "Bytes written by compactions.")
	descWriteAmp        = desc("rowttl_table_write_amplification", "Bytes written by compactions per byte ingested.")
	descDeadline        = desc("rowttl_table_reclaim_deadline_seconds", "The table's rowttl.reclaim_deadline; 0 when none.")
	descBehind          = desc("rowttl_table_reclaim_behind", "1 when an expired row has stayed on disk longer than the reclaim deadline.")
	descBehindBy        = desc("rowttl_table_reclaim_behind_seconds", "How far reclamation is behind the deadline.")
	descCompactions     = desc("rowttl_table_compactions_total", "Compactions run, by kind.", "kind")
	descCompactTriggers = desc("rowttl_table_compaction_triggers_total", "Compactions run, by what started them.", "trigger")
	descMemtables       = desc("rowttl_table_memtables", "Memtables holding small writes not yet flushed (active and frozen).")
	descMemtableRows    = desc("rowttl_table_memtable_rows", "Rows in memtables.")
	descMemtableBytes   = desc("rowttl_table_memtable_bytes", "Bytes of the memtables.")
	descWALBytes        = desc("rowttl_table_wal_bytes", "Bytes of the write-ahead log segments kept.")
	descFlushes         = desc("rowttl_table_flushes_total", "Memtable flushes since the table was opened.")
	descWriteStalls     = desc("rowttl_table_write_stalls_total", "Writes that waited because memtable flushes fell behind, since the table was opened.")
)

func (c *tableCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUp, descRowsets, descRowsOnDisk, descBytesOnDisk, descVisibleRows,
		descLiveBytes, descExpiredRows, descExpiredBytes, descOldest, descReclaimedRows, descReclaimedBytes,
		descIngestedBytes, descCompactedBytes, descWriteAmp, descDeadline, descBehind, descBehindBy,
		descCompactions, descCompactTriggers, descMemtables, descMemtableRows, descMemtableBytes, descWALBytes,
		descFlushes, descWriteStalls} {
		ch <- d
	}
}

// scrapeTimeout bounds the statistics of one scrape.
const scrapeTimeout = 30 * time.Second

func (c *tableCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	now := time.Now()
	dbs, err := c.db.Databases()
	if err != nil {
		return
	}
	for _, d := range dbs {
		names, err := c.db.Tables(d)
		if err != nil {
			continue
		}
		for _, n := range names {
			c.collectTable(ctx, ch, d, n, now)
		}
	}
}

func (c *tableCollector) collectTable(ctx context.Context, ch chan<- prometheus.Metric, d, n string, now time.Time) {
	gauge := func(desc *prometheus.Desc, v float64, extra ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, append([]string{d, n}, extra...)...)
	}
	counter := func(desc *prometheus.Desc, v float64, extra ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v, append([]string{d, n}, extra...)...)
	}
	tbl, err := c.db.Table(d, n)
	if err != nil {
		gauge(descUp, 0)
		return
	}
	st, err := tbl.Stats(ctx, now)
	if err != nil {
		gauge(descUp, 0)
		return
	}
	gauge(descUp, 1)
	gauge(descRowsets, float64(st.Rowsets))
	gauge(descRowsOnDisk, float64(st.RowsOnDisk))
	gauge(descBytesOnDisk, float64(st.BytesOnDisk))
	gauge(descVisibleRows, float64(st.VisibleRows))
	gauge(descLiveBytes, float64(st.LiveBytes))
	gauge(descExpiredRows, float64(st.ExpiredRowsOnDisk))
	gauge(descExpiredBytes, float64(st.ExpiredBytesOnDisk))
	gauge(descOldest, float64(st.OldestExpiration)/1e6)
	counter(descReclaimedRows, float64(st.ReclaimedRows))
	counter(descReclaimedBytes, float64(st.ReclaimedBytes))
	counter(descIngestedBytes, float64(st.IngestedBytes))
	counter(descCompactedBytes, float64(st.CompactedBytes))
	gauge(descWriteAmp, st.WriteAmplification())
	gauge(descDeadline, st.ReclaimDeadline.Seconds())
	behind := 0.0
	if st.Behind {
		behind = 1
	}
	gauge(descBehind, behind)
	gauge(descBehindBy, st.BehindBy.Seconds())
	gauge(descMemtables, float64(st.Memtables))
	gauge(descMemtableRows, float64(st.MemtableRows))
	gauge(descMemtableBytes, float64(st.MemtableBytes))
	gauge(descWALBytes, float64(st.WALBytes))
	counter(descFlushes, float64(st.Flushes))
	counter(descWriteStalls, float64(st.WriteStalls))
	for _, k := range sortedKeys(st.Compactions) {
		counter(descCompactions, float64(st.Compactions[k]), k)
	}
	for _, k := range sortedKeys(st.Triggers) {
		counter(descCompactTriggers, float64(st.Triggers[k]), k)
	}
}

func sortedKeys(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
