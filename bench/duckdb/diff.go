//go:build duckdb_arrow

package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rowttl/rowttl/bench"
	"github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/table"
)

// The differential mode (-diff n) generates n random queries of the
// suite's kinds over the bench tables, runs each through rowttl's SQL
// session (the path `rowttl sql` takes, clock frozen at bench.Now) and
// through DuckDB (events the view of the live rows), and compares the
// answers: numbers within 1e-9 relative, rows in order when the query
// orders them fully, as multisets otherwise.
//
// Where rowttl's dialect (Doris) differs from DuckDB's, a generated query
// carries both spellings: date_trunc's argument order, date_format's
// MySQL specifiers, datediff, CAST of a fraction to an integer (Doris
// truncates), and NULL ordering (every ORDER BY names NULLS FIRST|LAST,
// as the defaults differ).

// queryTimeout bounds one query on either side; slowQuery is the time
// past which a query is reported as slow.
const (
	queryTimeout = 60 * time.Second
	slowQuery    = 5 * time.Second
)

// diffQuery is one generated query in both dialects.
type diffQuery struct {
	kind    string
	rowttl  string
	duck    string
	ordered bool // the ORDER BY orders the rows fully
}

type diffStats struct {
	run, mismatched, rowttlErr, duckErr int
	kinds                               map[string]int
	// rowttl and duck are each kind's total time on either side.
	rowttl, duck map[string]time.Duration
}

func runDiff(ctx context.Context, c config, n int, qseed uint64, splitPart bool, only string, out io.Writer) error {
	o := bench.Options{Rows: c.rows, Layout: c.layout, Seed: c.seed, Dir: c.dir, Progress: os.Stderr}
	if err := bench.Prepare(ctx, o); err != nil {
		return fmt.Errorf("prepare rowttl: %w", err)
	}
	if err := prepare(ctx, c); err != nil {
		return fmt.Errorf("prepare duckdb: %w", err)
	}
	tdb, err := table.OpenDB(o.SQLDir(), &table.Options{DisableAutoCompaction: true})
	if err != nil {
		return err
	}
	defer tdb.Close()
	sess := sql.NewSession(tdb)
	sess.FreezeNow(bench.Now)
	defer sess.Close()
	d, err := openDB(ctx, c.eventsDB(), c.threads)
	if err != nil {
		return err
	}
	defer d.close()
	if err := d.exec(ctx, "SET search_path = 'suite'"); err != nil {
		return err
	}
	rowsHint = c.rows
	st := diffStats{kinds: map[string]int{}, rowttl: map[string]time.Duration{}, duck: map[string]time.Duration{}}
	g := &queryGen{r: rand.New(rand.NewPCG(qseed, qseed^0x5d1ff)), splitPart: splitPart, kinds: map[string]bool{}}
	for _, k := range strings.Split(only, ",") {
		if k = strings.TrimSpace(k); k != "" {
			g.kinds[k] = true
		}
	}
	fmt.Fprintf(out, "diff: %d queries, query seed %d, %d %s rows, data seed %d\n", n, qseed, c.rows, c.layout, c.seed)
	var rowttlTime, duckTime time.Duration
	for i := 0; i < n; i++ {
		q := g.query()
		st.run++
		st.kinds[q.kind]++
		fmt.Fprintf(os.Stderr, "diff #%d [%s] %s\n", i, q.kind, q.rowttl)
		t0 := time.Now()
		qctx, cancel := context.WithTimeout(ctx, queryTimeout)
		res, rerr := sess.Exec(qctx, q.rowttl)
		cancel()
		t1 := time.Now()
		qctx, cancel = context.WithTimeout(ctx, queryTimeout)
		drows, derr := queryRows(qctx, d, q.duck)
		cancel()
		rowttlTime += t1.Sub(t0)
		duckTime += time.Since(t1)
		st.rowttl[q.kind] += t1.Sub(t0)
		st.duck[q.kind] += time.Since(t1)
		if t1.Sub(t0) > slowQuery || time.Since(t1) > slowQuery {
			fmt.Fprintf(out, "SLOW #%d [%s] rowttl %.2fs duckdb %.2fs\n  %s\n", i, q.kind, t1.Sub(t0).Seconds(), time.Since(t1).Seconds(), q.rowttl)
		}
		switch {
		case rerr != nil && derr != nil:
			st.duckErr++
			fmt.Fprintf(out, "BOTH-ERROR #%d [%s]\n  rowttl: %s\n    %v\n  duckdb: %s\n    %v\n", i, q.kind, q.rowttl, rerr, q.duck, derr)
			continue
		case derr != nil:
			st.duckErr++
			fmt.Fprintf(out, "DUCK-ERROR #%d [%s]\n  %s\n  %v\n", i, q.kind, q.duck, derr)
			continue
		case rerr != nil:
			st.rowttlErr++
			fmt.Fprintf(out, "ROWTTL-ERROR #%d [%s]\n  %s\n  %v\n", i, q.kind, q.rowttl, rerr)
			continue
		}
		if why := compareRows(res.Rows, drows, q.ordered); why != "" {
			st.mismatched++
			fmt.Fprintf(out, "MISMATCH #%d [%s] %s\n  rowttl: %s\n  duckdb: %s\n  rowttl rows (%d): %s\n  duckdb rows (%d): %s\n",
				i, q.kind, why, q.rowttl, q.duck, len(res.Rows), preview(res.Rows), len(drows), preview(drows))
		}
	}
	kinds := make([]string, 0, len(st.kinds))
	for k := range st.kinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	fmt.Fprintf(out, "diff: ran %d, mismatched %d, rowttl errors %d, duckdb errors %d; rowttl %.2fs, duckdb %.2fs\n",
		st.run, st.mismatched, st.rowttlErr, st.duckErr, rowttlTime.Seconds(), duckTime.Seconds())
	for _, k := range kinds {
		fmt.Fprintf(out, "  %-10s %4d  rowttl %7.3fs  duckdb %7.3fs\n", k, st.kinds[k], st.rowttl[k].Seconds(), st.duck[k].Seconds())
	}
	return nil
}

