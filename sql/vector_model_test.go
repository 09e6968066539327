package sql

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rowttl/rowttl/exec"
)

// TestVectorisedAgainstModel runs random SELECTs (expressions over every
// column kind in the select list and WHERE, LIMIT and OFFSET) on the
// vectorised engine and compares their printed rows with a plain Go
// evaluation of the same expressions over the same rows. Half the rows are
// expired and must never show; small pages make the pushed filter skip
// pages often.
func TestVectorisedAgainstModel(t *testing.T) {
	for seed := range modelSeeds(4, 300) {
		vectorModel(t, seed+1)
	}
}

// mv is a model value: NULL, or one of an integer, a float, a string, a
// boolean, a date (days), a datetime (µs) or a DECIMAL(8,2) (unscaled).
type mv struct {
	null bool
	k    byte // 'i' 'f' 's' 'b' 'd' 't' 'm'
	i    int64
	f    float64
	s    string
	sc   int // the scale of a DECIMAL
}

func (v mv) text() string {
	if v.null {
		return "NULL"
	}
	switch v.k {
	case 'i':
		return strconv.FormatInt(v.i, 10)
	case 'f':
		// SPEC §4: an exponent only below 1e-6 and from 1e16 up.
		if a := math.Abs(v.f); a != 0 && (a < 1e-6 || a >= 1e16) {
			return strconv.FormatFloat(v.f, 'g', -1, 64)
		}
		return strconv.FormatFloat(v.f, 'f', -1, 64)
	case 's':
		return v.s
	case 'b':
		if v.i != 0 {
			return "true"
		}
		return "false"
	case 'd':
		return time.Unix(v.i*86400, 0).UTC().Format("2006-01-02")
	case 't':
		return time.UnixMicro(v.i).UTC().Format("2006-01-02 15:04:05")
	case 'm':
		sign, u := "", v.i
		if u < 0 {
			sign, u = "-", -u
		}
		if v.sc == 0 {
			return sign + strconv.FormatInt(u, 10)
		}
		p := pow10i(v.sc)
		return fmt.Sprintf("%s%d.%0*d", sign, u/p, v.sc, u%p)
	}
	return "?"
}

// num is a numeric value as float (decimals scaled).
func (v mv) num() float64 {
	switch v.k {
	case 'f':
		return v.f
	case 'm':
		return float64(v.i) / float64(pow10i(v.sc))
	}
	return float64(v.i)
}

