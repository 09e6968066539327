package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/rowttl/rowttl"
)

func counts(r *Result) [3]int64 {
	return [3]int64{r.NumberTotalRows, r.NumberLoadedRows, r.NumberFilteredRows}
}

func TestLoadTypesAndNulls(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT NOT NULL, name VARCHAR(5), v DOUBLE, d DATE, ts DATETIME(3), b BOOLEAN, dec DECIMAL(6,2)) DUPLICATE KEY(id)`)
	data := "2\tbob\t2.5\t2026-02-03\t2026-02-03 04:05:06.789999\ttrue\t12.34\n" +
		"1\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\r\n" +
		"\n" + // empty lines are skipped, not counted
		"3\t\t-1e3\t2024-02-29\t2024-02-29T23:59:59\t0\t-0.5"
	res := e.mustLoad("t", data, Options{Label: "types"})
	if counts(res) != [3]int64{3, 3, 0} || res.Label != "types" || res.TxnID != 1 || res.LoadBytes != int64(len(data)) {
		t.Fatalf("result %+v", res)
	}
	got := e.exec(`SELECT * FROM t ORDER BY id`)
	want := "id\tname\tv\td\tts\tb\tdec\n" +
		"1\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\n" +
		"2\tbob\t2.5\t2026-02-03\t2026-02-03 04:05:06.789\ttrue\t12.34\n" +
		"3\t\t-1000\t2024-02-29\t2024-02-29 23:59:59.000\tfalse\t-0.50\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestLoadSeparatorsEncloseAndColumns(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (k1 INT, k2 INT, v VARCHAR(20)) DUPLICATE KEY(k1)`)
	// Multi-byte separator, fields in another order, a temporary variable
	// and a derived column.
	e.mustLoad("t", "x||7||1\ny||8||2\n", Options{ColumnSeparator: "||", Columns: "tmp, k2, k1, v = concat(tmp, '-', k2 * 2)"})
	// Enclosed fields hold separators, delimiters and doubled quotes.
	e.mustLoad("t", "3,\"a,b\"\n4,\"say \"\"hi\"\"\"\n5,\"two\nlines\"\n", Options{ColumnSeparator: ",", Enclose: `"`, Columns: "k1, v"})
	// \x escapes name invisible separators.
	e.mustLoad("t", "6\x017\x01z\n", Options{ColumnSeparator: `\x01`})
	got := e.exec(`SELECT k1, k2, v FROM t ORDER BY k1`)
	want := "k1\tk2\tv\n1\t7\tx-14\n2\t8\ty-16\n3\tNULL\ta,b\n4\tNULL\tsay \"hi\"\n5\tNULL\ttwo\\nlines\n6\t7\tz\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestLoadLabelAcrossRestart: a label stays used after the data directory