func preview(rows [][]string) string {
	var b strings.Builder
	for i, r := range rows {
		if i == 8 {
			b.WriteString(" ...")
			break
		}
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(strings.Join(r, " "))
	}
	return b.String()
}

// compareRows returns why the answers differ, or "".
func compareRows(a, b [][]string, ordered bool) string {
	if len(a) != len(b) {
		return fmt.Sprintf("row count %d vs %d", len(a), len(b))
	}
	na, nb := normRows(a), normRows(b)
	if !ordered {
		sortRows(na)
		sortRows(nb)
	}
	for i := range na {
		if len(na[i]) != len(nb[i]) {
			return fmt.Sprintf("row %d: %d vs %d fields", i, len(na[i]), len(nb[i]))
		}
		for j := range na[i] {
			if !fieldsAgree(na[i][j], nb[i][j]) {
				return fmt.Sprintf("row %d field %d: %q vs %q", i, j, na[i][j], nb[i][j])
			}
		}
	}
	return ""
}

// normRows renders times without a zero time of day or zero fraction, so
// that a DATE from one side and a midnight TIMESTAMP from the other, or
// DATETIME(0) and DATETIME(6), compare equal.
func normRows(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = make([]string, len(r))
		for j, f := range r {
			f = strings.TrimSuffix(f, ".000000")
			f = strings.TrimSuffix(f, " 00:00:00")
			out[i][j] = f
		}
	}
	return out
}

// sortRows orders rows for a multiset comparison: numbers rounded to
// nine significant digits, so that sums in different orders sort alike.
func sortRows(rows [][]string) {
	key := func(r []string) string {
		var b strings.Builder
		for _, f := range r {
			if v, err := strconv.ParseFloat(f, 64); err == nil && strings.ContainsAny(f, ".eE") {
				f = strconv.FormatFloat(v, 'g', 9, 64)
			}
			b.WriteString(f)
			b.WriteByte(0)
		}
		return b.String()
	}
	sort.Slice(rows, func(i, j int) bool { return key(rows[i]) < key(rows[j]) })
}

