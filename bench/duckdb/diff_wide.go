//go:build duckdb_arrow

package main

import (
	"fmt"
	"strings"
)

// The wide shapes: what SPEC §4 allows beyond the suite's kinds, as a
// Doris or DuckDB user writes it — three-way joins, joins on expressions
// and composite keys, subqueries in FROM, correlated EXISTS with
// non-equi conditions, IN over subqueries that yield NULLs, scalar
// subqueries in row queries, set operations ordered and limited as a
// whole, CTEs reading CTEs, GROUP BY of several expressions with HAVING
// on an alias, count(DISTINCT) of several arguments, window functions
// with frames and defaults, string, math, NULL, CAST and date functions
// (month and year ends, leap days), LIMIT forms and SELECT without FROM.
// Each pair spells the query in Doris (rowttl) and DuckDB; where they
// differ the DuckDB side is written to give the Doris answer.

// pair splits "rowttl|duckdb", or returns s for both.
func pair(s string) both {
	if i := strings.Index(s, "|"); i >= 0 {
		return both{s[:i], s[i+1:]}
	}
	return same(s)
}

func (g *queryGen) pickPair(xs ...string) both { return pair(g.pick(xs...)) }

// rowExpr is an expression over one events row (no prefix), in both
// dialects: string, math, NULL-handling and CAST functions.
func (g *queryGen) rowExpr() both {
	switch g.r.IntN(4) {
	case 0:
		return g.pickPair(
			"upper(message)", "lower(upper(message))",
			"length(message)|strlen(message)",
			"char_length(message)|length(message)",
			"substr(message, 3)", "substr(message, -4)", "substr(message, -6, 3)",
			"substr(message, 2, 5)", "substring(message, 4, 2)",
			"substr(message, 0, 3)|CASE WHEN message IS NULL THEN NULL ELSE '' END",
			"concat(message, '!', CAST(user_id AS VARCHAR))",
			"concat('[', trim(concat('  ', message, '  ')), ']')",
			"concat('[', ltrim(concat('  ', message, '  ')), ']')",
			"concat('[', rtrim(concat('  ', message, '  ')), ']')",
			"concat_ws('-', split_part(message, ' ', 1), NULL, split_part(message, '#', 2))",
			"split_part(message, '#', 2)",
			// Doris: NULL past the last field (DuckDB: '').
			"split_part(message, ' ', 3)|CASE WHEN len(string_split(message, ' ')) >= 3 THEN split_part(message, ' ', 3) END",
			"regexp_extract(message, '([a-z]+)_([a-z]+)', 2)",
			"replace(message, '#', 'No.')",
			"lpad(split_part(message, ' ', 1), 8, '*')",
			"rpad(split_part(message, ' ', 1), 8, '.')",
			"lpad(message, 3, 'x')|left(message, 3)",
			"left(message, 5)", "right(message, 3)",
			"reverse(split_part(message, ' ', 1))",
			"instr(message, '1')|instr(message, '1')",
			"locate('1', message)|instr(message, '1')",
			"concat(message, NULL)|message || NULL",
			"message LIKE concat(substr(message, 1, 3), '%')",
			"regexp_replace(message, '([a-z]+) #([0-9])', '\\\\2-\\\\1')|regexp_replace(message, '([a-z]+) #([0-9])', '\\2-\\1', 'g')",
			"regexp_replace(message, '[0-9]', '')|regexp_replace(message, '[0-9]', '', 'g')",
			"regexp_replace_one(message, '[0-9]', 'N')|regexp_replace(message, '[0-9]', 'N')",
			"starts_with(message, 'view')", "ends_with(message, '7')|suffix(message, '7')",
			"md5(message)",
			"str_to_date(concat('2025-', CAST(user_id % 12 + 1 AS VARCHAR), '-', CAST(id % 28 + 1 AS VARCHAR)), '%Y-%c-%e')|CAST(strptime(concat('2025-', CAST(user_id % 12 + 1 AS VARCHAR), '-', CAST(id % 28 + 1 AS VARCHAR)), '%Y-%-m-%-d') AS DATE)",
		)
	case 1:
		return g.pickPair(
			"abs(amount - 5000)", "round(amount)", "round(amount, 1)", "round(amount / 7, 3)",
			"floor(amount / 100)", "ceil(amount / 100)",
			"mod(user_id, 7)|user_id % 7", "-user_id % 7", "(user_id - 500000) % 7",
			"(user_id - 500000) DIV 7|(user_id - 500000) // 7", "user_id DIV -3|user_id // -3",
			"power(amount / 1000, 2)|pow(amount / 1000, 2)", "sqrt(amount)", "ln(amount)", "log10(amount)",
			"log(2, amount)|log2(amount)",
			"amount / 3", "id / 4", "user_id * 3 - id", "-amount",
			"amount % 7", "greatest(amount, 5000)", "least(user_id, id)",
		)
	case 2:
		return g.pickPair(
			"nullif(user_id % 3, 0)",
			"coalesce(nullif(user_id % 3, 0), -1)",
			"ifnull(nullif(hour(event_time) % 4, 0), 99)",
			"CASE WHEN amount > 5000 THEN NULL ELSE message END",
			"CASE nullif(user_id % 4, 0) WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'other' END",
			"CASE WHEN nullif(user_id % 3, 0) > 1 THEN 'big' WHEN nullif(user_id % 3, 0) IS NULL THEN 'none' END",
			"nullif(user_id % 5, 0) IN (1, NULL)",
			"nullif(user_id % 5, 0) NOT IN (1, 2, NULL)",
			"user_id % 5 NOT IN (1, 2)",
			"nullif(user_id % 5, 0) BETWEEN 1 AND 3",
			"nullif(user_id % 5, 0) NOT BETWEEN 2 AND 3",
			"nullif(user_id % 5, 0) IS NULL",
			"nullif(user_id % 5, 0) IS NOT NULL",
			"nullif(user_id % 5, 0) <=> nullif(id % 5, 0)|nullif(user_id % 5, 0) IS NOT DISTINCT FROM nullif(id % 5, 0)",
			"if(nullif(user_id % 2, 0) = 1, 'odd', NULL)|CASE WHEN nullif(user_id % 2, 0) = 1 THEN 'odd' ELSE NULL END",
			"NOT (nullif(user_id % 3, 0) = 1)",
			"(nullif(user_id % 3, 0) = 1) OR amount > 5000",
			"(nullif(user_id % 3, 0) = 1) AND amount > 5000",
		)
	default:
		return g.pickPair(
			"CAST(amount AS BIGINT)|CAST(trunc(amount) AS BIGINT)",
			"CAST(amount AS INT)|CAST(trunc(amount) AS INT)",
			"CAST(amount AS VARCHAR)",
			"CAST(user_id AS DOUBLE) / 3",
			"CAST(CAST(id AS VARCHAR) AS BIGINT) + 1",
			"CAST(split_part(message, '#', 2) AS BIGINT) % 1000",
			"CAST(concat(split_part(message, '#', 2), '.5') AS DOUBLE)",
			"CAST(event_time AS DATE)",
			"CAST(CAST(event_time AS DATE) AS DATETIME)|CAST(CAST(event_time AS DATE) AS TIMESTAMP)",
			"CAST(CAST(event_time AS VARCHAR) AS DATETIME(6))|CAST(CAST(event_time AS VARCHAR) AS TIMESTAMP)",
			"CAST(to_date(event_time) AS VARCHAR)|CAST(CAST(event_time AS DATE) AS VARCHAR)",
			"CAST(amount > 5000 AS INT)",
			"CAST(user_id % 2 AS BOOLEAN)",
			"CAST(amount AS DECIMAL(10, 1))",
			"CAST(amount AS DECIMAL(12, 3)) * 2",
			"CAST(user_id AS DECIMAL(20, 2)) / 4",
			"CAST(CAST(user_id % 100 AS VARCHAR) AS DOUBLE) / 8",
			"CAST(hour(event_time) AS VARCHAR)",
		)
	}
}