// is closed and reopened; its second use writes nothing.
func TestLoadLabelAcrossRestart(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT, v INT) DUPLICATE KEY(id)`)
	e.mustLoad("t", "1\t1\n2\t2\n", Options{Label: "once"})
	e.reopen()
	v := e.table("t").LastVersion()
	res := e.load("t", "3\t3\n", Options{Label: "once"})
	if res.Status != StatusLabelExists || !errors.Is(res.Err, rowttl.ErrLabelExists) || res.ExistingJobStatus != "FINISHED" {
		t.Fatalf("second load: %+v", res)
	}
	if got := e.exec(`SELECT count(*) FROM t`); got != "count(*)\n2\n" {
		t.Fatalf("after the refused load: %q", got)
	}
	if e.table("t").LastVersion() != v {
		t.Fatal("a refused load published a version")
	}
	// Another label loads.
	e.mustLoad("t", "3\t3\n", Options{Label: "twice"})
	// Generated labels are distinct and valid.
	a, b := e.mustLoad("t", "", Options{}), e.mustLoad("t", "", Options{})
	if a.Label == b.Label || !strings.HasPrefix(a.Label, "rowttl_") {
		t.Fatalf("generated labels %q, %q", a.Label, b.Label)
	}
	if res := e.load("t", "", Options{Label: "bad label"}); res.Status != StatusFail {
		t.Fatalf("label with a space: %+v", res)
	}
}

// TestLoadFilterRatio: bad rows are skipped and counted; past
// max_filter_ratio the whole load fails and writes nothing.
func TestLoadFilterRatio(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT NOT NULL, name VARCHAR(3), d DATE) DUPLICATE KEY(id)`)
	data := strings.Join([]string{
		"1\tab\t2026-01-01",
		"2\tab",                // too few fields
		"x\tab\t2026-01-01",    // bad number
		"4\tab\t2026-02-30",    // bad date
		"\\N\tab\t2026-01-01",  // NULL into NOT NULL
		"6\tabcd\t2026-01-01",  // too long
		"7\tab\t2026-01-01\tx", // too many fields
		"99999999999\ta\t\\N",  // out of INT range
		"9\tab\t2026-01-01",
		"10\t\t2026-01-01",
	}, "\n")
	// 7 of 10 rows are bad.
	res := e.load("t", data, Options{MaxFilterRatio: 0.6})
	if res.Status != StatusFail || counts(res) != [3]int64{10, 0, 7} || !strings.Contains(res.Message, "too many filtered rows") {
		t.Fatalf("over the ratio: %+v", res)
	}
	if len(res.ErrorRows) != 7 || !strings.HasPrefix(res.FirstErrorMsg, "line 2: ") {
		t.Fatalf("errors: %q", res.ErrorRows)
	}
	for _, r := range res.ErrorRows {
		t.Log(r)
	}
	if got := e.exec(`SELECT count(*) FROM t`); got != "count(*)\n0\n" || e.table("t").LastVersion() != 0 {
		t.Fatalf("a failed load wrote rows: %q", got)
	}
	// The default ratio is 0: one bad row fails the load.
	res = e.load("t", "1\ta\t\\N\nx\ta\t\\N\n", Options{Label: "zero"})
	if res.Status != StatusFail || counts(res) != [3]int64{2, 0, 1} {
		t.Fatalf("ratio 0: %+v", res)
	}
	// A failed load does not use its label.
	e.mustLoad("t", "1\ta\t\\N\n", Options{Label: "zero"})
	// Under the ratio, the good rows load.
	res = e.mustLoad("t", data, Options{MaxFilterRatio: 0.7})
	if counts(res) != [3]int64{10, 3, 7} {
		t.Fatalf("under the ratio: %+v", res)
	}
	if got := e.exec(`SELECT id FROM t ORDER BY id`); got != "id\n1\n1\n9\n10\n" {
		t.Fatalf("rows: %q", got)
	}
	// Non-strict mode turns bad values into NULL; NOT NULL still filters.
	no := false
	res = e.mustLoad("t", "11\tab\tnope\nx\ta\t\\N\n", Options{StrictMode: &no, MaxFilterRatio: 0.5})
	if counts(res) != [3]int64{2, 1, 1} {
		t.Fatalf("non-strict: %+v", res)
	}
	if got := e.exec(`SELECT id, d FROM t WHERE id = 11`); got != "id\td\n11\tNULL\n" {
		t.Fatalf("non-strict row: %q", got)
	}
}

