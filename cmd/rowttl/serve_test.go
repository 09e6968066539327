package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rowttl/rowttl"
)

// TestServeRefusesOpenCredentials: serve does not start with a user and
// no password (unless told to accept an empty one), with a password and
// no user, with two sources of the password, or with collector settings
// it cannot take; the data directory is not even opened.
func TestServeRefusesOpenCredentials(t *testing.T) {
	t.Setenv(passwordEnv, "")
	dir := filepath.Join(t.TempDir(), "data")
	pwFile := writeFile(t, "pw", "s3cret\n")
	twoLines := writeFile(t, "pw2", "a\nb\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--user", "admin"}, "--user admin has no password"},
		{[]string{"--user", "admin", "--password", ""}, "--user admin has no password"},
		{[]string{"--user", "admin", "--password-file", writeFile(t, "empty", "\n")}, "--user admin has no password"},
		{[]string{"--password", "p"}, "a password needs --user"},
		{[]string{"--password-file", pwFile}, "a password needs --user"},
		{[]string{"--user", "admin", "--password", "p", "--password-file", pwFile}, "not both"},
		{[]string{"--user", "admin", "--password-file", filepath.Join(dir, "nope")}, "--password-file"},
		{[]string{"--user", "admin", "--password-file", twoLines}, "one line"},
		{[]string{"--memory-limit", "lots"}, `--memory-limit: bad size "lots"`},
		{[]string{"--gogc", "-5"}, "--gogc -5: give a percentage"},
		{[]string{"--gogc", "-1", "--memory-limit", "0"}, "--gogc -1 needs a --memory-limit"},
	} {
		// Were it to start, it would serve until the context ends.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		cmd := serveCommand()
		cmd.SetContext(ctx)
		_, _, err := runIn(cmd, "", append([]string{"--dir", dir, "--listen", "127.0.0.1:0"}, c.args...)...)
		cancel()
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, rowttl.ErrInvalidArgument) {
			t.Errorf("%q: %v, want an invalid argument saying %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a refused serve touched the data directory: %v", err)
	}
}

// TestResolvePassword: where the password comes from, in order.
func TestResolvePassword(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == passwordEnv {
				return v
			}
			return ""
		}
	}
	file := writeFile(t, "pw", "from file\r\n")
	for _, c := range []struct {
		f           serveFlags
		passwordSet bool
		env         string
		want        string
	}{
		{serveFlags{user: "u", password: "flag"}, true, "env", "flag"},
		{serveFlags{user: "u", passwordFile: file}, false, "env", "from file"},
		{serveFlags{user: "u"}, false, "env", "env"},
		{serveFlags{user: "u", allowEmptyPassword: true}, false, "", ""},
		// Without a user the variable is ignored: other tools may use it.
		{serveFlags{}, false, "env", ""},
	} {
		f := c.f
		if err := resolvePassword(&f, c.passwordSet, env(c.env)); err != nil || f.password != c.want {
			t.Errorf("%+v env %q: password %q, %v; want %q", c.f, c.env, f.password, err, c.want)
		}
	}
}

// TestServeCredentials runs serve as a child process with its password in
// a file: loads need it, the health check does not.
func TestServeCredentials(t *testing.T) {
	dir := t.TempDir()
	sqlIn(t, dir, `CREATE TABLE t (id INT) DUPLICATE KEY(id)`)
	cmd := childCommand("serve", "--dir", dir, "--listen", "127.0.0.1:0", "--mysql-listen", "127.0.0.1:0", "--user", "admin",
		"--password-file", writeFile(t, "pw", "from-file\n"), "--body-timeout", "1m", "--gogc", "250", "--memory-limit", "300MiB")
	cmd.Env = append(cmd.Env, passwordEnv+"=") // the file is the only source
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	addrRE := regexp.MustCompile(`on http://(127\.0\.0\.1:\d+)`)
	var addr string
	collector := false
	for addr == "" && sc.Scan() {
		if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
		}
		collector = collector || strings.HasSuffix(sc.Text(), "collector: GOGC=250, memory limit 300.0 MiB")
	}
	if addr == "" {
		t.Fatal("serve ended before listening")
	}
	if !collector {
		t.Error("serve did not log its collector settings before listening")
	}
	drained := make(chan struct{})
	go func() {
		io.Copy(io.Discard, stderr)
		close(drained)
	}()
	do := func(method, path, pass string) int {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader("1\n"))
		if pass != "" {
			req.SetBasicAuth("admin", pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		method, path, pass string
		want               int
	}{
		{"GET", "/api/health", "", http.StatusOK},
		{"GET", "/metrics", "", http.StatusUnauthorized},
		{"PUT", "/api/default/t/_stream_load", "", http.StatusUnauthorized},
		{"PUT", "/api/default/t/_stream_load", "wrong", http.StatusUnauthorized},
		{"PUT", "/api/default/t/_stream_load", "from-file", http.StatusOK},
		{"GET", "/metrics", "from-file", http.StatusOK},
	} {
		if got := do(c.method, c.path, c.pass); got != c.want {
			t.Errorf("%s %s password %q: HTTP %d, want %d", c.method, c.path, c.pass, got, c.want)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		<-drained // Wait closes the pipe: read it to the end first
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
	if out := sqlIn(t, dir, "SELECT count(*) FROM t"); out != "count(*)\n1\n" {
		t.Fatalf("count: %q", out)
	}
}
