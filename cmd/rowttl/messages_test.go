package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/load"
	"github.com/rowttl/rowttl/table"
)

// TestMessagesCarryNoSentinelText runs failing statements and loads through
// every surface a person reads (script mode, the load command's JSON and
// error, Stream Load over HTTP) and fails if a message shows a sentinel's
// internal text ("rowttl: not found" and the like): users read the
// Doris-like message alone, Go callers test the sentinel with errors.Is.
func TestMessagesCarryNoSentinelText(t *testing.T) {
	dir := t.TempDir()
	sqlIn(t, dir, `CREATE TABLE t (id BIGINT NOT NULL, d DATETIME(6), s VARCHAR(3)) DUPLICATE KEY(id);
		INSERT INTO t WITH LABEL l1 VALUES (1, NULL, 'a')`)
	failing := []string{
		"SELECT * FROM nope",
		"SELECT nope FROM t",
		"INSERT INTO t VALUES ('abc', NULL, 'a')",
		"INSERT INTO t VALUES (NULL, NULL, 'a')",
		"INSERT INTO t WITH LABEL l1 VALUES (2, NULL, 'b')",
		"USE nodb",
		"DROP TABLE nope",
		"DROP DATABASE nodb",
		"CREATE TABLE t (id INT) DUPLICATE KEY(id)",
		"CREATE DATABASE default",
		"CREATE TABLE bad (id INT) DUPLICATE KEY(id) PROPERTIES ('function_column.ttl' = '1 day')",
		"CREATE TABLE bad (id INT, d DATE) DUPLICATE KEY(id) PROPERTIES ('function_column.enable_row_ttl' = 'true', 'function_column.ttl_col' = 'd', 'function_column.ttl' = '1 fortnight', 'function_column.ttl_time_zone' = 'UTC')",
		"CREATE TABLE bad (__TTL__ INT) DUPLICATE KEY(__TTL__)",
		"CREATE TABLE `1bad` (id INT) DUPLICATE KEY(id)",
		"ALTER TABLE t DROP COLUMN nope",
		"SELECT 1 +",
		"SELECT CAST('x' AS BIGINT) FROM t",
		"DESC nope",
		"SHOW CREATE TABLE nodb.t",
	}
	script := strings.Join(failing, ";\n") + ";"
	out, err := runCmd(t, "", "--dir", dir, "-e", script)
	var sf *statementsFailed
	if !errors.As(err, &sf) {
		t.Fatalf("script: %v\n%s", err, out)
	}
	errorLines := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "ERROR: ") {
			errorLines++
		}
		if strings.Contains(line, "rowttl:") {
			t.Errorf("script output shows a sentinel's text: %s", line)
		}
	}
	if errorLines < len(failing)-1 { // the CAST may yield NULL rather than fail
		t.Fatalf("%d ERROR lines for %d failing statements:\n%s", errorLines, len(failing), out)
	}

	loads := [][]string{
		{"--table", "nope"},
		{"--table", "nodb.t"},
		{"--table", "t", "--columns", "id, x = nope"},
		{"--table", "t", "--max-filter-ratio", "2"},
		{"--table", "t", "--label", "l1"},
		{"--table", "t", "--timezone", "Mars/Olympus"},
		{"--table", "t", "--format", "parquet"},
	}
	for _, args := range loads {
		res, _, err := runLoadCmd(t, "x\t\\N\tabcdef\n", append(append([]string{"--dir", dir}, args...), "-")...)
		if err == nil {
			t.Errorf("load %v succeeded", args)
			continue
		}
		if strings.Contains(err.Error(), "rowttl:") {
			t.Errorf("load %v error shows a sentinel's text: %v", args, err)
		}
		if strings.Contains(res.Message, "rowttl:") || strings.Contains(res.FirstErrorMsg, "rowttl:") {
			t.Errorf("load %v JSON shows a sentinel's text: %+v", args, res)
		}
	}

	db, err := table.OpenDB(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv := httptest.NewServer(load.NewServer(db, load.ServerOptions{}).Handler())
	defer srv.Close()
	for _, tc := range []struct{ path, header, value string }{
		{"/api/default/nope/_stream_load", "", ""},
		{"/api/nodb/t/_stream_load", "", ""},
		{"/api/default/t/_stream_load", "columns", "id, x = nope"},
		{"/api/default/t/_stream_load", "max_filter_ratio", "-1"},
		{"/api/default/t/_stream_load", "label", "l1"},
		{"/api/default/t/_stream_load", "strict_mode", "maybe"},
		{"/api/default/t/_stream_load", "column_separator", ""},
	} {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+tc.path, strings.NewReader("x\t\\N\tabcdef\n"))
		if tc.header != "" {
			req.Header.Set(tc.header, tc.value)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var res load.Result
		if err := json.Unmarshal(body, &res); err != nil {
			t.Fatalf("%s %s: %s", tc.path, tc.header, body)
		}
		if res.Status == load.StatusSuccess {
			t.Errorf("%s %s=%q succeeded", tc.path, tc.header, tc.value)
		}
		if strings.Contains(string(body), "rowttl:") {
			t.Errorf("%s %s=%q answer shows a sentinel's text:\n%s", tc.path, tc.header, tc.value, body)
		}
	}

	// Go callers still find the sentinel.
	if _, err := db.Table("default", "nope"); !errors.Is(err, rowttl.ErrNotFound) || err.Error() != "Unknown table 'default.nope'" {
		t.Fatalf("missing table: %v", err)
	}
}