// dateExpr is a date function of event_time (which spans the turn of
// the year), in both dialects.
func (g *queryGen) dateExpr() both {
	n := 1 + g.r.IntN(14)
	return g.pickPair(
		fmt.Sprintf("date_add(event_time, INTERVAL %d MONTH)|event_time + INTERVAL %d MONTH", n, n),
		fmt.Sprintf("date_sub(event_time, INTERVAL %d MONTH)|event_time - INTERVAL %d MONTH", n, n),
		fmt.Sprintf("date_add(to_date(event_time), INTERVAL %d MONTH)|CAST(event_time AS DATE) + INTERVAL %d MONTH", n, n),
		fmt.Sprintf("date_add(event_time, INTERVAL %d YEAR)|event_time + INTERVAL %d YEAR", n, n),
		fmt.Sprintf("event_time - INTERVAL %d WEEK|event_time - INTERVAL %d WEEK", n, n),
		fmt.Sprintf("event_time + INTERVAL %d SECOND|event_time + INTERVAL %d SECOND", n*1000, n*1000),
		fmt.Sprintf("date_add(event_time, %d)|event_time + INTERVAL %d DAY", n*3, n*3),
		"quarter(event_time)", "dayofweek(event_time)|dayofweek(event_time) + 1", "dayofyear(event_time)",
		"weekofyear(event_time)|weekofyear(event_time)",
		"week(event_time)|CAST(strftime(event_time, '%U') AS INT)",
		"EXTRACT(WEEK FROM event_time)|CAST(strftime(event_time, '%U') AS INT)",
		"EXTRACT(QUARTER FROM event_time)|quarter(event_time)",
		"EXTRACT(MICROSECOND FROM event_time)|microsecond(event_time) % 1000000",
		"EXTRACT(DAY FROM event_time)",
		"dayname(event_time)|dayname(event_time)", "monthname(event_time)|monthname(event_time)",
		"weekday(event_time)|isodow(event_time) - 1",
		"days_diff('2026-01-01 00:00:00', event_time)|datesub('day', event_time, TIMESTAMP '2026-01-01 00:00:00')",
		"hours_diff(event_time, '2025-12-24 12:00:00')|datesub('hour', TIMESTAMP '2025-12-24 12:00:00', event_time)",
		"unix_timestamp(date_format(event_time, '%Y-%m-%d %H:%i:%s'), '%Y-%m-%d %H:%i:%s')|CAST(epoch(date_trunc('second', event_time)) AS BIGINT)",
		"year(event_time) * 1000 + dayofyear(event_time)",
		"datediff(event_time, '2025-12-31')|datediff('day', DATE '2025-12-31', event_time)",
		"datediff('2026-02-28', to_date(event_time))|datediff('day', CAST(event_time AS DATE), DATE '2026-02-28')",
		"timestampdiff(MONTH, event_time, '2026-03-31 00:00:00')|datesub('month', event_time, TIMESTAMP '2026-03-31 00:00:00')",
		"timestampdiff(YEAR, '2024-12-31 12:00:00', event_time)|datesub('year', TIMESTAMP '2024-12-31 12:00:00', event_time)",
		"timestampdiff(MINUTE, '2025-12-31 23:59:00', event_time)|datesub('minute', TIMESTAMP '2025-12-31 23:59:00', event_time)",
		"timestampdiff(SECOND, event_time, '2026-01-01 00:00:00')|datesub('second', event_time, TIMESTAMP '2026-01-01 00:00:00')",
		"timestampdiff(WEEK, '2025-12-01 00:00:00', event_time)|datesub('week', TIMESTAMP '2025-12-01 00:00:00', event_time)",
		"date_trunc(event_time, 'year')|date_trunc('year', event_time)",
		"date_trunc(event_time, 'quarter')|date_trunc('quarter', event_time)",
		"date_trunc(event_time, 'week')|date_trunc('week', event_time)",
		"date_trunc(event_time, 'second')|date_trunc('second', event_time)",
		"unix_timestamp(date_trunc(event_time, 'second'))|CAST(epoch(date_trunc('second', event_time)) AS BIGINT)",
		"unix_timestamp(to_date(event_time))|CAST(epoch(CAST(event_time AS DATE)) AS BIGINT)",
		"from_unixtime(1767225600 + id * 37)|strftime(make_timestamp((1767225600 + id * 37) * 1000000), '%Y-%m-%d %H:%M:%S')",
		"from_unixtime(1767225600 + id * 37, '%Y-%m-%d')|strftime(make_timestamp((1767225600 + id * 37) * 1000000), '%Y-%m-%d')",
		"date_format(event_time, '%Y %y %m %c %d %e %H %k %h %I %l %i %s %S %p')|strftime(event_time, '%Y %y %m %-m %d %-d %H %-H %I %I %-I %M %S %S %p')",
		"date_format(event_time, '%W %a %M %b %j %T')|strftime(event_time, '%A %a %B %b %j %H:%M:%S')",
		"date_format(event_time, '%r %f %%')|strftime(event_time, '%I:%M:%S %p %f %%')",
		"date_format(to_date(event_time), '%Y-%m-%d %H:%i:%s')|strftime(CAST(event_time AS DATE), '%Y-%m-%d %H:%M:%S')",
		"to_date(date_add(event_time, INTERVAL 1 MONTH))|CAST(event_time + INTERVAL 1 MONTH AS DATE)",
		"last_day(event_time)|last_day(event_time)",
		"month(date_add(event_time, INTERVAL 2 MONTH))|month(event_time + INTERVAL 2 MONTH)",
		"CAST(event_time AS DATE) = '2025-12-31'|CAST(event_time AS DATE) = DATE '2025-12-31'",
		"event_time >= '2026-01-01'|event_time >= TIMESTAMP '2026-01-01 00:00:00'",
	)
}

