package load

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// startServer serves e's data directory on a loopback port until the test
// ends, and returns its base URL.
func startServer(t *testing.T, e *env, o ServerOptions) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if o.Allocator == nil {
		o.Allocator = e.mem
	}
	srv := NewServer(e.db, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// put sends a stream load with Go's client.
func put(t *testing.T, url, user, pass string, hdr map[string]string, body string) (int, *Result) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	var res Result
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("answer %q: %v", data, err)
	}
	return resp.StatusCode, &res
}

func TestServerAuthAndHeaders(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT, ts DATETIME) DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true")`)
	base := startServer(t, e, ServerOptions{User: "root", Password: "secret"})
	url := base + "/api/default/t/_stream_load"

	for _, c := range []struct{ user, pass string }{{"", ""}, {"root", "wrong"}, {"other", "secret"}} {
		if code, _ := put(t, url, c.user, c.pass, nil, "1\t2026-01-01 00:00:00\n"); code != http.StatusUnauthorized {
			t.Errorf("user %q password %q: HTTP %d, want 401", c.user, c.pass, code)
		}
	}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/metrics"); code != http.StatusUnauthorized {
		t.Errorf("metrics without credentials: HTTP %d", code)
	}
	// Health checks carry no credentials; the answer says nothing more.
	if code, body := get("/api/health"); code != http.StatusOK || body != "{\"status\": \"OK\"}\n" {
		t.Errorf("health without credentials: HTTP %d %q", code, body)
	}
	for _, p := range []string{"/api/health/", "/api/health/../default/t/_stream_load", "/api/healthz", "/"} {
		if code, _ := get(p); code != http.StatusUnauthorized {
			t.Errorf("%s without credentials: HTTP %d, want 401", p, code)
		}
	}

	hdr := map[string]string{"label": "h1", "column_separator": ",", "timezone": "+08:00",
		"columns": "id, exp, __DORIS_TTL_COL__ = cast(exp as datetime(6))"}
	code, res := put(t, url, "root", "secret", hdr, "1,2026-01-02 08:00:00\n2,2026-01-02 08:00:00\n")
	if code != http.StatusOK || res.Status != StatusSuccess || res.NumberLoadedRows != 2 || res.Label != "h1" {
		t.Fatalf("load: HTTP %d %+v", code, res)
	}
	got := e.exec(`SET show_hidden_columns = true`, `SELECT DISTINCT __TTL__ FROM t`)
	if got != "__TTL__\n1767312000000000\n" {
		t.Fatalf("__TTL__: %q", got)
	}
	_, res = put(t, url, "root", "secret", hdr, "3,2026-01-02 08:00:00\n")
	if res.Status != StatusLabelExists {
		t.Fatalf("same label: %+v", res)
	}
	_, res = put(t, base+"/api/default/nope/_stream_load", "root", "secret", nil, "1\n")
	if res.Status != StatusFail || !strings.Contains(res.Message, "default.nope") {
		t.Fatalf("unknown table: %+v", res)
	}
	_, res = put(t, url, "root", "secret", map[string]string{"format": "json"}, "{}")
	if res.Status != StatusFail {
		t.Fatalf("json format: %+v", res)
	}
	_, res = put(t, url, "root", "secret", map[string]string{"format": "csv_with_names", "max_filter_ratio": "0.5"}, "id\tts\n5\t2026-01-01 00:00:00\n6\tx\n")
	if res.Status != StatusSuccess || res.NumberTotalRows != 2 || res.NumberLoadedRows != 1 {
		t.Fatalf("csv_with_names: %+v", res)
	}
}

