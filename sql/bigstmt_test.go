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
			// The peak heap is the process's: what other goroutines (a
			// background flush or compaction left by an earlier test of
			// the package) allocate meanwhile only adds to it, so the
			// least of two runs is the statement's own.
			least := func(n int) (int, uint64) {
				text, a := insert(n)
				_, b := insert(n)
				return text, min(a, b)
			}
			smallText, smallPeak := least(rows / 4)
			text, peak := least(rows)
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

// TestLargeInList: an IN list of 200,000 values compiles to a sorted set,
// not a comparison per value, and is not pushed into the scan: the heap it
// needs grows by at most 30 bytes per byte of text (about 12 measured; some
// 70 with a comparison per value), and it answers like the comparisons,
// NULLs and mixed types included.
func TestLargeInList(t *testing.T) {
	s, _ := modelSession(t, 0)
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE t (id BIGINT, d DOUBLE, s STRING, day DATE) DUPLICATE KEY(id)",
		"INSERT INTO t VALUES (1, 1.5, 'a', '2026-01-01'), (2, -0.0, 'b', '2026-01-02'), (3, NULL, NULL, NULL), (400000, 2, 'zz', '2026-03-01')",
	} {
		if _, err := s.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	in := func(n int) string {
		var b strings.Builder
		b.WriteString("SELECT count(*) FROM t WHERE id IN (")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprint(&b, 2*i+2) // even numbers from 2
		}
		b.WriteString(")")
		return b.String()
	}
	measure := func(n int) (int, uint64) {
		q := in(n)
		var res *Result
		var err error
		peak := peakHeap(func() { res, err = s.Exec(ctx, q) })
		if err != nil {
			t.Fatal(err)
		}
		want := "1"
		if 2*n >= 400000 {
			want = "2"
		}
		if res.Rows[0][0] != want {
			t.Fatalf("IN of %d values: count %v, want %s", n, res.Rows[0], want)
		}
		t.Logf("IN of %d values, %d bytes of text: peak heap %d bytes beyond it", n, len(q), peak)
		return len(q), peak
	}
	measure(100)
	smallText, smallPeak := measure(50_000)
	text, peak := measure(200_000)
	perByte := (float64(peak) - float64(smallPeak)) / float64(text-smallText)
	t.Logf("%.2f bytes of heap per byte of text", perByte)
	if perByte > 30 {
		t.Errorf("the heap grows by %.1f bytes per byte of IN list, more than 30", perByte)
	}

	for _, c := range []struct{ where, want string }{
		{"id IN (2, 3, 5)", "2"},
		{"id NOT IN (2, 3, 5)", "2"},
		{"id IN (2, NULL)", "1"},
		{"id NOT IN (2, NULL)", "0"},
		{"(id IN (7, NULL)) IS NULL", "4"},
		{"(id NOT IN (2, NULL)) IS NULL", "3"},
		{"d IN (0, 1.5)", "2"},
		{"d IN ('1.5', 2)", "2"},
		{"s IN ('a', 'zz', 'q')", "2"},
		{"s NOT IN ('a')", "2"},
		{"day IN ('2026-01-02', DATE '2026-03-01')", "2"},
		{"id IN (1, id + 1)", "1"},
		{"id IN (5, '2', 2.0, 400000)", "2"},
		{"id IN (400000, 1.0)", "2"},
		{"id + 0 IN (id, 9)", "4"},
		{"CAST(id AS DECIMAL(10,2)) IN (1, 2.00, '400000.0')", "3"},
		{"d IN (1.50, 2)", "2"},
	} {
		res, err := s.Exec(ctx, "SELECT count(*) FROM t WHERE "+c.where)
		if err != nil {
			t.Errorf("%s: %v", c.where, err)
			continue
		}
		if res.Rows[0][0] != c.want {
			t.Errorf("%s: %v rows, want %s", c.where, res.Rows[0][0], c.want)
		}
	}
}

// TestInsertSelectStreams: INSERT ... SELECT streams the query's batches
// into a load writer instead of holding the rows: from 64,000 to 256,000
// rows its heap grows by less than 400 bytes a row copied, what the load
// writer itself keeps per row (about 60 bytes) and garbage awaiting
// collection included. Holding the rows as values, as INSERT ... SELECT
// once did, costs over 1,000. The rows all arrive.
func TestInsertSelectStreams(t *testing.T) {
	s, _ := modelSession(t, 0)
	ctx := context.Background()
	exec := func(q string) *Result {
		t.Helper()
		res, err := s.Exec(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return res
	}
	exec("CREATE TABLE src (id BIGINT, v INT, s VARCHAR(20)) DUPLICATE KEY(id)")
	exec("CREATE TABLE dst (id BIGINT, v INT, s VARCHAR(20)) DUPLICATE KEY(id)")
	var b strings.Builder
	b.WriteString("INSERT INTO src VALUES ")
	for i := range 1000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d,%d,'row %d')", i, i%7, i)
	}
	exec(b.String())
	copyAll := func(rows int) uint64 {
		t.Helper()
		exec("TRUNCATE TABLE dst")
		var peak uint64
		var err error
		peak = peakHeap(func() { _, err = s.Exec(ctx, "INSERT INTO dst SELECT id, v, s FROM src") })
		if err != nil {
			t.Fatal(err)
		}
		got := exec("SELECT count(*), sum(v) FROM dst").Rows[0]
		want := []string{fmt.Sprint(rows), fmt.Sprint(rows / 1000 * 2997)}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("count, sum: %v, want %v", got, want)
		}
		t.Logf("INSERT ... SELECT of %d rows: peak heap %d bytes", rows, peak)
		return peak
	}
	rows := 1000
	for rows < 64_000 {
		exec("INSERT INTO src SELECT id, v, s FROM src")
		rows *= 2
	}
	copyAll(rows) // the process-wide zstd encoders come with the first writes
	small := copyAll(rows)
	for rows < 256_000 {
		exec("INSERT INTO src SELECT id, v, s FROM src")
		rows *= 2
	}
	large := copyAll(rows)
	perRow := (float64(large) - float64(small)) / float64(rows-rows/4)
	t.Logf("%.1f bytes of heap per row copied", perRow)
	if perRow > 400 {
		t.Errorf("the heap grows by %.1f bytes per row copied, more than 400", perRow)
	}
}