// A date near a month end (leap years too) and a time of day.
func (g *queryGen) edgeDate() string {
	y := g.pick("2023", "2024", "2025", "2000", "1900")
	m := 1 + g.r.IntN(12)
	days := []int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && (y == "2024" || y == "2000") {
		days = 29
	}
	d := days - g.r.IntN(3)
	if g.chance(0.2) {
		d = 1
	}
	return fmt.Sprintf("%s-%02d-%02d", y, m, d)
}

func (g *queryGen) edgeTime() string {
	return fmt.Sprintf("%s %02d:%02d:%02d", g.edgeDate(), g.pick2(0, 23, g.r.IntN(24)), g.r.IntN(60), g.r.IntN(60))
}

func (g *queryGen) pick2(a, b, c int) int {
	switch g.r.IntN(3) {
	case 0:
		return a
	case 1:
		return b
	}
	return c
}

// litExpr is an expression of literals for SELECT without FROM.
func (g *queryGen) litExpr() both {
	d, t := g.edgeDate(), g.edgeTime()
	d2, t2 := g.edgeDate(), g.edgeTime()
	n := 1 + g.r.IntN(13)
	unit := g.pick("DAY", "MONTH", "YEAR", "WEEK", "HOUR", "MINUTE", "SECOND")
	a, b := g.r.IntN(41)-20, g.r.IntN(19)-9
	if b == 0 {
		b = 7
	}
	return g.pickPair(
		fmt.Sprintf("date_add('%s', INTERVAL %d %s)|CAST('%s' AS DATE) + INTERVAL %d %s", d, n, unit, d, n, unit),
		fmt.Sprintf("date_sub('%s', INTERVAL %d %s)|CAST('%s' AS TIMESTAMP) - INTERVAL %d %s", t, n, unit, t, n, unit),
		fmt.Sprintf("datediff('%s', '%s')|datediff('day', DATE '%s', DATE '%s')", d, d2, d2, d),
		fmt.Sprintf("last_day('%s')|last_day(DATE '%s')", d, d),
		fmt.Sprintf("dayofyear('%s')|dayofyear(DATE '%s')", d, d),
		fmt.Sprintf("dayofweek('%s')|dayofweek(DATE '%s') + 1", d, d),
		fmt.Sprintf("week('%s')|CAST(strftime(DATE '%s', '%%U') AS INT)", d, d),
		fmt.Sprintf("weekofyear('%s')|weekofyear(DATE '%s')", d, d),
		fmt.Sprintf("quarter('%s')|quarter(DATE '%s')", d, d),
		fmt.Sprintf("EXTRACT(WEEK FROM CAST('%s' AS DATE))|CAST(strftime(DATE '%s', '%%U') AS INT)", d, d),
		fmt.Sprintf("EXTRACT(QUARTER FROM CAST('%s' AS DATETIME))|quarter(TIMESTAMP '%s')", t, t),
		fmt.Sprintf("EXTRACT(MICROSECOND FROM CAST('%s.%06d' AS DATETIME(6)))|%d", t, n*12345, n*12345),
		fmt.Sprintf("unix_timestamp('%s')|CAST(epoch(TIMESTAMP '%s') AS BIGINT)", t, t),
		fmt.Sprintf("from_unixtime(unix_timestamp('%s') + %d)|strftime(TIMESTAMP '%s' + INTERVAL %d SECOND, '%%Y-%%m-%%d %%H:%%M:%%S')", t, n*3600, t, n*3600),
		fmt.Sprintf("date_format('%s', '%%D %%U %%u %%v %%x %%X %%V %%w')|'§'", t),
		fmt.Sprintf("timestampdiff(MONTH, '%s', '%s')|datesub('month', TIMESTAMP '%s', TIMESTAMP '%s')", t, t2, t, t2),
		fmt.Sprintf("date_trunc('%s', 'week')|date_trunc('week', TIMESTAMP '%s')", t, t),
		fmt.Sprintf("CAST('%s' AS DATE)|CAST(TIMESTAMP '%s' AS DATE)", t, t),
		fmt.Sprintf("CAST(CAST('%s' AS DATETIME) AS VARCHAR)|strftime(TIMESTAMP '%s', '%%Y-%%m-%%d %%H:%%M:%%S')", t, t),
		fmt.Sprintf("%d DIV %d|%d // %d", a, b, a, b),
		fmt.Sprintf("%d %% %d", a, b),
		fmt.Sprintf("mod(%d, %d)|%d %% %d", a, b, a, b),
		fmt.Sprintf("%d / %d", a, b),
		fmt.Sprintf("round(%d.5)", a),
		fmt.Sprintf("round(%d / 4, 1)|round(%d / 4, 1)", a, a),
		fmt.Sprintf("abs(%d) + floor(%d.7) + ceil(%d.2)|abs(%d) + floor(%d.7) + ceil(%d.2)", a, b, a, a, b, a),
		fmt.Sprintf("CAST('%d' AS INT) + CAST('%d.25' AS DOUBLE)|CAST('%d' AS INT) + CAST('%d.25' AS DOUBLE)", a, b, a, b),
		fmt.Sprintf("CAST(%d.5 AS INT)|CAST(trunc(%d.5) AS INT)", a, a),
		fmt.Sprintf("CAST(%d AS BOOLEAN)", a),
		fmt.Sprintf("CAST('%s' AS BOOLEAN)", g.pick("true", "false", "TRUE", "1", "0")),
		// CAST(BOOLEAN AS VARCHAR) is left out: Doris's text for it
		// ('1'/'0' or 'true'/'false') is not SPEC's to say.
		fmt.Sprintf("CASE WHEN %d > %d THEN NULL WHEN %d < 0 THEN 'neg' END", a, b, a),
		fmt.Sprintf("coalesce(NULL, nullif(%d, %d), %d)", a, b, b),
		fmt.Sprintf("%d IN (%d, NULL)", a, b),
		fmt.Sprintf("%d NOT IN (%d, NULL)", a, b),
		fmt.Sprintf("NULL IN (%d)", a),
		fmt.Sprintf("%d BETWEEN %d AND 5", a, b),
		fmt.Sprintf("concat('x', %d, 'y')|concat('x', %d, 'y')", a, a),
		fmt.Sprintf("length('%s')|strlen('%s')", g.pick("héllo", "", "a b"), "§"),
		fmt.Sprintf("upper(substr('abcdefgh', %d, %d))", 1+g.r.IntN(6), g.r.IntN(5)),
	)
}