// TestServerCurl loads a file with curl exactly as Doris users do.
func TestServerCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed; this test needs it")
	}
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT, name STRING, exp DATETIME(6)) DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true")`)
	base := startServer(t, e, ServerOptions{User: "user", Password: "pass"})
	file := filepath.Join(t.TempDir(), "data.csv")
	var b strings.Builder
	for i := 0; i < 1000; i++ {
		b.WriteString("1,a,2026-06-01 00:00:00\n")
	}
	b.WriteString("2,b,2025-06-01 00:00:00\n") // already expired: loaded, invisible
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(label string) *Result {
		t.Helper()
		out, err := exec.Command(curl, "-sS", "--location-trusted", "-u", "user:pass",
			"-H", "label:"+label, "-H", "column_separator:,", "-H", "Expect: 100-continue",
			"-H", "columns: id, name, exp, __DORIS_TTL_COL__=exp",
			"-T", file, base+"/api/default/t/_stream_load").Output()
		if err != nil {
			t.Fatalf("curl: %v", err)
		}
		var res Result
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("curl printed %q: %v", out, err)
		}
		return &res
	}
	res := run("curl1")
	if res.Status != StatusSuccess || res.NumberTotalRows != 1001 || res.NumberLoadedRows != 1001 || res.LoadBytes != int64(b.Len()) {
		t.Fatalf("curl load: %+v", res)
	}
	if res := run("curl1"); res.Status != StatusLabelExists {
		t.Fatalf("curl load again: %+v", res)
	}
	if got := e.exec(`SELECT count(*) FROM t`); got != "count(*)\n1000\n" {
		t.Fatalf("count: %q", got)
	}
	out, err := exec.Command(curl, "-s", "-o", "/dev/null", "-w", "%{http_code}", "-u", "user:nope", "-T", file,
		base+"/api/default/t/_stream_load").Output()
	if err != nil || string(out) != "401" {
		t.Fatalf("curl with a wrong password: %q, %v", out, err)
	}
}

