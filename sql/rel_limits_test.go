package sql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rowttl/rowttl"
)

// relTables makes two tables of n rows each whose keys all match.
func relTables(t *testing.T, exec func(string), n int) {
	t.Helper()
	exec("CREATE TABLE big (id BIGINT, k BIGINT, s STRING) DUPLICATE KEY(id)")
	exec("CREATE TABLE other (id BIGINT, k INT) DUPLICATE KEY(id)")
	for _, name := range []string{"big", "other"} {
		var vals []string
		for i := 0; i < n; i++ {
			if name == "big" {
				vals = append(vals, fmt.Sprintf("(%d, %d, 'row %d of the big table')", i, i%1000, i))
			} else {
				vals = append(vals, fmt.Sprintf("(%d, %d)", i, i%1000))
			}
		}
		exec("INSERT INTO " + name + " VALUES " + strings.Join(vals, ", "))
	}
}

// TestJoinMemLimit: a hash join whose build side passes exec_mem_limit
// fails with ErrMemLimit naming HashJoin, and frees what it held.
func TestJoinMemLimit(t *testing.T) {
	s, exec := checkedSession(t, 0)
	relTables(t, exec, 20000)
	exec("SET exec_mem_limit = 65536")
	for _, q := range []string{
		"SELECT big.id FROM big JOIN other ON big.k = other.k",
		"SELECT id FROM big WHERE k IN (SELECT k FROM other)",
		"SELECT id, k FROM big UNION SELECT id, k FROM other",
		"SELECT id, row_number() OVER (PARTITION BY k ORDER BY id) FROM big",
	} {
		_, err := s.Exec(context.Background(), q)
		if !errors.Is(err, rowttl.ErrMemLimit) {
			t.Errorf("%s: got %v, want ErrMemLimit", q, err)
			continue
		}
		if !strings.Contains(err.Error(), "HashJoin") && !strings.Contains(err.Error(), "SetOp") && !strings.Contains(err.Error(), "Window") {
			t.Errorf("%s: %q names no operator", q, err)
		}
	}
	exec("SET exec_mem_limit = DEFAULT")
	res, err := s.Exec(context.Background(), "SELECT big.id FROM big JOIN other ON big.k = other.k WHERE big.id < 3")
	if err != nil || len(res.Rows) != 3*20 {
		t.Fatalf("after DEFAULT: %v, %d rows", err, len(res.Rows))
	}
}

// TestJoinCancel: a cancelled join stops promptly and frees its memory.
func TestJoinCancel(t *testing.T) {
	s, exec := checkedSession(t, 0)
	relTables(t, exec, 20000)
	ctx, cancel := context.WithCancel(context.Background())
	r, err := s.Query(ctx, "SELECT big.id, other.id FROM big JOIN other ON big.k = other.k")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Next() {
		t.Fatalf("no first batch: %v", r.Err())
	}
	cancel()
	start := time.Now()
	for r.Next() {
	}
	if !errors.Is(r.Err(), context.Canceled) {
		t.Errorf("after cancel: %v", r.Err())
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("stopped after %v", d)
	}
	r.Release()
}