func pow10i(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// asDec reads an integer or DECIMAL model value as unscaled at scale sc
// (at least its own).
func (v mv) asDec(sc int) int64 {
	if v.k == 'm' {
		return v.i * pow10i(sc-v.sc)
	}
	return v.i * pow10i(sc)
}

func (v mv) scale() int {
	if v.k == 'm' {
		return v.sc
	}
	return 0
}

// cmpExact compares two integer or DECIMAL model values exactly.
func cmpExact(a, b mv) int {
	sc := max(a.scale(), b.scale())
	return cmp3(a.asDec(sc), b.asDec(sc))
}

var mnull = mv{null: true}

func mbool(b bool) mv {
	if b {
		return mv{k: 'b', i: 1}
	}
	return mv{k: 'b'}
}

// mexpr is a generated expression: its SQL, its model kind and its
// evaluation over a row.
type mexpr struct {
	sql  string
	k    byte
	eval func(r []mv) mv
}

type vmGen struct {
	rng *rand.Rand
}

// column slots of the model table.
var vmCols = []struct {
	name string
	k    byte
}{{"id", 'i'}, {"i", 'i'}, {"t", 'i'}, {"d", 'f'}, {"m", 'm'}, {"s", 's'}, {"dt", 'd'}, {"ts", 't'}, {"b", 'b'}}

func (g *vmGen) col(k byte) mexpr {
	var idx []int
	for i, c := range vmCols {
		// 'n' is any number.
		if c.k == k || (k == 'n' && (c.k == 'i' || c.k == 'f' || c.k == 'm')) {
			idx = append(idx, i)
		}
	}
	i := idx[g.rng.IntN(len(idx))]
	return mexpr{sql: vmCols[i].name, k: vmCols[i].k, eval: func(r []mv) mv { return r[i] }}
}

// intExpr is a BIGINT expression whose values stay far from overflow.
func (g *vmGen) intExpr(depth int) mexpr {
	if depth == 0 || g.rng.IntN(3) == 0 {
		if g.rng.IntN(3) == 0 {
			k := int64(g.rng.IntN(40) - 10)
			return mexpr{sql: strconv.FormatInt(k, 10), k: 'i', eval: func([]mv) mv { return mv{k: 'i', i: k} }}
		}
		return g.col('i')
	}
	l, r := g.intExpr(depth-1), g.intExpr(depth-1)
	ops := []string{"+", "-", "*", "%", "DIV"}
	op := ops[g.rng.IntN(len(ops))]
	return mexpr{sql: "(" + l.sql + " " + op + " " + r.sql + ")", k: 'i', eval: func(row []mv) mv {
		a, b := l.eval(row), r.eval(row)
		if a.null || b.null {
			return mnull
		}
		switch op {
		case "+":
			return mv{k: 'i', i: a.i + b.i}
		case "-":
			return mv{k: 'i', i: a.i - b.i}
		case "*":
			return mv{k: 'i', i: a.i * b.i}
		}
		if b.i == 0 {
			return mnull
		}
		if op == "%" {
			return mv{k: 'i', i: a.i % b.i}
		}
		return mv{k: 'i', i: a.i / b.i}
	}}
}

// decExpr is a DECIMAL expression of small scale: + - * over the DECIMAL
// column, integers and DECIMAL literals of other scales, in Doris's result
// types (scale max(s1,s2) for + -, s1+s2 for *); at depth 0 also / (scale
// s1+4, half away from zero) and % (the dividend's sign).
func (g *vmGen) decExpr(depth int, top bool) mexpr {
	leaf := func() mexpr {
		switch g.rng.IntN(4) {
		case 0:
			u, sc := int64(g.rng.IntN(400)-200), 1+g.rng.IntN(2)
			v := mv{k: 'm', i: u, sc: sc}
			return mexpr{sql: v.text(), k: 'm', eval: func([]mv) mv { return v }}
		case 1:
			return g.intExpr(0)
		}
		return g.col('m')
	}
	if depth == 0 {
		return leaf()
	}
	var l, r mexpr
	l = g.decExpr(depth-1, false)
	if g.rng.IntN(2) == 0 {
		r = leaf()
	} else {
		r = g.decExpr(depth-1, false)
	}
	if l.k != 'm' && r.k != 'm' {
		l = g.col('m')
	}
	ops := []string{"+", "-", "*"}
	if top {
		ops = append(ops, "/", "%")
	}
	op := ops[g.rng.IntN(len(ops))]
	return mexpr{sql: "(" + l.sql + " " + op + " " + r.sql + ")", k: 'm', eval: func(row []mv) mv {
		a, b := l.eval(row), r.eval(row)
		if a.null || b.null {
			return mnull
		}
		sc := max(a.scale(), b.scale())
		switch op {
		case "+":
			return mv{k: 'm', i: a.asDec(sc) + b.asDec(sc), sc: sc}
		case "-":
			return mv{k: 'm', i: a.asDec(sc) - b.asDec(sc), sc: sc}
		case "*":
			return mv{k: 'm', i: a.asDec(a.scale()) * b.asDec(b.scale()), sc: a.scale() + b.scale()}
		}
		if b.i == 0 {
			return mnull
		}
		if op == "%" {
			return mv{k: 'm', i: a.asDec(sc) % b.asDec(sc), sc: sc}
		}
		num, den := a.asDec(a.scale())*pow10i(b.scale()+4), b.asDec(b.scale())
		q, rem := num/den, num%den
		if rem < 0 {
			rem = -rem
		}
		if 2*rem >= max(den, -den) {
			if (num < 0) != (den < 0) {
				q--
			} else {
				q++
			}
		}
		return mv{k: 'm', i: q, sc: a.scale() + 4}
	}}
}

// floatExpr is a DOUBLE expression.
func (g *vmGen) floatExpr(depth int) mexpr {
	if depth == 0 || g.rng.IntN(3) == 0 {
		switch g.rng.IntN(3) {
		case 0:
			k := float64(g.rng.IntN(40)-10) / 4
			return mexpr{sql: strconv.FormatFloat(k, 'e', -1, 64), k: 'f', eval: func([]mv) mv { return mv{k: 'f', f: k} }}
		case 1:
			c := g.col('m')
			return mexpr{sql: "CAST(" + c.sql + " AS DOUBLE)", k: 'f', eval: func(r []mv) mv {
				v := c.eval(r)
				if v.null {
					return mnull
				}
				return mv{k: 'f', f: v.num()}
			}}
		}
		return g.col('f')
	}
	var l, r mexpr
	if g.rng.IntN(2) == 0 {
		l, r = g.floatExpr(depth-1), g.intExpr(depth-1)
	} else {
		l, r = g.intExpr(depth-1), g.floatExpr(depth-1)
	}
	ops := []string{"+", "-", "*", "/"}
	op := ops[g.rng.IntN(len(ops))]
	return mexpr{sql: "(" + l.sql + " " + op + " " + r.sql + ")", k: 'f', eval: func(row []mv) mv {
		a, b := l.eval(row), r.eval(row)
		if a.null || b.null {
			return mnull
		}
		x, y := a.num(), b.num()
		switch op {
		case "+":
			return mv{k: 'f', f: x + y}
		case "-":
			return mv{k: 'f', f: x - y}
		case "*":
			return mv{k: 'f', f: x * y}
		}
		if y == 0 {
			return mnull
		}
		return mv{k: 'f', f: x / y}
	}}
}

func cmpHolds(op string, c int) bool {
	switch op {
	case "=":
		return c == 0
	case "<>":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

func cmp3[T int64 | float64 | string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// boolExpr is a condition in three-valued logic.
func (g *vmGen) boolExpr(depth int) mexpr {
	ops := []string{"=", "<>", "<", "<=", ">", ">="}
	op := ops[g.rng.IntN(len(ops))]
	if depth > 0 && g.rng.IntN(2) == 0 {
		l, r := g.boolExpr(depth-1), g.boolExpr(depth-1)
		switch g.rng.IntN(3) {
		case 0:
			return mexpr{sql: "(" + l.sql + " AND " + r.sql + ")", k: 'b', eval: func(row []mv) mv {
				a, b := l.eval(row), r.eval(row)
				switch {
				case (!a.null && a.i == 0) || (!b.null && b.i == 0):
					return mbool(false)
				case a.null || b.null:
					return mnull
				}
				return mbool(true)
			}}
		case 1:
			return mexpr{sql: "(" + l.sql + " OR " + r.sql + ")", k: 'b', eval: func(row []mv) mv {
				a, b := l.eval(row), r.eval(row)
				switch {
				case (!a.null && a.i != 0) || (!b.null && b.i != 0):
					return mbool(true)
				case a.null || b.null:
					return mnull
				}
				return mbool(false)
			}}
		}
		return mexpr{sql: "NOT " + l.sql, k: 'b', eval: func(row []mv) mv {
			a := l.eval(row)
			if a.null {
				return a
			}
			return mbool(a.i == 0)
		}}
	}
	switch g.rng.IntN(10) {
	case 8: // DECIMAL with DECIMAL or an integer, exact across scales
		l, r := g.decExpr(1+g.rng.IntN(2), true), g.decExpr(g.rng.IntN(2), false)
		return mexpr{sql: "(" + l.sql + " " + op + " " + r.sql + ")", k: 'b', eval: func(row []mv) mv {
			a, b := l.eval(row), r.eval(row)
			if a.null || b.null {
				return mnull
			}
			return mbool(cmpHolds(op, cmpExact(a, b)))
		}}
	case 0: // numbers, across kinds
		var l, r mexpr
		if g.rng.IntN(2) == 0 {
			l, r = g.intExpr(1), g.intExpr(1)
		} else {
			l, r = g.floatExpr(1), g.col('n')
		}
		return mexpr{sql: "(" + l.sql + " " + op + " " + r.sql + ")", k: 'b', eval: func(row []mv) mv {
			a, b := l.eval(row), r.eval(row)
			if a.null || b.null {
				return mnull
			}
			if a.k == 'i' && b.k == 'i' {
				return mbool(cmpHolds(op, cmp3(a.i, b.i)))
			}
			return mbool(cmpHolds(op, cmp3(a.num(), b.num())))
		}}
	case 1: // strings
		k := string(rune('a'+g.rng.IntN(5))) + []string{"", "x", "b"}[g.rng.IntN(3)]
		c := g.col('s')
		return mexpr{sql: fmt.Sprintf("(%s %s '%s')", c.sql, op, k), k: 'b', eval: func(row []mv) mv {
			a := c.eval(row)
			if a.null {
				return mnull
			}
			return mbool(cmpHolds(op, cmp3(a.s, k)))
		}}
	case 2: // dates against text
		day := int64(20089 + g.rng.IntN(12))
		c := g.col('d')
		text := time.Unix(day*86400, 0).UTC().Format("2006-01-02")
		return mexpr{sql: fmt.Sprintf("(%s %s '%s')", c.sql, op, text), k: 'b', eval: func(row []mv) mv {
			a := c.eval(row)
			if a.null {
				return mnull
			}
			return mbool(cmpHolds(op, cmp3(a.i, day)))
		}}
	case 3: // datetimes against a date: its midnight
		day := int64(20089 + g.rng.IntN(12))
		c := g.col('t')
		text := time.Unix(day*86400, 0).UTC().Format("2006-01-02")
		return mexpr{sql: fmt.Sprintf("(%s %s DATE '%s')", c.sql, op, text), k: 'b', eval: func(row []mv) mv {
			a := c.eval(row)
			if a.null {
				return mnull
			}
			return mbool(cmpHolds(op, cmp3(a.i, day*86400_000_000)))
		}}
	case 4:
		c := vmCols[g.rng.IntN(len(vmCols))]
		i := g.rng.IntN(len(vmCols))
		c = vmCols[i]
		not := g.rng.IntN(2) == 0
		q := c.name + " IS NULL"
		if not {
			q = c.name + " IS NOT NULL"
		}
		return mexpr{sql: q, k: 'b', eval: func(row []mv) mv { return mbool(row[i].null != not) }}
	case 5: // IN, NULL in the list or not
		c := g.col('i')
		var items []string
		set := map[int64]bool{}
		withNull := g.rng.IntN(3) == 0
		for range 1 + g.rng.IntN(4) {
			k := int64(g.rng.IntN(20) - 5)
			set[k] = true
			items = append(items, strconv.FormatInt(k, 10))
		}
		if withNull {
			items = append(items, "NULL")
		}
		not := g.rng.IntN(2) == 0
		kw := " IN "
		if not {
			kw = " NOT IN "
		}
		return mexpr{sql: "(" + c.sql + kw + "(" + strings.Join(items, ", ") + "))", k: 'b', eval: func(row []mv) mv {
			a := c.eval(row)
			switch {
			case a.null:
				return mnull
			case set[a.i]:
				return mbool(!not)
			case withNull:
				return mnull
			}
			return mbool(not)
		}}
	case 6: // BETWEEN
		c := g.col('n')
		lo := float64(g.rng.IntN(20) - 5)
		hi := lo + float64(g.rng.IntN(10))
		not := g.rng.IntN(3) == 0
		kw := " BETWEEN "
		if not {
			kw = " NOT BETWEEN "
		}
		return mexpr{sql: fmt.Sprintf("(%s%s%v AND %v)", c.sql, kw, lo, hi), k: 'b', eval: func(row []mv) mv {
			a := c.eval(row)
			if a.null {
				return mnull
			}
			in := a.num() >= lo && a.num() <= hi
			return mbool(in != not)
		}}
	case 7: // LIKE
		pats := []string{"a%", "%b", "%ab%", "a_", "%", "_b%", "ab"}
		p := pats[g.rng.IntN(len(pats))]
		not := g.rng.IntN(3) == 0
		kw := " LIKE "
		if not {
			kw = " NOT LIKE "
		}
		c := g.col('s')
		return mexpr{sql: "(" + c.sql + kw + "'" + p + "')", k: 'b', eval: func(row []mv) mv {
			a := c.eval(row)
			if a.null {
				return mnull
			}
			return mbool(exec.LikeMatch([]rune(a.s), []rune(p), '\\') != not)
		}}
	}
	c := g.col('b')
	k := g.rng.IntN(2) == 0
	return mexpr{sql: fmt.Sprintf("(%s = %v)", c.sql, k), k: 'b', eval: func(row []mv) mv {
		a := c.eval(row)
		if a.null {
			return mnull
		}
		return mbool((a.i != 0) == k)
	}}
}

// funcExpr is a function call, CASE or IF.
func (g *vmGen) funcExpr() mexpr {
	str := func(f func(string) mv) func(v mv) mv {
		return func(v mv) mv {
			if v.null {
				return mnull
			}
			return f(v.s)
		}
	}
	unary := func(name string, x mexpr, k byte, f func(v mv) mv) mexpr {
		return mexpr{sql: name + "(" + x.sql + ")", k: k, eval: func(r []mv) mv { return f(x.eval(r)) }}
	}
	switch g.rng.IntN(11) {
	case 9:
		k := int64(g.rng.IntN(100) - 50)
		x := g.col('d')
		return mexpr{sql: fmt.Sprintf("(%s + INTERVAL %d DAY)", x.sql, k), k: 'd', eval: func(r []mv) mv {
			v := x.eval(r)
			if v.null {
				return v
			}
			return mv{k: 'd', i: v.i + k}
		}}
	case 10:
		k := int64(g.rng.IntN(30) - 10)
		x := g.col('t')
		unit := []string{"HOUR", "MONTH"}[g.rng.IntN(2)]
		return mexpr{sql: fmt.Sprintf("(%s - INTERVAL %d %s)", x.sql, k, unit), k: 't', eval: func(r []mv) mv {
			v := x.eval(r)
			if v.null {
				return v
			}
			tm := time.UnixMicro(v.i).UTC()
			if unit == "HOUR" {
				return mv{k: 't', i: tm.Add(-time.Duration(k) * time.Hour).UnixMicro()}
			}
			// Days stay below 29 in the generated data: no clamping.
			return mv{k: 't', i: tm.AddDate(0, -int(k), 0).UnixMicro()}
		}}
	case 0:
		return unary("upper", g.col('s'), 's', str(func(s string) mv { return mv{k: 's', s: strings.ToUpper(s)} }))
	case 1:
		return unary("length", g.col('s'), 'i', str(func(s string) mv { return mv{k: 'i', i: int64(len(s))} }))
	case 2:
		x := g.col('s')
		return mexpr{sql: "concat(" + x.sql + ", '-', " + x.sql + ")", k: 's', eval: func(r []mv) mv {
			v := x.eval(r)
			if v.null {
				return mnull
			}
			return mv{k: 's', s: v.s + "-" + v.s}
		}}
	case 3:
		x := g.col('s')
		return mexpr{sql: "coalesce(" + x.sql + ", 'none')", k: 's', eval: func(r []mv) mv {
			if v := x.eval(r); !v.null {
				return v
			}
			return mv{k: 's', s: "none"}
		}}
	case 4, 5:
		parts := []string{"year", "month", "day", "hour"}
		part := parts[g.rng.IntN(len(parts))]
		x := g.col('t')
		if part != "hour" && g.rng.IntN(2) == 0 {
			x = g.col('d')
		}
		return unary(part, x, 'i', func(v mv) mv {
			if v.null {
				return mnull
			}
			us := v.i
			if x.k == 'd' {
				us *= 86400_000_000
			}
			tm := time.UnixMicro(us).UTC()
			n := map[string]int{"year": tm.Year(), "month": int(tm.Month()), "day": tm.Day(), "hour": tm.Hour()}[part]
			return mv{k: 'i', i: int64(n)}
		})
	case 6:
		cond, a, b := g.boolExpr(1), g.intExpr(1), g.intExpr(1)
		return mexpr{sql: "CASE WHEN " + cond.sql + " THEN " + a.sql + " ELSE " + b.sql + " END", k: 'i', eval: func(r []mv) mv {
			if v := cond.eval(r); !v.null && v.i != 0 {
				return a.eval(r)
			}
			return b.eval(r)
		}}
	case 7:
		cond, a, b := g.boolExpr(1), g.floatExpr(1), g.intExpr(1)
		return mexpr{sql: "if(" + cond.sql + ", " + a.sql + ", " + b.sql + ")", k: 'f', eval: func(r []mv) mv {
			v := b.eval(r)
			if c := cond.eval(r); !c.null && c.i != 0 {
				v = a.eval(r)
			}
			if v.null {
				return v
			}
			return mv{k: 'f', f: v.num()}
		}}
	}
	x := g.col('i')
	k := int64(g.rng.IntN(10) - 3)
	return mexpr{sql: fmt.Sprintf("CASE %s WHEN %d THEN 'hit' WHEN NULL THEN 'never' END", x.sql, k), k: 's', eval: func(r []mv) mv {
		if v := x.eval(r); !v.null && v.i == k {
			return mv{k: 's', s: "hit"}
		}
		return mnull
	}}
}

// item is a random select item of any kind.
func (g *vmGen) item() mexpr {
	switch g.rng.IntN(6) {
	case 4:
		return g.funcExpr()
	case 0:
		return g.intExpr(2)
	case 1:
		return g.floatExpr(2)
	case 2:
		return g.boolExpr(1)
	case 3:
		if g.rng.IntN(2) == 0 {
			return g.decExpr(1+g.rng.IntN(2), true)
		}
	}
	return g.col(vmCols[g.rng.IntN(len(vmCols))].k)
}

func vectorModel(t *testing.T, seed uint64) {
	s, mustExec := modelSession(t, 8)
	mustExec("SET session_now = '2026-01-01 00:00:00'")
	mustExec(`CREATE TABLE v (id BIGINT, i INT, t TINYINT, d DOUBLE, m DECIMAL(8,2), s VARCHAR(12), dt DATE, ts DATETIME, b BOOLEAN, src DATETIME)
		DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true")`)
	rng := rand.New(rand.NewPCG(seed, 61))
	g := &vmGen{rng: rng}
	var live [][]mv
	id := int64(0)
	for batch := 0; batch < 5; batch++ {
		var vals []string
		for range 30 {
			row := []mv{{k: 'i', i: id}}
			fields := []string{strconv.FormatInt(id, 10)}
			id++
			nul := func() bool { return rng.IntN(6) == 0 }
			add := func(v mv, text string) {
				if nul() {
					row = append(row, mnull)
					fields = append(fields, "NULL")
					return
				}
				row = append(row, v)
				fields = append(fields, text)
			}
			iv := int64(rng.IntN(30) - 10)
			add(mv{k: 'i', i: iv}, strconv.FormatInt(iv, 10))
			tv := int64(rng.IntN(10) - 3)
			add(mv{k: 'i', i: tv}, strconv.FormatInt(tv, 10))
			dv := float64(rng.IntN(60)-20) / 4
			add(mv{k: 'f', f: dv}, strconv.FormatFloat(dv, 'f', -1, 64))
			mval := int64(rng.IntN(2000) - 1000)
			add(mv{k: 'm', i: mval, sc: 2}, mv{k: 'm', i: mval, sc: 2}.text())
			letters := "abc\t"
			var sb strings.Builder
			for range rng.IntN(4) {
				sb.WriteByte(letters[rng.IntN(len(letters))])
			}
			sv := sb.String()
			add(mv{k: 's', s: sv}, "'"+strings.ReplaceAll(sv, "\t", `\t`)+"'")
			day := int64(20089 + rng.IntN(12))
			add(mv{k: 'd', i: day}, "'"+mv{k: 'd', i: day}.text()+"'")
			us := (day*86400 + int64(rng.IntN(3)*43200)) * 1_000_000
			add(mv{k: 't', i: us}, "'"+mv{k: 't', i: us}.text()+"'")
			bv := rng.IntN(2) == 0
			add(mbool(bv), fmt.Sprint(bv))
			expired := rng.IntN(2) == 0
			ttl := "NULL"
			if expired {
				ttl = "1"
			} else {
				live = append(live, row)
			}
			vals = append(vals, "("+strings.Join(fields, ", ")+", NULL, "+ttl+")")
		}
		mustExec("INSERT INTO v (id, i, t, d, m, s, dt, ts, b, src, __TTL__) VALUES " + strings.Join(vals, ", "))
	}
	ctx := context.Background()
	for q := 0; q < 40; q++ {
		aggModel(t, s, g, live, seed)
	}
	for q := 0; q < 150; q++ {
		var items []mexpr
		for range 1 + rng.IntN(3) {
			items = append(items, g.item())
		}
		var where *mexpr
		if rng.IntN(4) > 0 {
			w := g.boolExpr(2)
			where = &w
		}
		texts := make([]string, len(items))
		for i, it := range items {
			texts[i] = it.sql
		}
		stmt := "SELECT " + strings.Join(texts, ", ") + " FROM v"
		if where != nil {
			stmt += " WHERE " + where.sql
		}
		distinct := rng.IntN(6) == 0
		if distinct {
			stmt = "SELECT DISTINCT" + stmt[len("SELECT"):]
		}
		order := rng.IntN(3) == 0
		desc := rng.IntN(2) == 0
		if order {
			stmt += " ORDER BY 1"
			if desc {
				stmt += " DESC"
			}
		}
		limit, offset := int64(-1), int64(0)
		if rng.IntN(3) == 0 {
			limit, offset = int64(rng.IntN(20)), int64(rng.IntN(10))
			stmt += fmt.Sprintf(" LIMIT %d OFFSET %d", limit, offset)
		}
		plan, err := s.Exec(ctx, "EXPLAIN "+stmt)
		if err != nil {
			t.Fatalf("seed %d: EXPLAIN %s: %v", seed, stmt, err)
		}
		if e := plan.Rows[0][0]; e != "engine: vectorised" {
			t.Fatalf("seed %d: %s: %s", seed, stmt, e)
		}
		type outRow struct {
			key  mv
			text string
		}
		var rows []outRow
		seen := map[string]bool{}
		for _, r := range live {
			if where != nil {
				if v := where.eval(r); v.null || v.i == 0 {
					continue
				}
			}
			out := make([]string, len(items))
			keys := make([]string, len(items))
			for i, it := range items {
				v := it.eval(r)
				out[i] = strings.ReplaceAll(v.text(), "\t", `\t`)
				keys[i] = out[i]
				if !v.null && v.k == 'f' && v.f == 0 {
					keys[i] = "0" // -0 = 0: one distinct value
				}
			}
			text := strings.Join(out, "|")
			if key := strings.Join(keys, "|"); distinct && seen[key] {
				continue
			} else {
				seen[key] = true
			}
			rows = append(rows, outRow{key: items[0].eval(r), text: text})
		}
		if order {
			// NULLs first ascending, last descending; ties keep scan order.
			sort.SliceStable(rows, func(i, j int) bool {
				a, b := rows[i].key, rows[j].key
				if a.null || b.null {
					return a.null != b.null && a.null == !desc
				}
				var c int
				switch a.k {
				case 's':
					c = strings.Compare(a.s, b.s)
				case 'f', 'm':
					c = cmp3(a.num(), b.num())
				default:
					c = cmp3(a.i, b.i)
				}
				if desc {
					c = -c
				}
				return c < 0
			})
		}
		var want []string
		for _, r := range rows {
			want = append(want, r.text)
		}
		want = want[min(int64(len(want)), offset):]
		if limit >= 0 && int64(len(want)) > limit {
			want = want[:limit]
		}
		res, err := s.Exec(ctx, stmt)
		if err != nil {
			t.Fatalf("seed %d: %s: %v", seed, stmt, err)
		}
		got := make([]string, len(res.Rows))
		for i, r := range res.Rows {
			got[i] = strings.Join(r, "|")
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("seed %d: %s\ngot  %q\nwant %q", seed, stmt, got, want)
		}
	}
}

// aggModel runs one random GROUP BY query and compares it with the model:
// a group key (possibly NULL), count(*), count, sum, min, max, avg,
// var_samp (Welford's update in input order, as the operator folds each
// group) and group_concat (in input order), HAVING, ordered by the key.
func aggModel(t *testing.T, s *Session, g *vmGen, live [][]mv, seed uint64) {
	t.Helper()
	rng := g.rng
	var key mexpr
	switch rng.IntN(3) {
	case 0:
		key = g.col('s')
	case 1:
		key = g.intExpr(1)
	default:
		key = g.funcExpr()
	}
	arg := g.intExpr(1)
	fl := g.floatExpr(1)
	mm := g.col([]byte{'i', 's', 'd', 't', 'f'}[rng.IntN(5)])
	var where *mexpr
	if rng.IntN(2) == 0 {
		w := g.boolExpr(1)
		where = &w
	}
	minCount := int64(rng.IntN(3))
	desc := rng.IntN(2) == 0
	gc := g.col('s')
	stmt := fmt.Sprintf("SELECT %s AS k, count(*), count(%s), sum(%s), min(%s), max(%s), avg(%s), var_samp(%s), group_concat(%s, '+') FROM v",
		key.sql, arg.sql, arg.sql, mm.sql, mm.sql, fl.sql, fl.sql, gc.sql)
	if where != nil {
		stmt += " WHERE " + where.sql
	}
	stmt += fmt.Sprintf(" GROUP BY k HAVING count(*) >= %d ORDER BY 1", minCount)
	if desc {
		stmt += " DESC"
	}
	type acc struct {
		key              mv
		n, cnt, sum      int64
		fsum             float64
		fn               int64
		min, max         mv
		hasSum, hasRange bool
		mean, m2         float64
		concat           []string
	}
	var order []*acc
	groups := map[string]*acc{}
	less := func(a, b mv) bool {
		switch a.k {
		case 's':
			return a.s < b.s
		case 'f', 'm':
			return a.num() < b.num()
		}
		return a.i < b.i
	}
	for _, r := range live {
		if where != nil {
			if v := where.eval(r); v.null || v.i == 0 {
				continue
			}
		}
		k := key.eval(r)
		gk := k.text()
		if !k.null && k.k == 'f' && k.f == 0 {
			gk = "0"
		}
		a := groups[gk]
		if a == nil {
			a = &acc{key: k}
			groups[gk] = a
			order = append(order, a)
		}
		a.n++
		if v := arg.eval(r); !v.null {
			a.cnt++
			a.sum += v.i
			a.hasSum = true
		}
		if v := fl.eval(r); !v.null {
			a.fsum += v.num()
			a.fn++
			x := v.num()
			d := x - a.mean
			a.mean += d / float64(a.fn)
			a.m2 += d * (x - a.mean)
		}
		if v := gc.eval(r); !v.null {
			a.concat = append(a.concat, v.text())
		}
		if v := mm.eval(r); !v.null {
			if !a.hasRange || less(v, a.min) {
				a.min = v
			}
			if !a.hasRange || less(a.max, v) {
				a.max = v
			}
			a.hasRange = true
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i].key, order[j].key
		if a.null || b.null {
			return a.null != b.null && a.null == !desc
		}
		if desc {
			return less(b, a)
		}
		return less(a, b)
	})
	var want []string
	for _, a := range order {
		if a.n < minCount {
			continue
		}
		sum, minV, maxV, avg := mnull, mnull, mnull, mnull
		if a.hasSum {
			sum = mv{k: 'i', i: a.sum}
		}
		if a.hasRange {
			minV, maxV = a.min, a.max
		}
		if a.fn > 0 {
			avg = mv{k: 'f', f: a.fsum / float64(a.fn)}
		}
		kt := a.key.text()
		if kt == "-0" {
			kt = "0" // -0 and 0 are one group, shown either way
		}
		variance, concat := mnull, mnull
		if a.fn > 1 {
			variance = mv{k: 'f', f: a.m2 / float64(a.fn-1)}
		}
		if len(a.concat) > 0 {
			concat = mv{k: 's', s: strings.Join(a.concat, "+")}
		}
		fields := []string{kt, fmt.Sprint(a.n), fmt.Sprint(a.cnt), sum.text(), minV.text(), maxV.text(), avg.text(), variance.text(), concat.text()}
		want = append(want, strings.ReplaceAll(strings.Join(fields, "|"), "\t", `\t`))
	}
	plan, err := s.Exec(context.Background(), "EXPLAIN "+stmt)
	if err != nil || plan.Rows[0][0] != "engine: vectorised" {
		t.Fatalf("seed %d: %s: %v %v", seed, stmt, err, plan)
	}
	res, err := s.Exec(context.Background(), stmt)
	if err != nil {
		t.Fatalf("seed %d: %s: %v", seed, stmt, err)
	}
	got := make([]string, len(res.Rows))
	for i, r := range res.Rows {
		if r[0] == "-0" {
			r[0] = "0"
		}
		got[i] = strings.Join(r, "|")
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("seed %d: %s\ngot  %q\nwant %q", seed, stmt, got, want)
	}
}