// TestServerMetrics: /metrics parses as Prometheus text and shows the
// table's visible rows and the loads.
func TestServerMetrics(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT, exp DATETIME) DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true")`)
	pool := NewWorkers(3)
	release, err := pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	base := startServer(t, e, ServerOptions{Workers: pool})
	url := base + "/api/default/t/_stream_load"
	hdr := map[string]string{"columns": "id, exp, __TTL__ = cast(exp as datetime)"}
	// Two rows live far in the future, one already expired.
	if _, res := put(t, url, "", "", hdr, "1\t2100-01-01 00:00:00\n2\t2100-01-01 00:00:00\n3\t2000-01-01 00:00:00\n"); res.Status != StatusSuccess {
		t.Fatalf("load: %+v", res)
	}
	if _, res := put(t, url, "", "", nil, "x\n"); res.Status != StatusFail {
		t.Fatalf("bad load: %+v", res)
	}
	if _, res := put(t, url, "", "", hdr, "4\t2100-01-01 00:00:00\n"); res.Status != StatusSuccess {
		t.Fatalf("second load: %+v", res)
	}
	// A full compaction at the wall clock reclaims the expired row and
	// merges both rowsets.
	e.exec(`ADMIN COMPACT TABLE t WHERE type = 'full'`)
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	value := func(name string, labels map[string]string) float64 {
		t.Helper()
		f := fams[name]
		if f == nil {
			t.Fatalf("no metric %s", name)
		}
		for _, m := range f.GetMetric() {
			if matches(m, labels) {
				switch {
				case m.GetGauge() != nil:
					return m.GetGauge().GetValue()
				case m.GetCounter() != nil:
					return m.GetCounter().GetValue()
				}
			}
		}
		t.Fatalf("no %s%v", name, labels)
		return 0
	}
	tl := map[string]string{"db": "default", "table": "t"}
	for name, want := range map[string]float64{
		"rowttl_table_up":                   1,
		"rowttl_table_visible_rows":         3,
		"rowttl_table_rows_on_disk":         3,
		"rowttl_table_expired_rows_on_disk": 0,
		"rowttl_table_reclaimed_rows_total": 1,
		"rowttl_table_rowsets":              1,
		"rowttl_load_rows_total":            4,
		"rowttl_load_failures_total":        1,
		"rowttl_table_memtable_rows":        0,
		"rowttl_table_write_stalls_total":   0,
	} {
		if got := value(name, tl); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	// The pool's slots, the one held above, and nobody waiting.
	for name, want := range map[string]float64{"rowttl_load_workers": 3, "rowttl_load_workers_busy": 1, "rowttl_load_workers_waiting": 0} {
		if got := value(name, nil); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := value("rowttl_loads_total", map[string]string{"db": "default", "table": "t", "status": "Success"}); got != 2 {
		t.Errorf("successful loads %v", got)
	}
	if got := value("rowttl_table_compactions_total", map[string]string{"db": "default", "table": "t", "kind": "full"}); got != 1 {
		t.Errorf("full compactions %v", got)
	}
	if fams["rowttl_load_duration_seconds"] == nil || fams["go_goroutines"] == nil {
		t.Error("duration histogram or Go collector missing")
	}
}

func matches(m *dto.Metric, labels map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := labels[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(labels)
}

// TestServerStalledBody: a load whose body stops arriving (a huge
// Content-Length, one line, then silence) holds up no other load into the
// table, and fails after the body timeout writing nothing.
func TestServerStalledBody(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT, v STRING) UNIQUE KEY(id) PROPERTIES ("enable_unique_key_merge_on_write" = "true")`)
	const timeout = 1500 * time.Millisecond
	base := startServer(t, e, ServerOptions{BodyTimeout: timeout})
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "PUT /api/default/t/_stream_load HTTP/1.1\r\nHost: x\r\nlabel: stalled\r\nContent-Length: 2147483648\r\n\r\n1\tstalled\n")
	type answer struct {
		res Result
		err error
		at  time.Duration
	}
	stalled := make(chan answer, 1)
	go func() {
		var a answer
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err == nil {
			a.err = json.NewDecoder(resp.Body).Decode(&a.res)
			resp.Body.Close()
		} else {
			a.err = err
		}
		a.at = time.Since(start)
		stalled <- a
	}()
	// Once the stalled load has read its line, another load goes through
	// at once, not when the stalled one gives up.
	time.Sleep(100 * time.Millisecond)
	if _, res := put(t, base+"/api/default/t/_stream_load", "", "", map[string]string{"label": "other"}, "2\tother\n"); res.Status != StatusSuccess {
		t.Fatalf("a load beside the stalled one: %+v", res)
	}
	select {
	case a := <-stalled:
		t.Fatalf("the second load waited for the stalled one to fail (after %v: %+v, %v)", a.at, a.res, a.err)
	default:
	}
	a := <-stalled
	if a.err != nil {
		t.Fatal(a.err)
	}
	if a.res.Status != StatusFail || a.res.NumberLoadedRows != 0 || !strings.Contains(a.res.Message, "the request body sent nothing for 1.5s") {
		t.Fatalf("stalled load: %+v", a.res)
	}
	if a.at < timeout {
		t.Errorf("the stalled load failed after %v, before its timeout", a.at)
	}
	if got := e.exec(`SELECT id, v FROM t ORDER BY id`); got != "id\tv\n2\tother\n" {
		t.Fatalf("rows: %q", got)
	}
	if e.table("t").HasLabel("stalled") {
		t.Error("the stalled load's label was applied")
	}
	// The label is still free.
	if _, res := put(t, base+"/api/default/t/_stream_load", "", "", map[string]string{"label": "stalled"}, "1\tagain\n"); res.Status != StatusSuccess {
		t.Fatalf("the stalled load's label, reused: %+v", res)
	}
}

// TestServerShutdownCutsStalledBody: when the server shuts down, a load
// whose body is silent fails within about a second instead of holding the
// shutdown for its whole timeout, and writes nothing.
func TestServerShutdownCutsStalledBody(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT, v STRING) DUPLICATE KEY(id)`)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(e.db, ServerOptions{Allocator: e.mem, BodyTimeout: time.Minute, ShutdownTimeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT /api/default/t/_stream_load HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n1\tstalled\n")
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	cancel()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	var res Result
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if res.Status != StatusFail || !strings.Contains(res.Message, "while the server shut down") {
		t.Fatalf("stalled load at shutdown: %+v", res)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the shutdown waited for the stalled load")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	if got := e.exec(`SELECT count(*) FROM t`); got != "count(*)\n0\n" {
		t.Fatalf("rows: %q", got)
	}
}
