package mysql

import "github.com/prometheus/client_golang/prometheus"

// metrics are the front end's part of /metrics:
// rowttl_mysql_connections_total, rowttl_mysql_connections_open,
// rowttl_mysql_connections_refused_total (past MaxConnections),
// rowttl_mysql_login_failures_total, rowttl_mysql_queries_total{outcome}
// (ok, error, cancelled) and the histogram
// rowttl_mysql_query_duration_seconds.
type metrics struct {
	connections   prometheus.Counter
	open          prometheus.Gauge
	refused       prometheus.Counter
	loginFailures prometheus.Counter
	queries       *prometheus.CounterVec
	duration      prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		connections:   prometheus.NewCounter(prometheus.CounterOpts{Name: "rowttl_mysql_connections_total", Help: "MySQL-protocol connections that logged in."}),
		open:          prometheus.NewGauge(prometheus.GaugeOpts{Name: "rowttl_mysql_connections_open", Help: "MySQL-protocol connections open now."}),
		refused:       prometheus.NewCounter(prometheus.CounterOpts{Name: "rowttl_mysql_connections_refused_total", Help: "MySQL-protocol connections refused by the connection limit (error 1040)."}),
		loginFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "rowttl_mysql_login_failures_total", Help: "MySQL-protocol logins refused (error 1045)."}),
		queries:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rowttl_mysql_queries_total", Help: "MySQL-protocol statements run, by outcome (ok, error, cancelled)."}, []string{"outcome"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "rowttl_mysql_query_duration_seconds", Help: "Time MySQL-protocol statements took, from the command to its last row.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}),
	}
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	reg.MustRegister(m.connections, m.open, m.refused, m.loginFailures, m.queries, m.duration)
	return m
}
