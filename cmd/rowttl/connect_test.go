package main

import (
	"bufio"
	"io"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startServeMySQL runs `rowttl serve` with user u/p in a child process and
// returns its HTTP and MySQL addresses and a function that stops it.
func startServeMySQL(t *testing.T, dir string) (httpAddr, mysqlAddr string, stop func() error) {
	t.Helper()
	cmd := childCommand("serve", "--dir", dir, "--listen", "127.0.0.1:0", "--mysql-listen", "127.0.0.1:0", "--user", "u", "--password", "p")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	re := regexp.MustCompile(`on http://(127\.0\.0\.1:\d+) and mysql://(127\.0\.0\.1:\d+)`)
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("serve ended before listening")
			}
			if m := re.FindStringSubmatch(l); m != nil {
				return m[1], m[2], func() error {
					cmd.Process.Signal(syscall.SIGTERM)
					for range lines {
					}
					return cmd.Wait()
				}
			}
		case <-timeout:
			t.Fatal("serve did not say where it listens")
		}
	}
}

// TestSQLConnect runs `rowttl sql --connect` against a serving child
// process: the same output as the local shell (BOOLEAN as 1/0), errors as
// ERROR lines and exit status 1, a wrong password refused; `load` and
// writing `sql` on the served directory say which process holds it and
// what to use instead.
func TestSQLConnect(t *testing.T) {
	dir := t.TempDir()
	httpAddr, addr, stop := startServeMySQL(t, dir)
	t.Setenv("ROWTTL_PASSWORD", "p")
	script := `CREATE TABLE t (id INT, s STRING, ok BOOLEAN) DUPLICATE KEY(id);
INSERT INTO t VALUES (1, 'a	b', true), (2, NULL, false);
SELECT * FROM t ORDER BY id;
SELECT * FROM t WHERE id > 5;
SELECT * FROM nope;
SHOW CREATE TABLE t;`
	out, err := runCmd(t, "", "--connect", addr, "-u", "u", "-e", script)
	if err == nil || !strings.Contains(err.Error(), "1 statement(s) failed") {
		t.Errorf("exit: %v", err)
	}
	want := "id\ts\tok\n1\ta\\tb\t1\n2\tNULL\t0\n" +
		"id\ts\tok\n" +
		"ERROR: Unknown table 'default.nope'\n" +
		"Table\tCreate Table\nt\tCREATE TABLE `t` (\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("output:\n%s\nwant it to start with:\n%s", out, want)
	}
	t.Setenv("ROWTTL_PASSWORD", "wrong")
	if _, err := runCmd(t, "", "--connect", addr, "-u", "u", "-e", "SELECT 1"); err == nil || !strings.Contains(err.Error(), "Error 1045") {
		t.Errorf("wrong password: %v", err)
	}
	_, err = runCmd(t, "", "--dir", dir, "-e", "INSERT INTO t VALUES (3, 'x', true)")
	if err == nil || !strings.Contains(err.Error(), "is in use by process") || !strings.Contains(err.Error(), "rowttl sql --connect") {
		t.Errorf("sql on a served directory: %v", err)
	}
	_, _, err = runLoadCmd(t, "3,x,1\n", "--dir", dir, "--table", "t", "-")
	if err == nil || !strings.Contains(err.Error(), "is in use by process") || !strings.Contains(err.Error(), "/api/default/t/_stream_load") {
		t.Errorf("load on a served directory: %v", err)
	}
	// The MySQL side's metrics are in serve's /metrics.
	req, _ := http.NewRequest(http.MethodGet, "http://"+httpAddr+"/metrics", nil)
	req.SetBasicAuth("u", "p")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, m := range []string{`rowttl_mysql_queries_total{outcome="error"} 1`, "rowttl_mysql_login_failures_total 1", "rowttl_mysql_query_duration_seconds_count"} {
		if !strings.Contains(string(metrics), m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
	if out := sqlIn(t, dir, "SELECT count(*) FROM t"); out != "count(*)\n2\n" {
		t.Errorf("count after serve: %q", out)
	}
}