func (g *queryGen) wideQuery() diffQuery {
	switch g.r.IntN(18) {
	case 17:
		// Correlated scalar subqueries of one aggregate, in the select
		// list and in WHERE.
		a := g.pick("count(*)", "sum(e2.amount)", "max(e2.id)", "avg(e2.amount)", "min(e2.message)", "count(DISTINCT hour(e2.event_time))")
		// Correlated on equalities only: one with e2.id <> e.id is refused.
		c := g.pick("", " AND e2.amount > 5000", " AND e2.message LIKE 'view%'")
		u := g.pick("max(u.country)", "count(*)", "min(u.plan)", "u.country", "u.plan")
		w := g.pred("e.", 1)
		sub := fmt.Sprintf("(SELECT %s FROM events e2 WHERE e2.user_id = e.user_id%s)", a, c)
		usub := fmt.Sprintf("(SELECT %s FROM users u WHERE u.user_id = e.user_id)", u)
		if g.chance(0.5) {
			q := both{fmt.Sprintf("SELECT e.id, %s, %s FROM events e WHERE %s ORDER BY e.id LIMIT 40", sub, usub, w.r),
				fmt.Sprintf("SELECT e.id, %s, %s FROM events e WHERE %s ORDER BY e.id LIMIT 40", sub, usub, w.d)}
			return diffQuery{kind: "corrscalar", rowttl: q.r, duck: q.d, ordered: true}
		}
		f := "SELECT count(*), sum(e.amount), min(e.id) FROM events e WHERE e.amount %s (SELECT avg(e2.amount) FROM events e2 WHERE e2.user_id %% 100 = e.user_id %% 100%s) AND %s"
		op := g.pick(">", "<=")
		return diffQuery{kind: "corrscalar", rowttl: fmt.Sprintf(f, op, c, w.r), duck: fmt.Sprintf(f, op, c, w.d)}
	case 0:
		// Three tables: events, users and an aggregate of events (a CTE
		// or a subquery in FROM).
		w, w2 := g.pred("", 1), g.pred("e.", 1)
		sub := both{"SELECT user_id, count(*) AS n, sum(amount) AS total FROM events WHERE " + w.r + " GROUP BY user_id",
			"SELECT user_id, count(*) AS n, sum(amount) AS total FROM events WHERE " + w.d + " GROUP BY user_id"}
		kind := g.pick("JOIN", "LEFT JOIN")
		gk := g.pick("u.country", "u.plan", "u.country, u.plan", "s.n")
		nk := strings.Count(gk, ",") + 1
		sel := fmt.Sprintf("SELECT %s, count(*), sum(e.amount), max(s.n), sum(s.total), count(s.user_id) FROM events e JOIN users u ON e.user_id = u.user_id %s %%s ON s.user_id = e.user_id WHERE %%s GROUP BY %s ORDER BY %s", gk, kind, gk, g.positions(nk))
		sel = strings.ReplaceAll(sel, "%s", "\x00")
		var q both
		if g.chance(0.5) {
			q = both{"WITH s AS (" + sub.r + ") " + strings.Replace(strings.Replace(sel, "\x00", "s", 1), "\x00", w2.r, 1),
				"WITH s AS (" + sub.d + ") " + strings.Replace(strings.Replace(sel, "\x00", "s", 1), "\x00", w2.d, 1)}
		} else {
			q = both{strings.Replace(strings.Replace(sel, "\x00", "("+sub.r+") s", 1), "\x00", w2.r, 1),
				strings.Replace(strings.Replace(sel, "\x00", "("+sub.d+") s", 1), "\x00", w2.d, 1)}
		}
		return diffQuery{kind: "join3", rowttl: q.r, duck: q.d, ordered: true}
	case 1:
		// Joins on expressions and composite keys.
		w := g.pred("a.", 1)
		var q string
		switch g.r.IntN(4) {
		case 0:
			q = "SELECT u.country, count(*), sum(a.amount) FROM events a " + g.pick("JOIN", "LEFT JOIN") + " users u ON a.user_id % 1000 = u.user_id WHERE {W} GROUP BY u.country ORDER BY 1 NULLS FIRST"
		case 1:
			q = "SELECT count(*), sum(a.amount - b.amount), max(b.id) FROM events a JOIN events b ON a.user_id = b.user_id AND hour(a.event_time) = hour(b.event_time) AND a.id < b.id WHERE {W}"
		case 2:
			q = "SELECT u.plan, count(*), count(u.user_id), min(a.id) FROM events a " + g.pick("JOIN", "LEFT JOIN") + " users u ON a.user_id = u.user_id AND a.id % 6 = u.user_id % 6 WHERE {W} GROUP BY u.plan ORDER BY 1 NULLS LAST"
		default:
			q = "SELECT count(*), sum(u.user_id), min(u.country) FROM events a JOIN users u ON a.user_id + 1 = u.user_id - 1 WHERE {W}"
		}
		return diffQuery{kind: "joinexpr", rowttl: strings.Replace(q, "{W}", w.r, 1), duck: strings.Replace(q, "{W}", w.d, 1), ordered: true}
	case 2:
		// A subquery in FROM joined to a table.
		k := g.key("")
		w := g.pred("", 1)
		c := g.r.IntN(3)
		jk := g.pick("JOIN", "LEFT JOIN", "RIGHT JOIN")
		f := "SELECT u.plan, count(*), sum(t.s), min(t.n), count(DISTINCT t.k) FROM (SELECT user_id, %s AS k, count(*) AS n, sum(amount) AS s FROM events WHERE %s GROUP BY user_id, %s) t %s users u ON t.user_id = u.user_id WHERE t.n > %d GROUP BY u.plan ORDER BY 1 NULLS FIRST"
		q := both{fmt.Sprintf(f, k.r, w.r, k.r, jk, c), fmt.Sprintf(f, k.d, w.d, k.d, jk, c)}
		return diffQuery{kind: "fromsub", rowttl: q.r, duck: q.d, ordered: true}
	case 3:
		// Correlated EXISTS / NOT EXISTS with a non-equi condition.
		not := g.pick("", "NOT ")
		cond := g.pick(
			"FROM users u WHERE u.user_id = e.user_id AND u.user_id % 7 < e.id % 7",
			"FROM users u WHERE u.user_id = e.user_id AND u.plan = 'pro' AND e.amount > 3000",
			"FROM events e2 WHERE e2.user_id = e.user_id AND e2.id <> e.id",
			"FROM events e2 WHERE e2.user_id = e.user_id AND e2.amount > e.amount",
			"FROM events e2 WHERE e2.user_id = e.user_id AND e2.event_time < e.event_time - INTERVAL 1 DAY",
		)
		w := g.pred("e.", 1)
		q := both{fmt.Sprintf("SELECT count(*), sum(e.id), max(e.amount) FROM events e WHERE %sEXISTS (SELECT 1 %s) AND %s", not, cond, w.r),
			fmt.Sprintf("SELECT count(*), sum(e.id), max(e.amount) FROM events e WHERE %sEXISTS (SELECT 1 %s) AND %s", not, cond, w.d)}
		return diffQuery{kind: "exists2", rowttl: q.r, duck: q.d}
	case 4:
		// IN / NOT IN over subqueries that yield NULLs (or nothing).
		sub := g.pick(
			"SELECT CASE WHEN plan = 'pro' THEN NULL ELSE user_id END FROM users WHERE user_id < 500",
			"SELECT nullif(user_id, 7) FROM users WHERE user_id < 300",
			"SELECT user_id FROM users WHERE user_id < 0",
			"SELECT user_id FROM users WHERE user_id < 200",
			"SELECT u.user_id FROM events e LEFT JOIN users u ON e.user_id = u.user_id AND u.plan = 'pro' WHERE e.id < 100",
		)
		not := g.pick("", "NOT ")
		var q string
		if g.chance(0.5) {
			q = fmt.Sprintf("SELECT count(*), sum(amount) FROM events WHERE user_id %% 1000 %sIN (%s)", not, sub)
		} else {
			q = fmt.Sprintf("SELECT id, user_id %% 1000 %sIN (%s) FROM events ORDER BY id LIMIT 40", not, sub)
			return diffQuery{kind: "innull", rowttl: q, duck: q, ordered: true}
		}
		return diffQuery{kind: "innull", rowttl: q, duck: q}
	case 5:
		// Scalar subqueries in a row query.
		w := g.pred("", 0)
		a := g.agg("")
		q := both{
			fmt.Sprintf("SELECT id, amount - (SELECT avg(amount) FROM events WHERE %s), (SELECT %s FROM events WHERE %s), (SELECT user_id FROM users WHERE user_id = -1) FROM events WHERE amount > (SELECT avg(amount) FROM events WHERE %s) ORDER BY id LIMIT 30", w.r, a.r, w.r, w.r),
			fmt.Sprintf("SELECT id, amount - (SELECT avg(amount) FROM events WHERE %s), (SELECT %s FROM events WHERE %s), (SELECT user_id FROM users WHERE user_id = -1) FROM events WHERE amount > (SELECT avg(amount) FROM events WHERE %s) ORDER BY id LIMIT 30", w.d, a.d, w.d, w.d),
		}
		return diffQuery{kind: "scalar2", rowttl: q.r, duck: q.d, ordered: true}
	case 6:
		// Set operations ordered and limited as a whole.
		op := g.pick("UNION", "UNION ALL", "INTERSECT", "EXCEPT")
		col := g.pick("user_id % 100", g.word(""), "hour(event_time)", "to_date(event_time)|CAST(event_time AS DATE)", "user_id % 10, hour(event_time) % 3")
		c := pair(col)
		n := 1
		if strings.HasPrefix(col, "user_id % 10, ") {
			n = 2
		}
		a, b := g.pred("", 1), g.pred("", 1)
		tail := " ORDER BY " + g.positions(n) + " LIMIT " + fmt.Sprint(1+g.r.IntN(30))
		if g.chance(0.4) {
			tail += fmt.Sprintf(" OFFSET %d", g.r.IntN(10))
		}
		q := both{
			fmt.Sprintf("SELECT %s FROM events WHERE %s %s SELECT %s FROM events WHERE %s%s", c.r, a.r, op, c.r, b.r, tail),
			fmt.Sprintf("SELECT %s FROM events WHERE %s %s SELECT %s FROM events WHERE %s%s", c.d, a.d, op, c.d, b.d, tail),
		}
		if g.chance(0.3) {
			op2 := g.pick("UNION", "UNION ALL", "EXCEPT")
			x := g.pred("", 0)
			i := strings.Index(q.r, " ORDER BY")
			j := strings.Index(q.d, " ORDER BY")
			q.r = q.r[:i] + fmt.Sprintf(" %s SELECT %s FROM events WHERE %s", op2, c.r, x.r) + q.r[i:]
			q.d = q.d[:j] + fmt.Sprintf(" %s SELECT %s FROM events WHERE %s", op2, c.d, x.d) + q.d[j:]
			if strings.Contains(op, "INTERSECT") {
				// Precedence of INTERSECT differs in the standard; keep it
				// alone.
				q = both{q.r[:i] + q.r[strings.Index(q.r, " ORDER BY"):], q.d[:j] + q.d[strings.Index(q.d, " ORDER BY"):]}
			}
		}
		return diffQuery{kind: "setop2", rowttl: q.r, duck: q.d, ordered: true}
	case 7:
		// CTEs reading CTEs, and a CTE used twice.
		w := g.pred("", 1)
		k := g.key("")
		var q both
		if g.chance(0.5) {
			f := "WITH a AS (SELECT user_id, amount, id FROM events WHERE %s), b AS (SELECT user_id, count(*) AS n, sum(amount) AS s FROM a GROUP BY user_id) SELECT count(*), sum(b.n), max(b.s), count(DISTINCT a.user_id), min(a.id) FROM a JOIN b ON a.user_id = b.user_id WHERE b.n > %d"
			c := g.r.IntN(3)
			q = both{fmt.Sprintf(f, w.r, c), fmt.Sprintf(f, w.d, c)}
		} else {
			f := "WITH t AS (SELECT %s AS k, count(*) AS n, sum(amount) AS s FROM events WHERE %s GROUP BY %s), m AS (SELECT max(n) AS mx FROM t) SELECT x.k, x.n, y.s, m.mx FROM t x JOIN t y ON x.k = y.k CROSS JOIN m WHERE x.n >= (SELECT avg(n) FROM t) ORDER BY 1 NULLS FIRST LIMIT 25"
			q = both{fmt.Sprintf(f, k.r, w.r, k.r), fmt.Sprintf(f, k.d, w.d, k.d)}
			return diffQuery{kind: "cte2", rowttl: q.r, duck: q.d, ordered: true}
		}
		return diffQuery{kind: "cte2", rowttl: q.r, duck: q.d}
	case 8:
		// GROUP BY several expressions, HAVING on an alias.
		k1, k2 := g.key(""), g.key("")
		w := g.where("")
		c := g.r.IntN(50)
		gb := g.pick("a, b", "1, 2")
		hv := g.pick(fmt.Sprintf("n > %d", c), fmt.Sprintf("n > %d AND s > 1000", c), "s > (SELECT avg(amount) FROM events) * 3")
		tail := " ORDER BY " + g.positions(2) + g.limit()
		f := "SELECT %s AS a, %s AS b, count(*) AS n, sum(amount) AS s FROM events%s GROUP BY %s HAVING %s"
		q := both{fmt.Sprintf(f, k1.r, k2.r, w.r, gb, hv) + tail, fmt.Sprintf(f, k1.d, k2.d, w.d, gb, hv) + tail}
		return diffQuery{kind: "groupby2", rowttl: q.r, duck: q.d, ordered: true}
	case 9:
		// count(DISTINCT) of several arguments: rows where any is NULL
		// are not counted.
		args := g.pickPair(
			"user_id % 100, hour(event_time)|user_id % 100 IS NOT NULL AND hour(event_time) IS NOT NULL;;(user_id % 100, hour(event_time))",
			"split_part(message, ' ', 1), amount > 5000|split_part(message, ' ', 1) IS NOT NULL;;(split_part(message, ' ', 1), amount > 5000)",
			"to_date(event_time), nullif(user_id % 3, 0)|nullif(user_id % 3, 0) IS NOT NULL;;(CAST(event_time AS DATE), nullif(user_id % 3, 0))",
			"user_id % 7, id % 5, CASE WHEN amount > 8000 THEN NULL ELSE 1 END|amount <= 8000;;(user_id % 7, id % 5)",
		)
		parts := strings.SplitN(args.d, ";;", 2)
		d := fmt.Sprintf("count(DISTINCT CASE WHEN %s THEN %s END)", parts[0], parts[1])
		w := g.where("")
		if g.chance(0.5) {
			k := g.key("")
			q := both{fmt.Sprintf("SELECT %s, count(DISTINCT %s), count(*) FROM events%s GROUP BY 1 ORDER BY 1 NULLS FIRST", k.r, args.r, w.r),
				fmt.Sprintf("SELECT %s, %s, count(*) FROM events%s GROUP BY 1 ORDER BY 1 NULLS FIRST", k.d, d, w.d)}
			return diffQuery{kind: "cntdist", rowttl: q.r, duck: q.d, ordered: true}
		}
		q := both{fmt.Sprintf("SELECT count(DISTINCT %s), count(DISTINCT user_id), sum(amount) FROM events%s", args.r, w.r),
			fmt.Sprintf("SELECT %s, count(DISTINCT user_id), sum(amount) FROM events%s", d, w.d)}
		return diffQuery{kind: "cntdist", rowttl: q.r, duck: q.d}
	case 10, 11:
		// Window functions: several partition keys, DESC, frames,
		// min/max/avg/count OVER, lag/lead with defaults, the default
		// RANGE frame with peers.
		fn := g.pick(
			"sum(amount) OVER (PARTITION BY user_id % 3, hour(event_time) % 2 ORDER BY id DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
			"min(amount) OVER (PARTITION BY user_id % 4 ORDER BY id ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING)",
			"max(amount) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND 3 FOLLOWING)",
			"max(message) OVER (PARTITION BY user_id % 2 ORDER BY id DESC ROWS BETWEEN 2 FOLLOWING AND 4 FOLLOWING)",
			"avg(amount) OVER (PARTITION BY user_id % 5)",
			"avg(amount) OVER (PARTITION BY user_id % 5 ORDER BY id ROWS BETWEEN 3 PRECEDING AND 1 PRECEDING)",
			"count(*) OVER (PARTITION BY user_id % 2 ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)",
			"count(message) OVER (ORDER BY id ROWS 2 PRECEDING)",
			"count(nullif(user_id % 3, 0)) OVER (ORDER BY id ROWS BETWEEN 5 PRECEDING AND 5 FOLLOWING)",
			"sum(amount) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)",
			"lag(amount, 2, -1) OVER (PARTITION BY user_id % 3 ORDER BY id)",
			"lag(message, 1, 'none') OVER (ORDER BY id DESC)",
			"lead(user_id, 3, 0) OVER (PARTITION BY hour(event_time) % 3 ORDER BY event_time DESC, id DESC)",
			"lead(nullif(user_id % 3, 0)) OVER (ORDER BY id)",
			"rank() OVER (PARTITION BY user_id % 3 ORDER BY hour(event_time) DESC)",
			"dense_rank() OVER (PARTITION BY user_id % 2, id % 3 ORDER BY minute(event_time) % 10)",
			"sum(amount) OVER (PARTITION BY user_id % 3 ORDER BY hour(event_time))",
			"count(*) OVER (ORDER BY user_id % 7 DESC)",
			"min(id) OVER (PARTITION BY hour(event_time) % 4 ORDER BY user_id % 5)",
			"row_number() OVER (PARTITION BY hour(event_time) % 4, user_id % 2 ORDER BY amount DESC, id)",
		)
		w := g.pred("", 1)
		lim := fmt.Sprintf("id < %d", 200+g.r.IntN(3000))
		tail := fmt.Sprintf(" ORDER BY id %s LIMIT %d", g.pick("ASC", "DESC"), 10+g.r.IntN(40))
		q := both{
			fmt.Sprintf("SELECT id, %s AS w FROM events WHERE %s AND %s%s", fn, lim, w.r, tail),
			fmt.Sprintf("SELECT id, %s AS w FROM events WHERE %s AND %s%s", fn, lim, w.d, tail),
		}
		return diffQuery{kind: "window2", rowttl: q.r, duck: q.d, ordered: true}
	case 12, 13:
		// Functions row by row.
		e, f := g.rowExpr(), g.rowExpr()
		w := g.pred("", 1)
		q := both{
			fmt.Sprintf("SELECT id, %s, %s FROM events WHERE %s ORDER BY id LIMIT 30", e.r, f.r, w.r),
			fmt.Sprintf("SELECT id, %s, %s FROM events WHERE %s ORDER BY id LIMIT 30", e.d, f.d, w.d),
		}
		return diffQuery{kind: "rowfn", rowttl: q.r, duck: q.d, ordered: true}
	case 14:
		e, f := g.dateExpr(), g.dateExpr()
		w := g.pred("", 1)
		q := both{
			fmt.Sprintf("SELECT id, %s, %s FROM events WHERE %s ORDER BY id LIMIT 30", e.r, f.r, w.r),
			fmt.Sprintf("SELECT id, %s, %s FROM events WHERE %s ORDER BY id LIMIT 30", e.d, f.d, w.d),
		}
		return diffQuery{kind: "datefn2", rowttl: q.r, duck: q.d, ordered: true}
	case 15:
		// LIMIT forms, in the query and in a subquery.
		w := g.pred("", 1)
		m, n := g.r.IntN(60), g.r.IntN(25)
		var q both
		switch g.r.IntN(3) {
		case 0:
			q = both{fmt.Sprintf("SELECT id, amount FROM events WHERE %s ORDER BY id LIMIT %d, %d", w.r, m, n),
				fmt.Sprintf("SELECT id, amount FROM events WHERE %s ORDER BY id LIMIT %d OFFSET %d", w.d, n, m)}
		case 1:
			q = both{fmt.Sprintf("SELECT count(*), sum(x), min(x) FROM (SELECT amount AS x FROM events WHERE %s ORDER BY id DESC LIMIT %d OFFSET %d) t", w.r, n*10, m),
				fmt.Sprintf("SELECT count(*), sum(x), min(x) FROM (SELECT amount AS x FROM events WHERE %s ORDER BY id DESC LIMIT %d OFFSET %d) t", w.d, n*10, m)}
		default:
			q = both{fmt.Sprintf("SELECT id FROM events WHERE %s ORDER BY amount DESC, id LIMIT %d OFFSET %d", w.r, n, 50000+m),
				fmt.Sprintf("SELECT id FROM events WHERE %s ORDER BY amount DESC, id LIMIT %d OFFSET %d", w.d, n, 50000+m)}
		}
		return diffQuery{kind: "limit", rowttl: q.r, duck: q.d, ordered: true}
	default:
		// SELECT without FROM.
		var r, d []string
		for i := 0; i < 1+g.r.IntN(3); i++ {
			e := g.litExpr()
			if strings.Contains(e.d, "'§'") {
				continue // no DuckDB spelling: skipped
			}
			if strings.Contains(e.d, "§") {
				e.d = fillFromRowttl(e.r, e.d)
			}
			r, d = append(r, e.r), append(d, e.d)
		}
		if len(r) == 0 {
			r, d = []string{"1 + 1"}, []string{"1 + 1"}
		}
		return diffQuery{kind: "nofrom", rowttl: "SELECT " + strings.Join(r, ", "), duck: "SELECT " + strings.Join(d, ", "), ordered: true}
	}
}

// fillFromRowttl replaces each § of the DuckDB text with the next
// single-quoted literal or number argument of the rowttl text, for the
// expressions whose random arguments appear in the DuckDB spelling in
// another form.
func fillFromRowttl(r, d string) string {
	var args []string
	for i := 0; i < len(r); i++ {
		if r[i] == '\'' {
			j := strings.IndexByte(r[i+1:], '\'')
			args = append(args, r[i+1:i+1+j])
			i += j + 1
		}
	}
	for _, a := range args {
		if !strings.Contains(d, "§") {
			break
		}
		d = strings.Replace(d, "§", a, 1)
	}
	return d
}