func fieldsAgree(a, b string) bool {
	if a == b {
		return true
	}
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	if x == y {
		return true
	}
	return math.Abs(x-y) <= 1e-9*math.Max(math.Abs(x), math.Abs(y))
}

// queryGen draws queries; its choices come from one seeded source so that
// a run is reproducible from its seed.
type queryGen struct {
	r *rand.Rand
	// splitPart draws split_part() for a message's first word; without
	// it, a substring stands in.
	splitPart bool
	// kinds, when not empty, are the only kinds drawn.
	kinds map[string]bool
}

// word is the first word of the message (the event's verb), or a prefix
// of it.
func (g *queryGen) word(p string) string {
	if g.splitPart {
		return fmt.Sprintf("split_part(%smessage, ' ', 1)", p)
	}
	return fmt.Sprintf("substr(%smessage, 1, 4)", p)
}

func (g *queryGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }
func (g *queryGen) chance(p float64) bool    { return g.r.Float64() < p }

// both is an expression in the two dialects.
type both struct{ r, d string }

func same(s string) both { return both{s, s} }

func (b both) wrap(format string) both {
	return both{fmt.Sprintf(format, b.r), fmt.Sprintf(format, b.d)}
}

func join2(format string, a, b both) both {
	return both{fmt.Sprintf(format, a.r, b.r), fmt.Sprintf(format, a.d, b.d)}
}

// A time inside the generated span (about Now-37d .. Now-7d).
func (g *queryGen) timeLit() string {
	t := bench.Now.Add(-time.Duration(8+g.r.IntN(28))*24*time.Hour - time.Duration(g.r.IntN(24))*time.Hour)
	return t.Format("2006-01-02 15:04:05")
}

// pred is a WHERE predicate over events (prefix p, "" or "e.").
func (g *queryGen) pred(p string, depth int) both {
	if depth > 0 && g.chance(0.4) {
		a, b := g.pred(p, depth-1), g.pred(p, depth-1)
		switch g.r.IntN(3) {
		case 0:
			return join2("(%s AND %s)", a, b)
		case 1:
			return join2("(%s OR %s)", a, b)
		default:
			return a.wrap("NOT (%s)")
		}
	}
	switch g.r.IntN(14) {
	case 13:
		pat := g.pick("^(view|click) ", "#[0-9]{3}5", "_add", "^[a-z]+ #1", "9$")
		not := g.pick("", "NOT ")
		return both{fmt.Sprintf("%smessage %sREGEXP '%s'", p, not, pat), fmt.Sprintf("%sregexp_matches(%smessage, '%s')", not, p, pat)}
	case 0:
		return same(fmt.Sprintf("%samount %s %d", p, g.pick("<", "<=", ">", ">=", "=", "<>"), g.r.IntN(10000)))
	case 1:
		lo := g.r.IntN(9000)
		return same(fmt.Sprintf("%samount BETWEEN %d AND %d", p, lo, lo+g.r.IntN(3000)))
	case 2:
		return same(fmt.Sprintf("%suser_id %s %d", p, g.pick("<", ">", "<=", ">="), g.r.IntN(1_000_000)))
	case 3:
		ids := make([]string, 1+g.r.IntN(6))
		for i := range ids {
			ids[i] = strconv.Itoa(g.r.IntN(1000))
		}
		return same(fmt.Sprintf("%suser_id %% 1000 %sIN (%s)", p, g.pick("", "NOT "), strings.Join(ids, ", ")))
	case 4:
		return same(fmt.Sprintf("%smessage %sLIKE '%s'", p, g.pick("", "NOT "), g.pick("%refund%", "click%", "%#1%", "%9", "log%", "%_add #2%", "view #%0")))
	case 5:
		return same(fmt.Sprintf("%sevent_time %s '%s'", p, g.pick("<", ">=", ">"), g.timeLit()))
	case 6:
		h := g.r.IntN(24)
		return same(fmt.Sprintf("hour(%sevent_time) %s %d", p, g.pick("=", "<", ">="), h))
	case 7:
		return same(fmt.Sprintf("%smessage IS %sNULL", p, g.pick("", "NOT ")))
	case 8:
		return same(fmt.Sprintf("%sid %% %d = %d", p, 2+g.r.IntN(9), g.r.IntN(2)))
	case 9:
		v := g.pick("'view'", "'click'", "'refund'", "'login'", "'search'")
		return same(fmt.Sprintf("%s %s %s", g.word(p), g.pick("=", "<>", ">"), v))
	case 10:
		return same(fmt.Sprintf("%sevent_time BETWEEN '%s' AND '%s'", p, g.timeLit(), g.timeLit()))
	case 11:
		return same(fmt.Sprintf("%samount * 2 + %suser_id / 1000 > %d", p, p, g.r.IntN(20000)))
	default:
		return same(fmt.Sprintf("%sid %s %d", p, g.pick("<", ">="), g.r.IntN(int(rowsHint))))
	}
}

