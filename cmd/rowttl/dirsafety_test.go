package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rowttl/rowttl/load"
)

// tree maps every path under dir to its contents ("" for a directory).
func tree(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			lines = append(lines, rel+"/")
			return nil
		}
		b, _ := os.ReadFile(p)
		lines = append(lines, rel+"="+string(b))
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestSQLNeverDestroysForeignDirectories: pointed at a directory that is
// not a data directory, rowttl refuses it and touches nothing; inside a
// data directory, SHOW lists and DROP deletes only rowttl's tables.
func TestSQLNeverDestroysForeignDirectories(t *testing.T) {
	x := t.TempDir()
	writeAt := func(p, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeAt(filepath.Join(x, "default", "important", "f"), "precious\n")
	if err := os.MkdirAll(filepath.Join(x, "photos"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := tree(t, x)
	for _, script := range []string{"DROP TABLE important; DROP DATABASE photos", "DROP DATABASE default", "SHOW TABLES"} {
		out, _, err := runIn(sqlCommand(), "", "--dir", x, "-e", script)
		if err == nil || !strings.Contains(err.Error(), "is not a rowttl data directory") {
			t.Fatalf("%s on a foreign directory: %v\n%s", script, err, out)
		}
	}
	if after := tree(t, x); after != before {
		t.Fatalf("the directory changed:\n%s\nwas\n%s", after, before)
	}

	// A data directory in which a user made directories of their own.
	dir := filepath.Join(t.TempDir(), "data")
	_, stderr, err := runIn(sqlCommand(), "", "--dir", dir, "-e", "CREATE TABLE t (id INT) DUPLICATE KEY(id); INSERT INTO t VALUES (1)")
	if err != nil || !strings.Contains(stderr, "initialised "+dir+" as a new rowttl data directory") {
		t.Fatalf("create: %v %q", err, stderr)
	}
	writeAt(filepath.Join(dir, "default", "important", "f"), "precious\n")
	writeAt(filepath.Join(dir, "photos", "cat.jpg"), "meow")
	if out := sqlIn(t, dir, "SHOW TABLES; SHOW DATABASES"); out != "Tables_in_default\nt\nDatabase\ndefault\n" {
		t.Fatalf("SHOW lists what is not rowttl's:\n%s", out)
	}
	out, _ := runCmd(t, "", "--dir", dir, "-e", "DROP TABLE important; DROP DATABASE photos; DROP DATABASE default; SHOW TABLES")
	want := "ERROR: Unknown table 'default.important'\nERROR: Can't drop database 'photos'; database doesn't exist\nTables_in_default\n"
	if out != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "default", "important", "f")); err != nil || string(b) != "precious\n" {
		t.Fatalf("the user's file: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "photos", "cat.jpg")); err != nil {
		t.Fatal(err)
	}
}

// TestSQLReadOnlyScriptCreatesNothing: a script that only reads creates
// neither a missing directory nor a lock file.
func TestSQLReadOnlyScriptCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	out, stderr, err := runIn(sqlCommand(), "", "--dir", dir, "-e", "SHOW DATABASES; SHOW TABLES; SELECT * FROM t")
	if want := "Database\ndefault\nTables_in_default\nERROR: Unknown table 'default.t'\n"; out != want || stderr != "" {
		t.Fatalf("output %q (stderr %q, %v), want %q", out, stderr, err, want)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a read-only script created %s: %v", dir, err)
	}
	if _, _, err := runIn(inspectCommand(), "", "--dir", dir, "--table", "t"); err == nil || !strings.Contains(err.Error(), "Unknown table 'default.t'") {
		t.Fatalf("inspect of a missing directory: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("inspect created %s: %v", dir, err)
	}
}

// startServe runs `rowttl serve` on dir in a child process and returns its
// address and a function that stops it (SIGTERM) and returns its error.
func startServe(t *testing.T, dir string) (string, func() error) {
	t.Helper()
	cmd := childCommand("serve", "--dir", dir, "--listen", "127.0.0.1:0", "--mysql-listen", "127.0.0.1:0")
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
	addrRE := regexp.MustCompile(`on http://(127\.0\.0\.1:\d+)`)
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("serve ended before listening")
			}
			if m := addrRE.FindStringSubmatch(l); m != nil {
				return m[1], func() error {
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

func streamLoad(addr, tbl, label, body string) (*load.Result, error) {
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPut, "http://"+addr+"/api/default/"+tbl+"/_stream_load", strings.NewReader(body))
	req.Header.Set("column_separator", ",")
	req.Header.Set("label", label)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var res load.Result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", b, err)
	}
	return &res, nil
}

// TestCheckAndInspectWhileServing: `rowttl check` and `rowttl inspect`
// run against the data directory of a running `rowttl serve`, over and
// over while loads go on and background compaction replaces rowsets: no
// load fails, every check passes, and serve exits cleanly.
func TestCheckAndInspectWhileServing(t *testing.T) {
	dir := t.TempDir()
	sqlIn(t, dir, `CREATE TABLE t (id INT, v STRING) DUPLICATE KEY(id)`)
	addr, stop := startServe(t, dir)
	const loads = 30
	var wg sync.WaitGroup
	loadErrs := make(chan error, loads)
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for i := 0; i < loads; i++ {
			res, err := streamLoad(addr, "t", fmt.Sprintf("l%d", i), fmt.Sprintf("%d,a\n%d,b\n", 2*i, 2*i+1))
			if err == nil && res.Status != load.StatusSuccess {
				err = fmt.Errorf("load %d: %s: %s", i, res.Status, res.Message)
			}
			if err != nil {
				loadErrs <- err
			}
		}
	}()
	checks := 0
	for running := true; running || checks < 3; checks++ {
		select {
		case <-done:
			running = false
		default:
		}
		out, err := runCheckCmd(t, "--dir", dir)
		if err != nil || !strings.HasPrefix(out, "ok default.t: ") {
			t.Fatalf("check while serving: %v\n%s", err, out)
		}
		iout, _, err := runIn(inspectCommand(), "", "--dir", dir, "--table", "t")
		if err != nil || !strings.HasPrefix(iout, "table default.t: DUPLICATE KEY") {
			t.Fatalf("inspect while serving: %v\n%s", err, iout)
		}
	}
	wg.Wait()
	close(loadErrs)
	for err := range loadErrs {
		t.Errorf("a load failed while check ran: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	if out := sqlIn(t, dir, "SELECT count(*) FROM t"); out != fmt.Sprintf("count(*)\n%d\n", 2*loads) {
		t.Fatalf("count: %q", out)
	}
	checkDir(t, dir)
	out, _ := runCheckCmd(t, "--dir", dir)
	t.Logf("%d checks and inspections ran alongside %d loads; at the end: %s", checks, loads, out)
}