// TestLoadDerivedTTL: DATETIME values derived into __TTL__ are read in the
// load's time zone (+08:00 expires 8 hours earlier than UTC); already
// expired rows load and stay invisible.
func TestLoadDerivedTTL(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT, event_time DATETIME(6)) DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true")`)
	cols := "id, event_time, tmp_exp, __DORIS_TTL_COL__=cast(tmp_exp as datetime(6))"
	e.mustLoad("t", "1,2026-01-01 00:00:00,2026-01-02 00:00:00\n", Options{ColumnSeparator: ",", Columns: cols})
	e.mustLoad("t", "2,2026-01-01 00:00:00,2026-01-02 00:00:00\n", Options{ColumnSeparator: ",", Columns: cols, TimeZone: "+08:00"})
	e.mustLoad("t", "3,2026-01-01 00:00:00,2026-01-02 00:00:00\n", Options{ColumnSeparator: ",", Columns: cols, TimeZone: "Asia/Shanghai"})
	// A DATE is midnight in the zone; an integer is epoch µs; a TIMESTAMPTZ
	// text names its own instant.
	e.mustLoad("t", "4,2026-01-02\n", Options{ColumnSeparator: ",", Columns: "id, d, __TTL__=cast(d as date)", TimeZone: "-01:00"})
	e.mustLoad("t", "5,1767312000000000\n", Options{ColumnSeparator: ",", Columns: "id, __DORIS_TTL_COL__"})
	e.mustLoad("t", "6,2026-01-02 08:00:00 +08:00\n", Options{ColumnSeparator: ",", Columns: "id, x, __TTL__=cast(x as timestamptz)"})
	// Already expired (now is 2026-01-01 12:00 UTC): loaded, not filtered.
	res := e.mustLoad("t", "7,2025-12-31 00:00:00\n", Options{ColumnSeparator: ",", Columns: "id, x, __TTL__=cast(x as datetime)"})
	if counts(res) != [3]int64{1, 1, 0} {
		t.Fatalf("expired row: %+v", res)
	}
	got := e.exec(`SET show_hidden_columns = true`, `SELECT id, __TTL__ FROM t ORDER BY id`)
	want := "id\t__TTL__\n" +
		"1\t1767312000000000\n" + // 2026-01-02 00:00:00 UTC
		"2\t1767283200000000\n" + // 8 hours earlier
		"3\t1767283200000000\n" +
		"4\t1767315600000000\n" + // 1 hour later
		"5\t1767312000000000\n" +
		"6\t1767312000000000\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got := e.exec(`SELECT count(*) FROM t`); got != "count(*)\n6\n" {
		t.Fatalf("visible: %q", got)
	}
	if n, err := e.table("t").Count(t.Context(), testNow.AddDate(-1, 0, 0), nil); err != nil || n != 7 {
		t.Fatalf("rows a year earlier: %d, %v", n, err)
	}

	// A text cannot go into __TTL__ without a CAST.
	res = e.load("t", "8,2026-01-02 00:00:00\n", Options{ColumnSeparator: ",", Columns: "id, x, __TTL__=x"})
	if res.Status != StatusFail || !strings.Contains(res.Message, "CAST") {
		t.Fatalf("text into __TTL__: %+v", res)
	}
	res = e.load("t", "8,2026-01-02 00:00:00\n", Options{ColumnSeparator: ",", Columns: "id, __TTL__"})
	if res.Status != StatusFail || !strings.Contains(res.FirstErrorMsg, "cast(") {
		t.Fatalf("date text as __TTL__ field: %+v", res)
	}
	res = e.load("t", "8\n", Options{Columns: "id", TimeZone: "Mars/Olympus"})
	if res.Status != StatusFail || !strings.Contains(res.Message, "time zone") {
		t.Fatalf("bad zone: %+v", res)
	}
}

// TestLoadSourceMode: in source mode __TTL__ is derived from the source
// column read in the table's zone, whatever the load's zone; writing it is
// refused.
func TestLoadSourceMode(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT, event_time DATETIME) DUPLICATE KEY(id) PROPERTIES (
		"function_column.enable_row_ttl" = "true", "function_column.ttl_col" = "event_time",
		"function_column.ttl" = "1 day", "function_column.ttl_time_zone" = "+00:00")`)
	e.mustLoad("t", "1\t2026-01-01 00:00:00\n2\t2025-12-31 11:00:00\n", Options{TimeZone: "+08:00"})
	if got := e.exec(`SELECT id FROM t`); got != "id\n1\n" {
		t.Fatalf("visible: %q", got)
	}
	res := e.load("t", "3\t2026-01-01 00:00:00\t1\n", Options{Columns: "id, event_time, __DORIS_TTL_COL__"})
	if res.Status != StatusFail || !strings.Contains(res.Message, "derived") {
		t.Fatalf("writing __TTL__ in source mode: %+v", res)
	}
	// Partial loads are refused on TTL tables, in SPEC's words.
	res = e.load("t", "3\n", Options{Columns: "id", Partial: true})
	if res.Status != StatusFail || !strings.Contains(res.Message, "Partial update is not supported on tables with row TTL") {
		t.Fatalf("partial: %+v", res)
	}
}

// TestLoadUnique: within a load and across loads the last row of a key
// wins (table.LoadWriter's tests cover spilled runs).
func TestLoadUnique(t *testing.T) {
	for _, mow := range []string{"true", "false"} {
		t.Run("mow="+mow, func(t *testing.T) {
			e := newEnv(t)
			e.exec(`CREATE TABLE t (id INT, v VARCHAR(10)) UNIQUE KEY(id) PROPERTIES ("enable_unique_key_merge_on_write" = "` + mow + `")`)
			e.mustLoad("t", "1\ta\n2\tb\n3\tc\n", Options{})
			data := "2\tb1\n4\td\n2\tb2\n1\ta1\n"
			res := e.mustLoad("t", data, Options{BatchRows: 1})
			if counts(res) != [3]int64{4, 4, 0} {
				t.Fatalf("result %+v", res)
			}
			if got := e.exec(`SELECT id, v FROM t ORDER BY id`); got != "id\tv\n1\ta1\n2\tb2\n3\tc\n4\td\n" {
				t.Fatalf("rows: %q", got)
			}
		})
	}
}

func TestLoadRefusals(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT NOT NULL, v INT) DUPLICATE KEY(id)`)
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Columns: "id, nope = 1"}, "unknown column nope"},
		{Options{Columns: "id, id"}, "duplicate column"},
		{Options{Columns: "v"}, "NOT NULL"},
		{Options{Columns: "id, __TTL__"}, "no row TTL"},
		{Options{Columns: "id, v = "}, "columns"},
		{Options{Enclose: "ab"}, "one byte"},
		{Options{ColumnSeparator: `\x4`}, "hex"},
		{Options{MaxFilterRatio: 2}, "max_filter_ratio"},
		{Options{MaxFilterRatio: -0.1}, "max_filter_ratio"},
		{Options{MaxFilterRatio: math.NaN()}, "max_filter_ratio"},
		{Options{MaxFilterRatio: math.Inf(1)}, "max_filter_ratio"},
	} {
		res := e.load("t", "1\t2\n", c.o)
		if res.Status != StatusFail || !strings.Contains(res.Message, c.want) {
			t.Errorf("%+v: %s: %s (want %q)", c.o, res.Status, res.Message, c.want)
		}
	}
	if got := e.exec(`SELECT count(*) FROM t`); got != "count(*)\n0\n" {
		t.Fatalf("refused loads wrote rows: %q", got)
	}
}

