package sql

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRelAgainstModel checks joins, subqueries, WITH, derived tables and
// set operations against a plain Go evaluation of the same query over the
// same rows (SQL's NULL rules written out), compared as multisets. Table a
// has row TTL with expired rows mixed in; its key column is INT where b's
// is BIGINT, so that every join key is cast. ROWTTL_SEED=n replays one
// seed; ROWTTL_SOAK runs many.
func TestRelAgainstModel(t *testing.T) {
	if s := os.Getenv("ROWTTL_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		relModel(t, seed)
		return
	}
	for seed := range modelSeeds(4, 200) {
		relModel(t, seed+1)
	}
}

type relRow struct {
	id   int64
	k    *int64
	s    *string
	live bool
}

func relModel(t *testing.T, seed uint64) {
	t.Logf("seed %d (replay with ROWTTL_SEED=%d)", seed, seed)
	_, mustExec := modelSession(t, 4)
	mustExec("SET session_now = '2026-01-01 00:00:00'")
	mustExec(`CREATE TABLE a (id BIGINT, k INT NULL, s VARCHAR(5) NULL, et DATETIME NULL) DUPLICATE KEY(id)
		PROPERTIES ("function_column.enable_row_ttl" = "true", "function_column.ttl_col" = "et", "function_column.ttl" = "1 hour", "function_column.ttl_time_zone" = "UTC")`)
	mustExec(`CREATE TABLE b (id BIGINT, k BIGINT NULL, s STRING NULL) DUPLICATE KEY(id)`)
	rng := rand.New(rand.NewPCG(seed, 13))
	gen := func(name string, ttl bool) []relRow {
		n := rng.IntN(14)
		var rows []relRow
		var vals []string
		for i := 0; i < n; i++ {
			r := relRow{id: int64(i), live: true}
			f := []string{fmt.Sprint(i)}
			if rng.IntN(5) == 0 {
				f = append(f, "NULL")
			} else {
				v := int64(rng.IntN(5))
				r.k = &v
				f = append(f, fmt.Sprint(v))
			}
			if rng.IntN(5) == 0 {
				f = append(f, "NULL")
			} else {
				v := string(rune('x' + rng.IntN(3)))
				r.s = &v
				f = append(f, "'"+v+"'")
			}
			if ttl {
				switch rng.IntN(4) {
				case 0:
					f = append(f, "'2025-12-31 22:00:00'")
					r.live = false
				case 1:
					f = append(f, "NULL")
				default:
					f = append(f, "'2025-12-31 23:30:00'")
				}
			}
			rows = append(rows, r)
			vals = append(vals, "("+strings.Join(f, ", ")+")")
		}
		// Two inserts: two rowsets.
		for len(vals) > 0 {
			m := min(len(vals), 1+rng.IntN(len(vals)))
			mustExec("INSERT INTO " + name + " VALUES " + strings.Join(vals[:m], ", "))
			vals = vals[m:]
		}
		var live []relRow
		for _, r := range rows {
			if r.live {
				live = append(live, r)
			}
		}
		return live
	}
	a, b := gen("a", true), gen("b", false)
	for q := 0; q < 40; q++ {
		sql, want := relQuery(rng, a, b)
		res := mustExec(sql)
		var got []string
		for _, r := range res.Rows {
			got = append(got, strings.Join(r, "|"))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: %s\n got %v\nwant %v", seed, sql, got, want)
		}
	}
}

func nstr(p *int64) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprint(*p)
}

func eqK(x, y *int64) bool { return x != nil && y != nil && *x == *y }

