package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rowttl/rowttl/load"
	"github.com/rowttl/rowttl/table"
)

// cliChildEnv, when set, makes TestCLIChildProcess run `rowttl` with the
// arguments it holds (a JSON list), as a separate process of the test
// binary.
const cliChildEnv = "ROWTTL_CLI_CHILD_ARGS"

func TestCLIChildProcess(t *testing.T) {
	args := os.Getenv(cliChildEnv)
	if args == "" {
		t.Skip("helper process of the load and serve tests")
	}
	var list []string
	if err := json.Unmarshal([]byte(args), &list); err != nil {
		t.Fatal(err)
	}
	os.Args = append([]string{"rowttl"}, list...)
	main() // exits with status 1 on failure
	os.Exit(0)
}

// childCommand returns the command running `rowttl args...` in a child
// process.
func childCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestCLIChildProcess$", "-test.count=1")
	list, _ := json.Marshal(args)
	cmd.Env = append(os.Environ(), cliChildEnv+"="+string(list))
	return cmd
}

// runLoadCmd runs `rowttl load args...` in process.
func runLoadCmd(t *testing.T, stdin string, args ...string) (*load.Result, string, error) {
	t.Helper()
	out, errOut, err := runIn(loadCommand(), stdin, args...)
	var res load.Result
	if out != "" {
		if jerr := json.Unmarshal([]byte(out), &res); jerr != nil {
			t.Fatalf("output %q: %v", out, jerr)
		}
	}
	return &res, errOut, err
}

// sqlIn runs statements on dir with the sql command.
func sqlIn(t *testing.T, dir, script string) string {
	t.Helper()
	out, err := runCmd(t, "", "--dir", dir, "-e", script)
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return out
}

// checkDir opens every table of dir and runs its consistency check.
func checkDir(t *testing.T, dir string) {
	t.Helper()
	db, err := table.OpenDB(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	names, err := db.Tables(table.DefaultDatabase)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		tbl, err := db.Table(table.DefaultDatabase, n)
		if err != nil {
			t.Fatal(err)
		}
		if err := tbl.Check(); err != nil {
			t.Fatalf("check %s: %v", n, err)
		}
	}
}

func TestLoadCommand(t *testing.T) {
	dir := t.TempDir()
	sqlIn(t, dir, `CREATE DATABASE d; CREATE TABLE d.t (id INT, exp DATETIME(6)) DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true")`)
	file := writeFile(t, "data.csv", "1,2100-01-01 00:00:00\n2,2100-01-01 00:00:00\n")
	args := []string{"--dir", dir, "--table", "d.t", "--label", "l1", "--column-separator", ",",
		"--columns", "id, exp, __DORIS_TTL_COL__=cast(exp as datetime(6))", "--timezone", "+08:00", file}
	res, _, err := runLoadCmd(t, "", args...)
	if err != nil || res.Status != load.StatusSuccess || res.NumberLoadedRows != 2 || res.Label != "l1" {
		t.Fatalf("load: %v %+v", err, res)
	}
	res, _, err = runLoadCmd(t, "", args...)
	var lf *loadFailed
	if !errors.As(err, &lf) || res.Status != load.StatusLabelExists {
		t.Fatalf("same label: %v %+v", err, res)
	}
	// Standard input, a bad row over the ratio.
	res, _, err = runLoadCmd(t, "3\t2100-01-01\nx\t2100-01-01\n", "--dir", dir, "--table", "d.t", "--columns", "id, exp", "-")
	if err == nil || res.Status != load.StatusFail || res.NumberFilteredRows != 1 {
		t.Fatalf("bad row: %v %+v", err, res)
	}
	res, _, err = runLoadCmd(t, "3\t2100-01-01\nx\t2100-01-01\n", "--dir", dir, "--table", "d.t", "--columns", "id, exp", "--max-filter-ratio", "0.5", "-")
	if err != nil || res.NumberLoadedRows != 1 {
		t.Fatalf("bad row under the ratio: %v %+v", err, res)
	}
	out := sqlIn(t, dir, "SET show_hidden_columns = true; SELECT id, __TTL__ FROM d.t ORDER BY id;")
	ttl := time.Date(2100, 1, 1, 0, 0, 0, 0, time.FixedZone("", 8*3600)).UnixMicro()
	if want := fmt.Sprintf("id\t__TTL__\n1\t%d\n2\t%d\n3\tNULL\n", ttl, ttl); out != want {
		t.Fatalf("rows:\n%s\nwant:\n%s", out, want)
	}
	if _, _, err := runLoadCmd(t, "", "--dir", dir, "--table", "d.nope", "-"); err == nil {
		t.Fatal("load into a missing table succeeded")
	}
	checkDir(t, dir)
}