var rowsHint int64 = 1_000_000

// key is a grouping expression over events.
func (g *queryGen) key(p string) both {
	et := p + "event_time"
	switch g.r.IntN(19) {
	case 0:
		return same(fmt.Sprintf("hour(%s)", et))
	case 1:
		u := g.pick("day", "hour", "month", "week")
		return both{fmt.Sprintf("date_trunc(%s, '%s')", et, u), fmt.Sprintf("date_trunc('%s', %s)", u, et)}
	case 2:
		return both{fmt.Sprintf("date_format(%s, '%%Y-%%m-%%d %%H')", et), fmt.Sprintf("strftime(%s, '%%Y-%%m-%%d %%H')", et)}
	case 3:
		return both{fmt.Sprintf("datediff(%s, '2025-11-01')", et), fmt.Sprintf("datediff('day', DATE '2025-11-01', %s)", et)}
	case 4:
		return same(g.word(p))
	case 5:
		return same(fmt.Sprintf("substr(%smessage, 1, %d)", p, 1+g.r.IntN(6)))
	case 6:
		return same(fmt.Sprintf("length(%smessage)", p))
	case 7:
		return same(fmt.Sprintf("%suser_id %% %d", p, 2+g.r.IntN(50)))
	case 8:
		c := g.r.IntN(10000)
		return same(fmt.Sprintf("CASE WHEN %samount > %d THEN 'hi' WHEN %samount > %d THEN 'mid' ELSE 'lo' END", p, c, p, c/2))
	case 9:
		return both{fmt.Sprintf("CAST(%samount / 1000 AS BIGINT)", p), fmt.Sprintf("CAST(trunc(%samount / 1000) AS BIGINT)", p)}
	case 10:
		return same(fmt.Sprintf("upper(substr(%smessage, 1, 3))", p))
	case 11:
		return same(fmt.Sprintf("day(%s)", et))
	case 12:
		return same(fmt.Sprintf("minute(%s) %% 5", et))
	case 13:
		return both{fmt.Sprintf("date_format(%s, '%%H:%%i')", et), fmt.Sprintf("strftime(%s, '%%H:%%M')", et)}
	case 14:
		return same(fmt.Sprintf("concat(%s, '-', CAST(hour(%s) AS VARCHAR))", g.word(p), et))
	case 15:
		return same(fmt.Sprintf("regexp_extract(%smessage, '#([0-9])([0-9])', %d)", p, g.r.IntN(3)))
	case 16:
		return same(fmt.Sprintf("concat_ws('/', %s, CAST(%suser_id %% 3 AS VARCHAR), CASE WHEN %samount > 5000 THEN 'big' END)", g.word(p), p, p))
	case 17:
		return both{fmt.Sprintf("timestampdiff(DAY, %s, '2026-01-01 00:00:00')", et), fmt.Sprintf("datesub('day', %s, TIMESTAMP '2026-01-01 00:00:00')", et)}
	default:
		return same(fmt.Sprintf("%sid %% %d", p, 2+g.r.IntN(20)))
	}
}

