//go:build duckdb_arrow

package main

import (
	"fmt"
	"strings"
)

// The NULL shapes: the bench tables hold no NULL, so these draw keys,
// arguments and sort keys that are NULL for some rows (nullif, CASE,
// the missing side of an outer join) and put them where NULL has rules
// of its own: group keys (one group), DISTINCT and set operations (equal
// to each other), join keys (equal to nothing), window partitions and
// orders, ORDER BY with NULLS FIRST|LAST, aggregates (skipped; NULL over
// no row). Also empty inputs, DECIMAL columns, DISTINCT aggregates,
// windows over an aggregation and top-n per group.

// nk is an expression over events (prefix p) that is NULL for some rows,
// of one of several types.
func (g *queryGen) nk(p string) both {
	return pair(strings.ReplaceAll(g.pick(
		"nullif(P.user_id % 7, 0)",
		"CASE WHEN P.amount > 8000 THEN NULL ELSE hour(P.event_time) END",
		"nullif(split_part(P.message, ' ', 1), 'view')",
		"CASE WHEN P.id % 3 = 0 THEN NULL ELSE to_date(P.event_time) END|CASE WHEN P.id % 3 = 0 THEN NULL ELSE CAST(P.event_time AS DATE) END",
		"CASE WHEN P.id % 4 = 0 THEN NULL ELSE P.amount > 5000 END",
		"nullif(round(P.amount / 1000, 1), 3.0)",
		"CASE WHEN P.user_id % 5 = 1 THEN NULL ELSE date_trunc(P.event_time, 'day') END|CASE WHEN P.user_id % 5 = 1 THEN NULL ELSE date_trunc('day', P.event_time) END",
		"CASE WHEN P.id % 6 = 0 THEN NULL ELSE CAST(P.amount AS DECIMAL(10, 1)) END",
		"nullif(P.id % 4, 2) * 1.5",
	), "P.", p))
}

// nagg is an aggregate of a NULL-bearing argument.
func (g *queryGen) nagg(p string) both {
	x := g.nk(p)
	f := g.pick("count(%s)", "count(DISTINCT %s)", "min(%s)", "max(%s)")
	if !strings.Contains(x.r, "split_part") && !strings.Contains(x.r, "to_date") && !strings.Contains(x.r, "date_trunc") && !strings.Contains(x.r, "> 5000 END") {
		f = g.pick(f, "sum(%s)", "avg(%s)", "sum(DISTINCT %s)")
	}
	if f == "avg(%s)" && isDecimalExpr(x.r) {
		return both{fmt.Sprintf(f, x.r), fmt.Sprintf(decimalAvg, x.d)}
	}
	return x.wrap(f)
}

// decimalAvg is avg of a DECIMAL in DuckDB as Doris computes it: a
// DECIMAL of scale max(s, 4), rounded half away from zero (DuckDB's avg
// is a DOUBLE: the nudge rounds its exact ties, such as .03375 held as
// .0337499..., the way the exact quotient rounds; the values are positive).
const decimalAvg = "round(avg(%s) * (1 + 1e-12), 4)"

// isDecimalExpr reports whether a generated expression is DECIMAL: a
// DECIMAL cast, or a literal with a fraction (Doris types 1.5 so).
func isDecimalExpr(e string) bool {
	return strings.Contains(e, "DECIMAL") || strings.Contains(e, "* 1.5")
}