// relQuery returns a random query over a and b and its model answer, one
// "|"-joined row per result row.
func relQuery(rng *rand.Rand, a, b []relRow) (string, []string) {
	vs := []string{"x", "y", "z"}
	v := vs[rng.IntN(3)]
	hasS := func(r relRow) bool { return r.s != nil && *r.s == v }
	var out []string
	switch rng.IntN(10) {
	case 0, 1:
		kinds := []string{"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"}
		kind := rng.IntN(4)
		extra, ex := "", func(x, y relRow) bool { return true }
		switch rng.IntN(3) {
		case 1:
			extra, ex = " AND a.s = b.s", func(x, y relRow) bool { return x.s != nil && y.s != nil && *x.s == *y.s }
		case 2:
			extra, ex = " AND a.id < b.id", func(x, y relRow) bool { return x.id < y.id }
		}
		where, wh := "", func(ai, bi *int64) bool { return true }
		if rng.IntN(2) == 0 {
			n := int64(rng.IntN(8))
			where = fmt.Sprintf(" WHERE a.id > %d", n)
			wh = func(ai, bi *int64) bool { return ai != nil && *ai > n }
		}
		sql := fmt.Sprintf("SELECT a.id, b.id FROM a %s b ON a.k = b.k%s%s", kinds[kind], extra, where)
		// A FULL JOIN ... USING (k) adds k, the coalesced key.
		using := kind == 3 && extra == "" && rng.IntN(2) == 0
		kcol := func(s string, _ *int64) string { return s }
		if using {
			sql = fmt.Sprintf("SELECT a.id, b.id, k FROM a FULL JOIN b USING (k)%s", where)
			kcol = func(s string, k *int64) string { return s + "|" + nstr(k) }
		}
		bMatched := make([]bool, len(b))
		for _, x := range a {
			m := false
			for j, y := range b {
				if eqK(x.k, y.k) && ex(x, y) {
					m, bMatched[j] = true, true
					if wh(&x.id, &y.id) {
						out = append(out, kcol(fmt.Sprintf("%d|%d", x.id, y.id), x.k))
					}
				}
			}
			if !m && (kind == 1 || kind == 3) && wh(&x.id, nil) {
				out = append(out, kcol(fmt.Sprintf("%d|NULL", x.id), x.k))
			}
		}
		if kind >= 2 {
			for j, y := range b {
				if !bMatched[j] && wh(nil, &y.id) {
					out = append(out, kcol(fmt.Sprintf("NULL|%d", y.id), y.k))
				}
			}
		}
		return sql, out
	case 2:
		sql := fmt.Sprintf("SELECT a.id, b.id FROM a, b WHERE a.k = b.k AND b.s = '%s'", v)
		for _, x := range a {
			for _, y := range b {
				if eqK(x.k, y.k) && hasS(y) {
					out = append(out, fmt.Sprintf("%d|%d", x.id, y.id))
				}
			}
		}
		return sql, out
	case 3:
		// [NOT] IN (subquery): a WHERE conjunct, correlated or not, or a
		// value of the select list (TRUE, FALSE or NULL).
		not := rng.IntN(2) == 0
		filter := rng.IntN(2) == 0
		// Mode 3 tests a's key column, id, which the subquery's range of
		// keys narrows in a's scan.
		mode := rng.IntN(4)
		var conds []string
		if filter {
			conds = append(conds, fmt.Sprintf("s = '%s'", v))
		}
		if mode == 1 {
			conds = append(conds, "b.id > a.id")
		}
		cond := ""
		if len(conds) > 0 {
			cond = " WHERE " + strings.Join(conds, " AND ")
		}
		op := "IN"
		if not {
			op = "NOT IN"
		}
		sql := fmt.Sprintf("SELECT id FROM a WHERE k %s (SELECT k FROM b%s)", op, cond)
		if mode == 3 {
			sql = fmt.Sprintf("SELECT id FROM a WHERE id %s (SELECT k FROM b%s)", op, cond)
		}
		if mode == 2 {
			sql = fmt.Sprintf("SELECT id, k %s (SELECT k FROM b%s) FROM a", op, cond)
		}
		for _, x := range a {
			var sub []relRow
			for _, y := range b {
				if (!filter || hasS(y)) && (mode != 1 || y.id > x.id) {
					sub = append(sub, y)
				}
			}
			xk := x.k
			if mode == 3 {
				id := x.id
				xk = &id
			}
			in, null := false, false
			for _, y := range sub {
				if y.k == nil {
					null = true
				} else if eqK(xk, y.k) {
					in = true
				}
			}
			// Three-valued: TRUE, FALSE or NULL ("").
			val := "false"
			switch {
			case in:
				val = "true"
			case len(sub) > 0 && (xk == nil || null):
				val = "NULL"
			}
			if not && val != "NULL" {
				val = map[string]string{"true": "false", "false": "true"}[val]
			}
			if mode == 2 {
				out = append(out, fmt.Sprintf("%d|%s", x.id, val))
			} else if val == "true" {
				out = append(out, fmt.Sprint(x.id))
			}
		}
		return sql, out
	case 4:
		not := rng.IntN(2) == 0
		prefix := "EXISTS"
		if not {
			prefix = "NOT EXISTS"
		}
		corr, cf := "", func(x, y relRow) bool { return true }
		if rng.IntN(2) == 0 {
			corr, cf = " AND b.id > a.id", func(x, y relRow) bool { return y.id > x.id }
		}
		sql := fmt.Sprintf("SELECT id FROM a WHERE %s (SELECT 1 FROM b WHERE b.k = a.k AND b.s = '%s'%s)", prefix, v, corr)
		for _, x := range a {
			e := false
			for _, y := range b {
				if eqK(x.k, y.k) && hasS(y) && cf(x, y) {
					e = true
				}
			}
			if e != not {
				out = append(out, fmt.Sprint(x.id))
			}
		}
		return sql, out
	case 5:
		ops := []string{"UNION ALL", "UNION", "INTERSECT", "EXCEPT"}
		op := rng.IntN(4)
		sql := fmt.Sprintf("SELECT k FROM a %s SELECT k FROM b", ops[op])
		as, bs := map[string]bool{}, map[string]bool{}
		for _, y := range b {
			bs[nstr(y.k)] = true
		}
		seen := map[string]bool{}
		switch op {
		case 0:
			for _, x := range a {
				out = append(out, nstr(x.k))
			}
			for _, y := range b {
				out = append(out, nstr(y.k))
			}
		case 1:
			for _, x := range a {
				as[nstr(x.k)] = true
			}
			for k := range as {
				seen[k] = true
			}
			for k := range bs {
				seen[k] = true
			}
			for k := range seen {
				out = append(out, k)
			}
		default:
			for _, x := range a {
				k := nstr(x.k)
				if !seen[k] && bs[k] == (op == 2) {
					out = append(out, k)
				}
				seen[k] = true
			}
		}
		return sql, out
	case 7:
		sql := "SELECT b.s, count(*), sum(a.id) FROM a JOIN b ON a.k = b.k GROUP BY b.s"
		type agg struct{ n, sum int64 }
		groups := map[string]*agg{}
		for _, x := range a {
			for _, y := range b {
				if eqK(x.k, y.k) {
					key := "NULL"
					if y.s != nil {
						key = *y.s
					}
					if groups[key] == nil {
						groups[key] = &agg{}
					}
					groups[key].n++
					groups[key].sum += x.id
				}
			}
		}
		for k, g := range groups {
			out = append(out, fmt.Sprintf("%s|%d|%d", k, g.n, g.sum))
		}
		return sql, out
	case 9:
		// GROUP BY one side's column over a join of any kind: grouped on
		// the build rows' ids when that side is the build side.
		kinds := []string{"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"}
		kind := rng.IntN(4)
		side := []string{"a", "b"}[rng.IntN(2)]
		sql := fmt.Sprintf("SELECT %s.s, count(*), sum(a.id) FROM a %s b ON a.k = b.k GROUP BY %s.s", side, kinds[kind], side)
		type agg struct {
			n   int
			sum *int64
		}
		groups := map[string]*agg{}
		add := func(x, y *relRow) {
			r := y
			if side == "a" {
				r = x
			}
			key := "NULL"
			if r != nil && r.s != nil {
				key = *r.s
			}
			g := groups[key]
			if g == nil {
				g = &agg{}
				groups[key] = g
			}
			g.n++
			if x != nil {
				if g.sum == nil {
					g.sum = new(int64)
				}
				*g.sum += x.id
			}
		}
		bMatched := make([]bool, len(b))
		for i := range a {
			m := false
			for j := range b {
				if eqK(a[i].k, b[j].k) {
					m, bMatched[j] = true, true
					add(&a[i], &b[j])
				}
			}
			if !m && (kind == 1 || kind == 3) {
				add(&a[i], nil)
			}
		}
		if kind >= 2 {
			for j := range b {
				if !bMatched[j] {
					add(nil, &b[j])
				}
			}
		}
		for k, g := range groups {
			out = append(out, fmt.Sprintf("%s|%d|%s", k, g.n, nstr(g.sum)))
		}
		return sql, out
	case 8:
		n := 1 + rng.IntN(4)
		sql := fmt.Sprintf("SELECT DISTINCT a.k FROM a LEFT JOIN b ON a.k = b.k WHERE b.id IS NULL OR b.s = '%s' ORDER BY 1 LIMIT %d", v, n)
		seen := map[string]bool{}
		var keys []*int64
		for _, x := range a {
			m, keep := false, false
			for _, y := range b {
				if eqK(x.k, y.k) {
					m = true
					if hasS(y) {
						keep = true
					}
				}
			}
			if (!m || keep) && !seen[nstr(x.k)] {
				seen[nstr(x.k)] = true
				keys = append(keys, x.k)
			}
		}
		slices.SortFunc(keys, func(p, q *int64) int {
			switch {
			case p == nil && q == nil:
				return 0
			case p == nil:
				return -1
			case q == nil:
				return 1
			}
			return int(*p - *q)
		})
		for i, k := range keys {
			if i < n {
				out = append(out, nstr(k))
			}
		}
		return sql, out
	default:
		sql := fmt.Sprintf("WITH c AS (SELECT id, k FROM a WHERE s = '%s') SELECT c.id, d.id, (SELECT s FROM b WHERE id = 2) FROM c JOIN (SELECT id, k FROM b) AS d ON c.k = d.k", v)
		sc := "NULL"
		for _, y := range b {
			if y.id == 2 && y.s != nil {
				sc = *y.s
			}
		}
		for _, x := range a {
			if !hasS(x) {
				continue
			}
			for _, y := range b {
				if eqK(x.k, y.k) {
					out = append(out, fmt.Sprintf("%d|%d|%s", x.id, y.id, sc))
				}
			}
		}
		return sql, out
	}
}