// agg is an aggregate over events.
func (g *queryGen) agg(p string) both {
	switch g.r.IntN(12) {
	case 0, 1:
		return same("count(*)")
	case 2:
		return same(fmt.Sprintf("sum(%samount)", p))
	case 3:
		return same(fmt.Sprintf("min(%samount)", p))
	case 4:
		return same(fmt.Sprintf("max(%sevent_time)", p))
	case 5:
		return same(fmt.Sprintf("avg(%samount)", p))
	case 6:
		return same(fmt.Sprintf("count(DISTINCT %suser_id)", p))
	case 7:
		return same(fmt.Sprintf("sum(%sid)", p))
	case 8:
		return same(fmt.Sprintf("max(%smessage)", p))
	case 9:
		return same(fmt.Sprintf("count(DISTINCT %s)", g.word(p)))
	case 10:
		return same(fmt.Sprintf("avg(%suser_id)", p))
	default:
		return same(fmt.Sprintf("sum(CASE WHEN %samount > 5000 THEN 1 ELSE 0 END)", p))
	}
}

func (g *queryGen) aggs(p string, n int) both {
	var r, d []string
	for i := 0; i < n; i++ {
		a := g.agg(p)
		r, d = append(r, a.r), append(d, a.d)
	}
	return both{strings.Join(r, ", "), strings.Join(d, ", ")}
}

func (g *queryGen) where(p string) both {
	if g.chance(0.25) {
		return both{}
	}
	return g.pred(p, 2).wrap(" WHERE %s")
}

// positions is "1, 2, ..., n" with explicit null order, an ORDER BY that
// orders distinct rows fully.
func (g *queryGen) positions(n int) string {
	var s []string
	for i := 1; i <= n; i++ {
		s = append(s, fmt.Sprintf("%d %s NULLS %s", i, g.pick("ASC", "DESC"), g.pick("FIRST", "LAST")))
	}
	return strings.Join(s, ", ")
}

func (g *queryGen) limit() string {
	switch g.r.IntN(3) {
	case 0:
		return fmt.Sprintf(" LIMIT %d", 1+g.r.IntN(20))
	case 1:
		return fmt.Sprintf(" LIMIT %d OFFSET %d", 1+g.r.IntN(20), g.r.IntN(30))
	default:
		return ""
	}
}

// query draws a query of one of the suite's kinds or of the wide shapes
// (diff_wide.go) or of the NULL shapes (diff_nulls.go), of the kinds -diffkinds names when it names any.
func (g *queryGen) query() diffQuery {
	for {
		var q diffQuery
		switch n := g.r.IntN(43); {
		case n < 15:
			q = g.suiteQuery()
		case n < 32:
			q = g.wideQuery()
		default:
			q = g.nullQuery()
		}
		if len(g.kinds) == 0 || g.kinds[q.kind] {
			return q
		}
	}
}