// TestLoadManyBatches crosses batch boundaries on every model and checks
// every row arrives once (UNIQUE: the last of its key).
func TestLoadManyBatches(t *testing.T) {
	for _, model := range []string{"DUPLICATE", "UNIQUE"} {
		t.Run(model, func(t *testing.T) {
			e := newEnv(t)
			e.exec(`CREATE TABLE t (id INT, v INT) ` + model + ` KEY(id)`)
			var b strings.Builder
			const n = 20000
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, "%d\t%d\n", (i*7919)%(n/2), i)
			}
			res := e.mustLoad("t", b.String(), Options{BatchRows: 999})
			if res.NumberLoadedRows != n {
				t.Fatalf("%+v", res)
			}
			want := "count(*)\tsum(v)\n20000\t199990000\n"
			if model == "UNIQUE" {
				// Key k comes from rows i and i+n/2; the later one wins.
				want = "count(*)\tsum(v)\n10000\t149995000\n"
			}
			if got := e.exec(`SELECT count(*), sum(v) FROM t`); got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
		})
	}
}

// TestLoadInputError: an input that fails half-way (a client that goes
// away) fails the load and writes nothing.
func TestLoadInputError(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT, v INT) DUPLICATE KEY(id)`)
	var b strings.Builder
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, "%d\t%d\n", i, i)
	}
	broken := io.MultiReader(strings.NewReader(b.String()), iotest.ErrReader(errors.New("connection reset")))
	res := Run(context.Background(), e.table("t"), broken, Options{Label: "broken", BatchRows: 100}, e.mem)
	if res.Status != StatusFail || !strings.Contains(res.Message, "connection reset") {
		t.Fatalf("%+v", res)
	}
	if got := e.exec(`SELECT count(*) FROM t`); got != "count(*)\n0\n" {
		t.Fatalf("rows of a broken load: %q", got)
	}
	// A cancelled context fails the load the same way.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res = Run(ctx, e.table("t"), strings.NewReader(b.String()), Options{Label: "broken"}, e.mem)
	if res.Status != StatusFail || !errors.Is(res.Err, context.Canceled) {
		t.Fatalf("cancelled: %+v", res)
	}
	e.mustLoad("t", b.String(), Options{Label: "broken"})
}

// TestLoadConcurrentLabel: two loads racing with one label; exactly one
// applies.
func TestLoadConcurrentLabel(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id INT, v INT) DUPLICATE KEY(id)`)
	tbl := e.table("t")
	results := make(chan *Result, 4)
	for i := 0; i < 4; i++ {
		go func() {
			results <- Run(context.Background(), tbl, strings.NewReader("1\t1\n2\t2\n"), Options{Label: "race", Now: testNow}, e.mem)
		}()
	}
	ok, exists := 0, 0
	for i := 0; i < 4; i++ {
		switch r := <-results; r.Status {
		case StatusSuccess:
			ok++
		case StatusLabelExists:
			exists++
		default:
			t.Errorf("%+v", r)
		}
	}
	if ok != 1 || exists != 3 {
		t.Fatalf("%d successes, %d label exists", ok, exists)
	}
	if got := e.exec(`SELECT count(*) FROM t`); got != "count(*)\n2\n" {
		t.Fatalf("count: %q", got)
	}
}