func (g *queryGen) nullQuery() diffQuery {
	switch g.r.IntN(11) {
	case 0:
		// GROUP BY NULL-bearing keys.
		k1, k2 := g.nk(""), g.nk("")
		two := g.chance(0.5)
		a1, a2 := g.nagg(""), g.nagg("")
		w := g.where("")
		sel := both{"SELECT " + k1.r, "SELECT " + k1.d}
		gb := " GROUP BY 1"
		n := 1
		if two {
			sel = join2("%s, %s", sel, k2)
			gb, n = " GROUP BY 1, 2", 2
		}
		q := both{fmt.Sprintf("%s, count(*), %s, %s FROM events%s%s", sel.r, a1.r, a2.r, w.r, gb), fmt.Sprintf("%s, count(*), %s, %s FROM events%s%s", sel.d, a1.d, a2.d, w.d, gb)}
		if g.chance(0.3) {
			h := fmt.Sprintf(" HAVING count(*) > %d", g.r.IntN(100))
			q.r += h
			q.d += h
		}
		tail := " ORDER BY " + g.positions(n) + g.limit()
		return diffQuery{kind: "groupnull", rowttl: q.r + tail, duck: q.d + tail, ordered: true}
	case 1:
		// Set operations over NULL-bearing values: NULLs are one value.
		op := g.pick("UNION", "UNION ALL", "INTERSECT", "EXCEPT")
		k := g.nk("")
		a, b := g.pred("", 1), g.pred("", 1)
		f := "SELECT %s AS x FROM events WHERE %s %s SELECT %s AS x FROM events WHERE %s ORDER BY 1 %s NULLS %s LIMIT %d"
		dir, nl, lim := g.pick("ASC", "DESC"), g.pick("FIRST", "LAST"), 1+g.r.IntN(40)
		return diffQuery{kind: "setnull", rowttl: fmt.Sprintf(f, k.r, a.r, op, k.r, b.r, dir, nl, lim), duck: fmt.Sprintf(f, k.d, a.d, op, k.d, b.d, dir, nl, lim), ordered: true}
	case 2:
		// Joins on NULL-bearing keys: NULL joins nothing, outer joins
		// keep the row.
		kind := g.pick("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL OUTER JOIN")
		k := g.nk("")
		la, lb := 500+g.r.IntN(3000), 500+g.r.IntN(3000)
		f := "SELECT count(*), count(a.id), count(b.id), sum(a.id), max(b.id), count(DISTINCT a.k) FROM (SELECT id, %s AS k FROM events WHERE id < %d) a %s (SELECT id, %s AS k FROM events WHERE id < %d) b ON a.k = b.k AND a.id %% 50 = b.id %% 50"
		return diffQuery{kind: "joinnull", rowttl: fmt.Sprintf(f, k.r, la, kind, k.r, lb), duck: fmt.Sprintf(f, k.d, la, kind, k.d, lb)}
	case 3:
		// Windows partitioned and ordered by NULL-bearing keys.
		pk, ok := g.nk(""), g.nk("")
		fn := g.pick("row_number() OVER (PARTITION BY %s ORDER BY %s %s NULLS %s, id)",
			"rank() OVER (PARTITION BY %s ORDER BY %s %s NULLS %s)",
			"sum(amount) OVER (PARTITION BY %s ORDER BY %s %s NULLS %s, id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)",
			"count(*) OVER (PARTITION BY %s ORDER BY %s %s NULLS %s)",
			"lag(id, 1, -1) OVER (PARTITION BY %s ORDER BY %s %s NULLS %s, id)")
		dir, nl := g.pick("ASC", "DESC"), g.pick("FIRST", "LAST")
		lim := 300 + g.r.IntN(2000)
		q := both{fmt.Sprintf("SELECT id, "+fn+" AS w FROM events WHERE id < %d ORDER BY id LIMIT 60", pk.r, ok.r, dir, nl, lim),
			fmt.Sprintf("SELECT id, "+fn+" AS w FROM events WHERE id < %d ORDER BY id LIMIT 60", pk.d, ok.d, dir, nl, lim)}
		return diffQuery{kind: "winnull", rowttl: q.r, duck: q.d, ordered: true}
	case 4:
		// Top-n on a NULL-bearing key.
		k := g.nk("")
		w := g.where("")
		dir, nl := g.pick("ASC", "DESC"), g.pick("FIRST", "LAST")
		tail := fmt.Sprintf(" ORDER BY 2 %s NULLS %s, id %s LIMIT %d", dir, nl, g.pick("ASC", "DESC"), 1+g.r.IntN(50))
		if g.chance(0.5) {
			tail += fmt.Sprintf(" OFFSET %d", g.r.IntN(100))
		}
		return diffQuery{kind: "topnnull", rowttl: "SELECT id, " + k.r + " FROM events" + w.r + tail, duck: "SELECT id, " + k.d + " FROM events" + w.d + tail, ordered: true}
	case 5:
		// DISTINCT over NULL-bearing values.
		k1, k2 := g.nk(""), g.nk("")
		w := g.where("")
		tail := " ORDER BY " + g.positions(2) + g.limit()
		return diffQuery{kind: "distnull", rowttl: "SELECT DISTINCT " + k1.r + ", " + k2.r + " FROM events" + w.r + tail, duck: "SELECT DISTINCT " + k1.d + ", " + k2.d + " FROM events" + w.d + tail, ordered: true}
	case 6:
		// Aggregates over no row: one row without GROUP BY, none with.
		a := g.aggs("", 1+g.r.IntN(3))
		b := g.nagg("")
		empty := g.pick("id < 0", "amount > 1e9", "message = 'none'", "1 = 0")
		if g.chance(0.5) {
			return diffQuery{kind: "empty", rowttl: "SELECT " + a.r + ", " + b.r + " FROM events WHERE " + empty, duck: "SELECT " + a.d + ", " + b.d + " FROM events WHERE " + empty}
		}
		k := g.key("")
		return diffQuery{kind: "empty", rowttl: "SELECT " + k.r + ", " + a.r + " FROM events WHERE " + empty + " GROUP BY 1", duck: "SELECT " + k.d + ", " + a.d + " FROM events WHERE " + empty + " GROUP BY 1"}
	case 7:
		// DECIMAL columns: exact sums, averages, keys and arithmetic.
		dec := g.pick("CAST(amount AS DECIMAL(12, 2))", "CAST(amount / 7 AS DECIMAL(15, 4))", "CAST(user_id AS DECIMAL(18, 0)) / 1000")
		k := g.key("")
		w := g.where("")
		q := both{fmt.Sprintf("SELECT %s, sum(%s), avg(%s), min(%s), max(%s * 2) FROM events%s GROUP BY 1 ORDER BY 1 NULLS FIRST", k.r, dec, dec, dec, dec, w.r),
			fmt.Sprintf("SELECT %s, sum(%s), "+decimalAvg+", min(%s), max(%s * 2) FROM events%s GROUP BY 1 ORDER BY 1 NULLS FIRST", k.d, dec, dec, dec, dec, w.d)}
		if g.chance(0.4) {
			q = both{fmt.Sprintf("SELECT round(%s, 1) AS k, count(*), sum(%s) FROM events%s GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10", dec, dec, w.r),
				fmt.Sprintf("SELECT round(%s, 1) AS k, count(*), sum(%s) FROM events%s GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10", dec, dec, w.d)}
		}
		return diffQuery{kind: "decimal", rowttl: q.r, duck: q.d, ordered: true}
	case 8:
		// Windows over an aggregation.
		k := g.key("")
		w := g.where("")
		fn := g.pick("rank() OVER (ORDER BY sum(amount) DESC)", "sum(count(*)) OVER ()", "count(*) * 100 / sum(count(*)) OVER ()",
			"row_number() OVER (ORDER BY count(*) DESC, 1)", "lag(count(*)) OVER (ORDER BY 1)", "max(sum(amount)) OVER (ORDER BY 1 ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)")
		fnD := fn
		q := both{fmt.Sprintf("SELECT %s AS k, count(*), %s AS w FROM events%s GROUP BY 1 ORDER BY 1 NULLS FIRST", k.r, fn, w.r),
			fmt.Sprintf("SELECT %s AS k, count(*), %s AS w FROM events%s GROUP BY 1 ORDER BY 1 NULLS FIRST", k.d, fnD, w.d)}
		if strings.Contains(fn, "ORDER BY 1") || strings.Contains(fn, ", 1)") {
			// A position inside OVER is not a column position: order by
			// the key itself.
			q = both{strings.ReplaceAll(strings.ReplaceAll(q.r, "ORDER BY 1 ROWS", "ORDER BY "+k.r+" ROWS"), "ORDER BY 1)", "ORDER BY "+k.r+")"),
				strings.ReplaceAll(strings.ReplaceAll(q.d, "ORDER BY 1 ROWS", "ORDER BY "+k.d+" ROWS"), "ORDER BY 1)", "ORDER BY "+k.d+")")}
			q = both{strings.ReplaceAll(q.r, "DESC, 1)", "DESC, "+k.r+")"), strings.ReplaceAll(q.d, "DESC, 1)", "DESC, "+k.d+")")}
		}
		return diffQuery{kind: "winagg", rowttl: q.r, duck: q.d, ordered: true}
	case 9:
		// Top-n per group: a window in a subquery, filtered outside.
		k := g.key("")
		n := 1 + g.r.IntN(3)
		fn := g.pick("row_number", "rank", "dense_rank")
		w := g.where("")
		f := "SELECT k, id, amount, rn FROM (SELECT %s AS k, id, amount, %s() OVER (PARTITION BY %s ORDER BY amount DESC, id) AS rn FROM events%s) t WHERE rn <= %d ORDER BY k NULLS FIRST, rn, id LIMIT 80"
		return diffQuery{kind: "topgroup", rowttl: fmt.Sprintf(f, k.r, fn, k.r, w.r, n), duck: fmt.Sprintf(f, k.d, fn, k.d, w.d, n), ordered: true}
	default:
		// Anti join through LEFT JOIN ... IS NULL, and ON conditions on
		// the preserved side only.
		w := g.pred("e.", 1)
		var q both
		if g.chance(0.5) {
			f := "SELECT count(*), sum(e.amount), min(e.id) FROM events e LEFT JOIN users u ON e.user_id = u.user_id AND u.%s WHERE u.user_id IS NULL AND %s"
			// DuckDB takes a minute over the residual on users' side; the
			// filtered subquery is the same join.
			fd := "SELECT count(*), sum(e.amount), min(e.id) FROM events e LEFT JOIN (SELECT * FROM users WHERE %s) u ON e.user_id = u.user_id WHERE u.user_id IS NULL AND %s"
			c := g.pick("plan = 'pro'", "country = 'DE'", "user_id % 2 = 0")
			q = both{fmt.Sprintf(f, c, w.r), fmt.Sprintf(fd, c, w.d)}
		} else {
			f := "SELECT u.plan, count(*), count(u.user_id), sum(e.amount) FROM events e LEFT JOIN users u ON e.user_id = u.user_id AND e.%s WHERE %s GROUP BY u.plan ORDER BY 1 NULLS FIRST"
			// The same join for DuckDB, which is slow over a residual:
			// the condition turns the key NULL instead.
			fd := "SELECT u.plan, count(*), count(u.user_id), sum(e.amount) FROM events e LEFT JOIN users u ON CASE WHEN e.%s THEN e.user_id END = u.user_id WHERE %s GROUP BY u.plan ORDER BY 1 NULLS FIRST"
			c := g.pick("amount > 5000", "id % 3 = 0", "message LIKE 'view%'")
			q = both{fmt.Sprintf(f, c, w.r), fmt.Sprintf(fd, c, w.d)}
		}
		return diffQuery{kind: "antijoin", rowttl: q.r, duck: q.d, ordered: true}
	}
}