func (g *queryGen) suiteQuery() diffQuery {
	switch g.r.IntN(15) {
	case 12:
		// Outer joins whose users side is NULL for most rows: NULL keys
		// in GROUP BY and ORDER BY, aggregates of NULLs.
		on := "e.user_id = u.user_id AND u." + g.pick("plan = 'pro'", "country = 'DE'", "user_id < 300000")
		w := g.pred("e.", 1)
		gk := g.pick("u.country", "u.plan", "coalesce(u.country, 'none')", "CASE WHEN u.plan = 'pro' THEN 1 END")
		a := g.pick("count(*)", "count(u.user_id)", "sum(u.user_id)", "min(u.country)", "avg(u.user_id)", "count(DISTINCT u.country)", "sum(e.amount)")
		q := fmt.Sprintf("SELECT %s AS k, %s, count(*) FROM events e LEFT JOIN users u ON %s WHERE %%s GROUP BY %s ORDER BY 1 %s NULLS %s", gk, a, on, gk, g.pick("ASC", "DESC"), g.pick("FIRST", "LAST"))
		return diffQuery{kind: "outer", rowttl: fmt.Sprintf(q, w.r), duck: fmt.Sprintf(q, w.d), ordered: true}
	case 14:
		// ORDER BY an aggregate the select list does not show, ties
		// broken by the key.
		k := g.key("")
		w := g.where("")
		ob := fmt.Sprintf(" ORDER BY %s %s, 1 NULLS FIRST LIMIT %d", g.pick("sum(amount)", "count(*)", "min(id)", "max(user_id) - min(user_id)"), g.pick("ASC", "DESC"), 1+g.r.IntN(15))
		q := both{"SELECT " + k.r + ", count(*) FROM events" + w.r + " GROUP BY 1" + ob, "SELECT " + k.d + ", count(*) FROM events" + w.d + " GROUP BY 1" + ob}
		return diffQuery{kind: "orderagg", rowttl: q.r, duck: q.d, ordered: true}
	case 13:
		// Date functions over event_time, row by row.
		e := g.pick("to_date(event_time)|CAST(event_time AS DATE)",
			"date_add(event_time, INTERVAL 3 DAY)|event_time + INTERVAL 3 DAY",
			"date_sub(event_time, INTERVAL 5 HOUR)|event_time - INTERVAL 5 HOUR",
			"event_time + INTERVAL 90 MINUTE|event_time + INTERVAL 90 MINUTE",
			"year(event_time) * 100 + month(event_time)|year(event_time) * 100 + month(event_time)",
			"second(event_time) + minute(event_time)|second(event_time) + minute(event_time)",
			"datediff('2026-01-01', event_time)|datediff('day', event_time, DATE '2026-01-01')",
			"date_format(event_time, '%Y/%m/%d %H:%i:%s')|strftime(event_time, '%Y/%m/%d %H:%M:%S')",
			"timestampdiff(HOUR, event_time, '2026-01-01 00:00:00')|datesub('hour', event_time, TIMESTAMP '2026-01-01 00:00:00')",
			"date_trunc(event_time, 'minute')|date_trunc('minute', event_time)",
			"CAST(event_time AS VARCHAR)|strftime(event_time, '%Y-%m-%d %H:%M:%S.%f')")
		ex := strings.SplitN(e, "|", 2)
		w := g.pred("", 1)
		q := both{
			fmt.Sprintf("SELECT id, %s FROM events WHERE %s ORDER BY id NULLS FIRST LIMIT 30", ex[0], w.r),
			fmt.Sprintf("SELECT id, %s FROM events WHERE %s ORDER BY id NULLS FIRST LIMIT 30", ex[1], w.d),
		}
		return diffQuery{kind: "datefn", rowttl: q.r, duck: q.d, ordered: true}
	case 0:
		w := g.where("")
		a := g.aggs("", 1+g.r.IntN(3))
		return diffQuery{kind: "agg", rowttl: "SELECT " + a.r + " FROM events" + w.r, duck: "SELECT " + a.d + " FROM events" + w.d}
	case 1, 2:
		k := g.key("")
		w := g.where("")
		a := g.aggs("", 1+g.r.IntN(3))
		having := both{}
		switch g.r.IntN(5) {
		case 0:
			having = same(fmt.Sprintf(" HAVING count(*) > %d", g.r.IntN(200)))
		case 1:
			// A column only HAVING names.
			having = same(fmt.Sprintf(" HAVING sum(amount) > %d AND max(user_id) > %d", g.r.IntN(500000), g.r.IntN(1000000)))
		case 2:
			w := g.pred("", 0)
			having = both{" HAVING avg(amount) > (SELECT avg(amount) FROM events WHERE " + w.r + ")",
				" HAVING avg(amount) > (SELECT avg(amount) FROM events WHERE " + w.d + ")"}
		}
		q := both{"SELECT " + k.r + ", " + a.r + " FROM events" + w.r + " GROUP BY " + k.r + having.r,
			"SELECT " + k.d + ", " + a.d + " FROM events" + w.d + " GROUP BY " + k.d + having.d}
		ordered := g.chance(0.6)
		if ordered {
			// Ordering by every output column orders the groups fully
			// (the key alone does already).
			ob := " ORDER BY " + g.positions(1) + g.limit()
			q.r += ob
			q.d += ob
		}
		return diffQuery{kind: "groupby", rowttl: q.r, duck: q.d, ordered: ordered}
	case 3:
		w := g.where("")
		dir := g.pick("ASC", "DESC")
		col := g.pick("amount", "event_time", "user_id", "message")
		q := fmt.Sprintf("SELECT id, %s, user_id FROM events%%s ORDER BY %s %s NULLS LAST, id %s%s", col, col, dir, g.pick("ASC", "DESC"), g.limit())
		if !strings.Contains(q, "LIMIT") {
			q += " LIMIT 50"
		}
		return diffQuery{kind: "topn", rowttl: fmt.Sprintf(q, w.r), duck: fmt.Sprintf(q, w.d), ordered: true}
	case 4:
		k := g.key("")
		w := g.where("")
		q := both{"SELECT DISTINCT " + k.r + " FROM events" + w.r, "SELECT DISTINCT " + k.d + " FROM events" + w.d}
		ordered := g.chance(0.5)
		if ordered {
			ob := " ORDER BY " + g.positions(1) + g.limit()
			q.r += ob
			q.d += ob
		}
		return diffQuery{kind: "distinct", rowttl: q.r, duck: q.d, ordered: ordered}
	case 5:
		kind := g.pick("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL OUTER JOIN", "INNER JOIN")
		on := "e.user_id = u.user_id"
		if g.chance(0.4) {
			on += g.pick(" AND u.plan = 'pro'", " AND u.country IN ('DE', 'JP')", " AND e.amount > 5000")
		}
		if strings.Contains(kind, "FULL") {
			// DuckDB takes minutes over a FULL join with a residual.
			on = "e.user_id = u.user_id"
		}
		w := g.where("e.")
		if strings.Contains(kind, "RIGHT") {
			// A filter on events' side would turn the outer join inner; it
			// joins the ON condition instead (w follows ON in the text).
			if w.r != "" {
				w = g.pred("e.", 1).wrap(" AND %s")
			}
		}
		gk := g.pick("u.country", "u.plan", "u.country, u.plan")
		n := strings.Count(gk, ",") + 1
		a := g.aggs("e.", 1+g.r.IntN(2))
		ob := " ORDER BY " + g.positions(n)
		// on becomes part of a format: its own % (modulo, LIKE) doubled.
		sel := fmt.Sprintf("SELECT %s, %%s FROM events e %s users u ON %s%%s GROUP BY %s%s", gk, kind, strings.ReplaceAll(on, "%", "%%"), gk, ob)
		return diffQuery{kind: "join", rowttl: fmt.Sprintf(sel, a.r, w.r), duck: fmt.Sprintf(sel, a.d, w.d), ordered: true}
	case 6:
		sub := g.pick("plan = 'pro'", "country = 'DE'", "country IN ('BR', 'US') AND plan = 'free'", "user_id < 1000")
		var q string
		switch g.r.IntN(4) {
		case 0:
			q = fmt.Sprintf("SELECT count(*), sum(amount) FROM events WHERE user_id IN (SELECT user_id FROM users WHERE %s)", sub)
		case 1:
			q = fmt.Sprintf("SELECT count(*), sum(amount) FROM events WHERE user_id NOT IN (SELECT user_id FROM users WHERE %s)", sub)
		case 2:
			q = fmt.Sprintf("SELECT count(*), max(id) FROM events e WHERE EXISTS (SELECT 1 FROM users u WHERE u.user_id = e.user_id AND u.%s)", sub)
		default:
			q = fmt.Sprintf("SELECT count(*), min(id) FROM events e WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.user_id = e.user_id AND u.%s)", sub)
		}
		w := g.pred("", 1)
		if g.chance(0.5) {
			return diffQuery{kind: "subquery", rowttl: q + " AND " + w.r, duck: q + " AND " + w.d}
		}
		return diffQuery{kind: "subquery", rowttl: q, duck: q}
	case 7:
		w := g.pred("", 1)
		a := g.agg("")
		q := both{"SELECT count(*), sum(amount) FROM events WHERE amount > (SELECT avg(amount) FROM events WHERE " + w.r + ")",
			"SELECT count(*), sum(amount) FROM events WHERE amount > (SELECT avg(amount) FROM events WHERE " + w.d + ")"}
		if g.chance(0.5) {
			q = both{"SELECT (SELECT " + a.r + " FROM events WHERE " + w.r + "), count(*) FROM users WHERE plan = 'pro'",
				"SELECT (SELECT " + a.d + " FROM events WHERE " + w.d + "), count(*) FROM users WHERE plan = 'pro'"}
		}
		return diffQuery{kind: "scalar", rowttl: q.r, duck: q.d}
	case 8:
		op := g.pick("UNION", "UNION ALL", "INTERSECT", "EXCEPT")
		col := g.pick("user_id", "user_id % 1000", ""+g.word("")+"", "hour(event_time)")
		a, b := g.pred("", 1), g.pred("", 1)
		q := both{
			fmt.Sprintf("SELECT count(*), count(DISTINCT x) FROM (SELECT %s AS x FROM events WHERE %s %s SELECT %s AS x FROM events WHERE %s) t", col, a.r, op, col, b.r),
			fmt.Sprintf("SELECT count(*), count(DISTINCT x) FROM (SELECT %s AS x FROM events WHERE %s %s SELECT %s AS x FROM events WHERE %s) t", col, a.d, op, col, b.d),
		}
		return diffQuery{kind: "setop", rowttl: q.r, duck: q.d}
	case 9:
		k := g.key("")
		w := g.where("")
		c := g.r.IntN(100)
		q := both{
			fmt.Sprintf("WITH t AS (SELECT %s AS k, count(*) AS n, sum(amount) AS s FROM events%s GROUP BY %s) SELECT count(*), sum(n), max(s), min(k) FROM t WHERE n > %d", k.r, w.r, k.r, c),
			fmt.Sprintf("WITH t AS (SELECT %s AS k, count(*) AS n, sum(amount) AS s FROM events%s GROUP BY %s) SELECT count(*), sum(n), max(s), min(k) FROM t WHERE n > %d", k.d, w.d, k.d, c),
		}
		return diffQuery{kind: "with", rowttl: q.r, duck: q.d}
	case 10:
		fn := g.pick("row_number() OVER (PARTITION BY user_id %% 10 ORDER BY amount DESC, id)",
			"rank() OVER (PARTITION BY "+g.word("")+" ORDER BY hour(event_time))",
			"dense_rank() OVER (ORDER BY user_id %% 7)",
			"lag(amount) OVER (PARTITION BY user_id %% 5 ORDER BY id)",
			"lead(id, 2) OVER (ORDER BY event_time, id)",
			"sum(amount) OVER (PARTITION BY user_id %% 3)",
			"count(*) OVER (PARTITION BY hour(event_time))",
			"sum(amount) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)")
		fn = strings.ReplaceAll(fn, "%%", "%")
		w := g.pred("", 1)
		lim := fmt.Sprintf("id < %d", 200+g.r.IntN(3000))
		q := both{
			fmt.Sprintf("SELECT id, %s AS w FROM events WHERE %s AND %s ORDER BY id NULLS FIRST%s", fn, lim, w.r, g.limit()),
			fmt.Sprintf("SELECT id, %s AS w FROM events WHERE %s AND %s ORDER BY id NULLS FIRST", fn, lim, w.d),
		}
		q.d += q.r[strings.LastIndex(q.r, "NULLS FIRST")+len("NULLS FIRST"):]
		return diffQuery{kind: "window", rowttl: q.r, duck: q.d, ordered: true}
	default:
		// Expressions in the select list, row by row.
		e := g.key("")
		f := g.key("")
		w := g.pred("", 1)
		q := both{
			fmt.Sprintf("SELECT id, %s, %s, coalesce(NULL, message), if(amount > 500, 'y', 'n') FROM events WHERE %s ORDER BY id NULLS FIRST LIMIT 40", e.r, f.r, w.r),
			fmt.Sprintf("SELECT id, %s, %s, coalesce(NULL, message), CASE WHEN amount > 500 THEN 'y' ELSE 'n' END FROM events WHERE %s ORDER BY id NULLS FIRST LIMIT 40", e.d, f.d, w.d),
		}
		return diffQuery{kind: "exprs", rowttl: q.r, duck: q.d, ordered: true}
	}
}
