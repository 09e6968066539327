package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/table"
)

// TestWaitForHeldDirectory runs writing commands while another open holds
// the data directory: they wait for it and then run, unless told not to
// wait or the holder is a server.
func TestWaitForHeldDirectory(t *testing.T) {
	dir := t.TempDir()
	sqlIn(t, dir, "CREATE TABLE t (id INT) DUPLICATE KEY(id); INSERT INTO t VALUES (1)")
	hold := func(o *table.Options) *table.DB {
		t.Helper()
		db, err := table.OpenDB(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	type result struct {
		out string
		err error
	}
	start := func(args ...string) chan result {
		ch := make(chan result, 1)
		go func() {
			out, err := runCmd(t, "", append([]string{"--dir", dir}, args...)...)
			ch <- result{out, err}
		}()
		return ch
	}
	await := func(ch chan result) result {
		t.Helper()
		select {
		case r := <-ch:
			return r
		case <-time.After(30 * time.Second):
			t.Fatal("the command still runs after 30 s")
			return result{}
		}
	}

	// A write waits for the holder, then lands.
	db := hold(nil)
	ch := start("-e", "INSERT INTO t VALUES (2)")
	time.Sleep(200 * time.Millisecond)
	select {
	case r := <-ch:
		t.Fatalf("returned while the directory was held: %q, %v", r.out, r.err)
	default:
	}
	db.Close()
	if r := await(ch); r.err != nil {
		t.Fatalf("after the holder closed: %v", r.err)
	}
	// So does a load.
	db = hold(nil)
	loaded := make(chan error, 1)
	go func() {
		_, _, err := runLoadCmd(t, "3\n", "--dir", dir, "--table", "t", "-")
		loaded <- err
	}()
	time.Sleep(100 * time.Millisecond)
	db.Close()
	select {
	case err := <-loaded:
		if err != nil {
			t.Fatalf("load after the holder closed: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the load still runs after 30 s")
	}
	if out := sqlIn(t, dir, "SELECT count(*) FROM t"); out != "count(*)\n3\n" {
		t.Errorf("rows after the waits: %q", out)
	}

	// --wait 0 fails at once, naming the holder.
	db = hold(nil)
	r := await(start("--wait", "0", "-e", "INSERT INTO t VALUES (4)"))
	if !errors.Is(r.err, table.ErrLocked) || !strings.Contains(r.err.Error(), "is in use by process") {
		t.Errorf("--wait 0: %v", r.err)
	}
	db.Close()

	// A server's directory is never waited for, however long --wait is.
	db = hold(&table.Options{Holder: serveHolder})
	r = await(start("--wait", "1h", "-e", "INSERT INTO t VALUES (5)"))
	if !errors.Is(r.err, table.ErrLocked) || !strings.Contains(r.err.Error(), "("+serveHolder+")") ||
		!strings.Contains(r.err.Error(), "rowttl sql --connect") {
		t.Errorf("held by a server: %v", r.err)
	}
	db.Close()

	if _, err := runCmd(t, "", "--dir", dir, "--wait", "-1s", "-e", "SELECT 1"); !errors.Is(err, rowttl.ErrInvalidArgument) {
		t.Errorf("--wait -1s: %v", err)
	}
	if out := sqlIn(t, dir, "SELECT count(*) FROM t"); out != "count(*)\n3\n" {
		t.Errorf("rows at the end: %q", out)
	}
}
