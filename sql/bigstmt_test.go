package sql

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"
)

// peakHeap runs f and returns the most heap in use while it ran, beyond
// what was in use before, sampling every millisecond.
func peakHeap(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		peak := base
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if v := read(); v > peak {
				peak = v
			}
			select {
			case <-stop:
				done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(stop)
	peak := <-done
	if peak < base {
		return 0
	}
	return peak - base
}

// TestLargeInsertStreams: INSERT ... VALUES streams its rows into the
// write, so the heap it needs beyond its own text grows by a few bytes per
// byte of text, from 125,000 to 500,000 rows (about 1.5 and 6 MB of text):
// at most 4 for a DUPLICATE table, 8 for a UNIQUE one, which sorts up to
// 16 MB of rows at a time in two or three copies. Parsing the whole
// statement first, as INSERT did, costs some 60 bytes per byte. The rows
// all arrive.
func TestLargeInsertStreams(t *testing.T) {
	rows := 500_000
	if n, err := strconv.Atoi(os.Getenv("ROWTTL_INSERT_ROWS")); err == nil {
		rows = n // measuring larger statements
	}
	for _, c := range []struct {
		model, keys string
		perByte     float64
	}{{"DUPLICATE", "DUPLICATE KEY(id)", 4}, {"UNIQUE", "UNIQUE KEY(id)", 8}} {
		t.Run(c.model, func(t *testing.T) {
			s, _ := modelSession(t, 0)
			ctx := context.Background()
			if _, err := s.Exec(ctx, "CREATE TABLE t (id BIGINT, v INT) "+c.keys); err != nil {
				t.Fatal(err)
			}
			insert := func(n int) (text int, peak uint64) {
				t.Helper()
				if _, err := s.Exec(ctx, "TRUNCATE TABLE t"); err != nil {
					t.Fatal(err)
				}
				var b strings.Builder
				b.WriteString("INSERT INTO t VALUES ")
				for i := range n {
					if i > 0 {
						b.WriteString(",")
					}
					fmt.Fprintf(&b, "(%d,%d)", i, i%1000)
				}
				stmt := b.String()
				b.Reset()
				var err error
				peak = peakHeap(func() { _, err = s.Exec(ctx, stmt) })
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: INSERT of %d rows, %d bytes of text: peak heap %d bytes beyond it", c.model, n, len(stmt), peak)
				res, err := s.Exec(ctx, "SELECT count(*), sum(id), sum(v) FROM t")
				if err != nil {
					t.Fatal(err)
				}
				want := []string{fmt.Sprint(n), fmt.Sprint(int64(n) * int64(n-1) / 2), fmt.Sprint(int64(n/1000) * 999 * 1000 / 2)}
				if got := res.Rows[0]; strings.Join(got, ",") != strings.Join(want, ",") {
					t.Fatalf("count, sums: %v, want %v", got, want)
				}
				return len(stmt), peak
			}
			insert(1000) // the process-wide zstd encoders come with the first writes
			smallText, smallPeak := insert(rows / 4)
			text, peak := insert(rows)
			growth := float64(peak) - float64(smallPeak)
			perByte := growth / float64(text-smallText)
			t.Logf("%s: %.2f bytes of heap per byte of text", c.model, perByte)
			if perByte > c.perByte {
				t.Errorf("the heap grows by %.1f bytes per byte of statement text, more than %v", perByte, c.perByte)
			}
		})
	}
}

// TestInsertStreamAtomic: a streamed INSERT that fails in a later batch,
// on a syntax error, a bad value, a wrong value count or trailing text,
// writes nothing; one that succeeds writes every batch as one version.
func TestInsertStreamAtomic(t *testing.T) {
	defer func(n int) { insertBatchRows = n }(insertBatchRows)
	insertBatchRows = 2
	s, _ := modelSession(t, 0)
	ctx := context.Background()
	if _, err := s.Exec(ctx, "CREATE TABLE t (id INT NOT NULL, v VARCHAR(3)) DUPLICATE KEY(id)"); err != nil {
		t.Fatal(err)
	}
	good := "(1,'a'),(2,'b'),(3,'c'),(4,'d'),(5,'e')"
	for _, c := range []struct{ tail, want string }{
		{",(6,'f'),(7,", "syntax error"},
		{",(6,'f'),(7,'toolong')", "row 7: value of column v is longer"},
		{",(6,'f'),(NULL,'g')", "row 7"},
		{",(6,'f'),(7)", "Column count doesn't match value count at row 7"},
		{",(6,'f') garbage", "expected end of statement"},
		{",(6,'f'),(7,'g');SELECT 1", "expected end of statement"},
	} {
		_, err := s.Exec(ctx, "INSERT INTO t VALUES "+good+c.tail)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.tail, err, c.want)
		}
	}
	res, err := s.Exec(ctx, "SELECT count(*) FROM t")
	if err != nil || res.Rows[0][0] != "0" {
		t.Fatalf("failed INSERTs wrote rows: %v %v", res, err)
	}
	if _, err := s.Exec(ctx, "INSERT INTO t (v, id) VALUES ('x', 10), ('y', 11), ('z', 12);"); err != nil {
		t.Fatal(err)
	}
	res, err = s.Exec(ctx, "SELECT id, v FROM t ORDER BY id")
	if err != nil || fmt.Sprint(res.Rows) != "[[10 x] [11 y] [12 z]]" {
		t.Fatalf("rows: %v %v", res, err)
	}
	db, err := s.db.Table("default", "t")
	if err != nil {
		t.Fatal(err)
	}
	if v := db.LastVersion(); v != 1 {
		t.Errorf("three batches made %d versions, want one", v)
	}
}
