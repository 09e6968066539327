package sql

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestWhereAgainstModel checks WHERE clauses, pushed down to zone maps and
// rows or evaluated by the executor, against a plain evaluation in Go of the
// same predicate over the same rows, in SQL's three-valued logic. Small
// pages make zone-map pruning decide often.
func TestWhereAgainstModel(t *testing.T) {
	for seed := range modelSeeds(3, 200) {
		whereModel(t, seed+1)
	}
}

func whereModel(t *testing.T, seed uint64) {
	_, mustExec := modelSession(t, 8)
	mustExec("SET session_now = '2026-01-01 00:00:00'")
	mustExec(`CREATE TABLE w (id BIGINT, a INT, b DOUBLE, c VARCHAR(10), ttl_src DATETIME, e BOOLEAN) DUPLICATE KEY(id)
		PROPERTIES ("function_column.enable_row_ttl" = "true")`)
	rng := rand.New(rand.NewPCG(seed, 6))
	type row struct {
		a    *int64
		b    *float64
		c    *string
		e    *bool
		live bool
	}
	var rows []row
	for batch := 0; batch < 6; batch++ {
		var vals []string
		for i := 0; i < 40; i++ {
			var r row
			fields := []string{fmt.Sprint(len(rows))}
			if rng.IntN(6) == 0 {
				fields = append(fields, "NULL")
			} else {
				v := int64(rng.IntN(20) - 5 + batch*3)
				r.a = &v
				fields = append(fields, fmt.Sprint(v))
			}
			if rng.IntN(6) == 0 {
				fields = append(fields, "NULL")
			} else {
				v := float64(rng.IntN(100)) / 4
				r.b = &v
				fields = append(fields, fmt.Sprint(v))
			}
			if rng.IntN(6) == 0 {
				fields = append(fields, "NULL")
			} else {
				v := string(rune('a' + rng.IntN(6)))
				r.c = &v
				fields = append(fields, "'"+v+"'")
			}
			fields = append(fields, "NULL")
			if rng.IntN(4) == 0 {
				fields = append(fields, "NULL")
			} else {
				v := rng.IntN(2) == 0
				r.e = &v
				fields = append(fields, fmt.Sprint(v))
			}
			// Half the rows expired already: written with a past expiration.
			r.live = rng.IntN(2) == 0
			if r.live {
				fields = append(fields, "NULL")
			} else {
				fields = append(fields, "1")
			}
			rows = append(rows, r)
			vals = append(vals, "("+strings.Join(fields, ", ")+")")
		}
		mustExec("INSERT INTO w (id, a, b, c, ttl_src, e, __TTL__) VALUES " + strings.Join(vals, ", "))
	}

	type tv int // 0 false, 1 true, 2 null
	cmpNum := func(x *float64, op string, k float64) tv {
		if x == nil {
			return 2
		}
		v := *x
		ok := map[string]bool{"=": v == k, "<>": v != k, "<": v < k, "<=": v <= k, ">": v > k, ">=": v >= k}[op]
		if ok {
			return 1
		}
		return 0
	}
	var gen func(depth int) (string, func(r row) tv)
	gen = func(depth int) (string, func(r row) tv) {
		if depth > 0 && rng.IntN(3) > 0 {
			l, lf := gen(depth - 1)
			rr, rf := gen(depth - 1)
			switch rng.IntN(3) {
			case 0:
				return "(" + l + " AND " + rr + ")", func(r row) tv {
					x, y := lf(r), rf(r)
					if x == 0 || y == 0 {
						return 0
					}
					if x == 2 || y == 2 {
						return 2
					}
					return 1
				}
			case 1:
				return "(" + l + " OR " + rr + ")", func(r row) tv {
					x, y := lf(r), rf(r)
					if x == 1 || y == 1 {
						return 1
					}
					if x == 2 || y == 2 {
						return 2
					}
					return 0
				}
			default:
				return "NOT (" + l + ")", func(r row) tv {
					switch x := lf(r); x {
					case 2:
						return 2
					default:
						return 1 - x
					}
				}
			}
		}
		ops := []string{"=", "<>", "<", "<=", ">", ">="}
		op := ops[rng.IntN(len(ops))]
		switch rng.IntN(7) {
		case 6:
			// An integer column against a DECIMAL literal: exact.
			k := float64(rng.IntN(120))/4 - 5
			return fmt.Sprintf("a %s %v", op, k), func(r row) tv {
				if r.a == nil {
					return 2
				}
				f := float64(*r.a)
				return cmpNum(&f, op, k)
			}
		case 5:
			k := rng.IntN(2) == 0
			op := []string{"=", "<>"}[rng.IntN(2)]
			return fmt.Sprintf("e %s %v", op, k), func(r row) tv {
				if r.e == nil {
					return 2
				}
				if (*r.e == k) == (op == "=") {
					return 1
				}
				return 0
			}
		case 0:
			k := rng.IntN(30) - 5
			return fmt.Sprintf("a %s %d", op, k), func(r row) tv {
				if r.a == nil {
					return 2
				}
				f := float64(*r.a)
				return cmpNum(&f, op, float64(k))
			}
		case 1:
			k := float64(rng.IntN(100)) / 4
			return fmt.Sprintf("b %s %v", op, k), func(r row) tv { return cmpNum(r.b, op, k) }
		case 2:
			k := string(rune('a' + rng.IntN(6)))
			return fmt.Sprintf("c %s '%s'", op, k), func(r row) tv {
				if r.c == nil {
					return 2
				}
				c := strings.Compare(*r.c, k)
				ok := map[string]bool{"=": c == 0, "<>": c != 0, "<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[op]
				if ok {
					return 1
				}
				return 0
			}
		case 3:
			col := []string{"a", "b", "c"}[rng.IntN(3)]
			not := rng.IntN(2) == 0
			q := col + " IS NULL"
			if not {
				q = col + " IS NOT NULL"
			}
			return q, func(r row) tv {
				isNull := map[string]bool{"a": r.a == nil, "b": r.b == nil, "c": r.c == nil}[col]
				if isNull != not {
					return 1
				}
				return 0
			}
		default:
			k := rng.IntN(30) - 5
			return fmt.Sprintf("a + 0 %s %d", op, k), func(r row) tv {
				if r.a == nil {
					return 2
				}
				f := float64(*r.a)
				return cmpNum(&f, op, float64(k))
			}
		}
	}
	for i := 0; i < 300; i++ {
		pred, eval := gen(3)
		want := 0
		for _, r := range rows {
			if r.live && eval(r) == 1 {
				want++
			}
		}
		res := mustExec("SELECT count(*) FROM w WHERE " + pred)
		if got := res.Rows[0][0]; got != fmt.Sprint(want) {
			t.Fatalf("seed %d: WHERE %s: count %s, want %d", seed, pred, got, want)
		}
		// The rows themselves, every column, as the shell prints them.
		var wantRows []string
		for id, r := range rows {
			if r.live && eval(r) == 1 {
				wantRows = append(wantRows, strings.Join([]string{fmt.Sprint(id), show(r.a), show(r.b), show(r.c), show(r.e)}, "|"))
			}
		}
		res = mustExec("SELECT id, a, b, c, e FROM w WHERE " + pred + " ORDER BY id")
		var gotRows []string
		for _, r := range res.Rows {
			gotRows = append(gotRows, strings.Join(r, "|"))
		}
		if strings.Join(gotRows, "\n") != strings.Join(wantRows, "\n") {
			t.Fatalf("seed %d: WHERE %s: rows\n%s\nwant\n%s", seed, pred, strings.Join(gotRows, "\n"), strings.Join(wantRows, "\n"))
		}
		// And grouped: per value of c (NULL first), count(*), count(a),
		// sum(a), min(b), max(b), count(e).
		type agg struct {
			n, na, sumA, ne int64
			minB, maxB      *float64
		}
		groups := map[string]*agg{}
		for _, r := range rows {
			if !r.live || eval(r) != 1 {
				continue
			}
			k := show(r.c)
			g := groups[k]
			if g == nil {
				g = &agg{}
				groups[k] = g
			}
			g.n++
			if r.a != nil {
				g.na++
				g.sumA += *r.a
			}
			if r.b != nil {
				if g.minB == nil || *r.b < *g.minB {
					g.minB = r.b
				}
				if g.maxB == nil || *r.b > *g.maxB {
					g.maxB = r.b
				}
			}
			if r.e != nil {
				g.ne++
			}
		}
		keys := make([]string, 0, len(groups))
		for k := range groups {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(x, y string) int {
			if (x == "NULL") != (y == "NULL") {
				if x == "NULL" {
					return -1
				}
				return 1
			}
			return strings.Compare(x, y)
		})
		var wantGroups []string
		for _, k := range keys {
			g := groups[k]
			sumA := "NULL"
			if g.na > 0 {
				sumA = fmt.Sprint(g.sumA)
			}
			wantGroups = append(wantGroups, strings.Join([]string{k, fmt.Sprint(g.n), fmt.Sprint(g.na), sumA, show(g.minB), show(g.maxB), fmt.Sprint(g.ne)}, "|"))
		}
		res = mustExec("SELECT c, count(*), count(a), sum(a), min(b), max(b), count(e) FROM w WHERE " + pred + " GROUP BY c ORDER BY c")
		gotRows = gotRows[:0]
		for _, r := range res.Rows {
			gotRows = append(gotRows, strings.Join(r, "|"))
		}
		if strings.Join(gotRows, "\n") != strings.Join(wantGroups, "\n") {
			t.Fatalf("seed %d: WHERE %s GROUP BY c: rows\n%s\nwant\n%s", seed, pred, strings.Join(gotRows, "\n"), strings.Join(wantGroups, "\n"))
		}
		// Ordered by a nullable column either way, then id, with LIMIT and
		// OFFSET: NULLs come first ascending and last descending.
		desc := rng.IntN(2) == 0
		limit, offset := 1+rng.IntN(10), rng.IntN(5)
		var ids []int
		for id, r := range rows {
			if r.live && eval(r) == 1 {
				ids = append(ids, id)
			}
		}
		slices.SortStableFunc(ids, func(x, y int) int {
			bx, by := rows[x].b, rows[y].b
			c := 0
			switch {
			case bx == nil && by == nil:
			case bx == nil:
				c = -1
			case by == nil:
				c = 1
			case *bx < *by:
				c = -1
			case *bx > *by:
				c = 1
			}
			if desc {
				c = -c
			}
			if c == 0 {
				c = x - y
			}
			return c
		})
		wantIDs := []string{}
		for i := offset; i < len(ids) && i < offset+limit; i++ {
			wantIDs = append(wantIDs, fmt.Sprint(ids[i]))
		}
		dir := "ASC"
		if desc {
			dir = "DESC"
		}
		res = mustExec(fmt.Sprintf("SELECT id FROM w WHERE %s ORDER BY b %s, id LIMIT %d OFFSET %d", pred, dir, limit, offset))
		gotIDs := []string{}
		for _, r := range res.Rows {
			gotIDs = append(gotIDs, r[0])
		}
		if strings.Join(gotIDs, ",") != strings.Join(wantIDs, ",") {
			t.Fatalf("seed %d: WHERE %s ORDER BY b %s, id LIMIT %d OFFSET %d: %v, want %v", seed, pred, dir, limit, offset, gotIDs, wantIDs)
		}
	}
}

// show prints a model value as the shell prints it.
func show[T any](v *T) string {
	if v == nil {
		return "NULL"
	}
	return fmt.Sprint(*v)
}