// TestLoadKilledMidway: a load killed (SIGKILL) half-way leaves the table
// as it was: no row of it visible, the check clean, its label unused.
func TestLoadKilledMidway(t *testing.T) {
	dir := t.TempDir()
	sqlIn(t, dir, `CREATE TABLE t (id BIGINT, msg STRING) DUPLICATE KEY(id); INSERT INTO t VALUES (0, 'before');`)
	cmd := childCommand("load", "--dir", dir, "--table", "t", "--label", "killed", "-")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tableDir := filepath.Join(dir, table.DefaultDatabase, "t")
	// Feed rows slowly until the child has written part of a segment.
	deadline := time.Now().Add(30 * time.Second)
	w := bufio.NewWriter(stdin)
	id := 1
	for started := false; !started; {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the child wrote no segment in time; stderr:\n%s", stderr.String())
		}
		for i := 0; i < 20000; i++ {
			fmt.Fprintf(w, "%d\tmessage number %d\n", id, id)
			id++
		}
		if err := w.Flush(); err != nil {
			t.Fatalf("feeding the child: %v; stderr:\n%s", err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
		names, _ := os.ReadDir(tableDir)
		for _, n := range names {
			if strings.HasSuffix(n.Name(), ".tmp") {
				started = true
			}
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	stdin.Close()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, not killed; stderr:\n%s", err, stderr.String())
	}
	t.Logf("killed after feeding %d rows", id-1)

	checkDir(t, dir)
	if out := sqlIn(t, dir, "SELECT id, msg FROM t"); out != "id\tmsg\n0\tbefore\n" {
		t.Fatalf("after the kill:\n%s", out)
	}
	// The orphans are gone and the label is free.
	names, _ := os.ReadDir(tableDir)
	for _, n := range names {
		if strings.HasSuffix(n.Name(), ".tmp") {
			t.Errorf("%s left after reopening", n.Name())
		}
	}
	res, _, err := runLoadCmd(t, "1\tagain\n", "--dir", dir, "--table", "t", "--label", "killed", "-")
	if err != nil || res.Status != load.StatusSuccess {
		t.Fatalf("retry with the label: %v %+v", err, res)
	}
}

// TestServeCommand runs `rowttl serve` as a child process, loads through
// it, and stops it with SIGTERM: it exits 0 and releases the data
// directory.
func TestServeCommand(t *testing.T) {
	dir := t.TempDir()
	sqlIn(t, dir, `CREATE TABLE t (id INT, v STRING) DUPLICATE KEY(id)`)
	cmd := childCommand("serve", "--dir", dir, "--listen", "127.0.0.1:0", "--mysql-listen", "127.0.0.1:0", "--user", "u", "--password", "p")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	addrRE := regexp.MustCompile(`on http://(127\.0\.0\.1:\d+)`)
	var addr string
	timeout := time.After(30 * time.Second)
	for addr == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("serve ended before listening")
			}
			if m := addrRE.FindStringSubmatch(l); m != nil {
				addr = m[1]
			}
		case <-timeout:
			t.Fatal("serve did not say where it listens")
		}
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPut, "http://"+addr+"/api/default/t/_stream_load", strings.NewReader("1,a\n2,b\n"))
	req.SetBasicAuth("u", "p")
	req.Header.Set("column_separator", ",")
	req.Header.Set("label", "served")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var res load.Result
	if err := json.Unmarshal(body, &res); err != nil || res.Status != load.StatusSuccess {
		t.Fatalf("load through serve: %s (%v)", body, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
	if out := sqlIn(t, dir, "SELECT count(*) FROM t"); out != "count(*)\n2\n" {
		t.Fatalf("count: %q", out)
	}
	checkDir(t, dir)
}
