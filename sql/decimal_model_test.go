package sql

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestDecimalAgainstModel stores random values of a random DECIMAL(p,s)
// column, with digits at the edges of its range, and checks what SQL
// returns (the stored values, sum, avg, min, max, arithmetic and WHERE
// against DECIMAL and integer literals) against math/big.
func TestDecimalAgainstModel(t *testing.T) {
	for seed := range modelSeeds(4, 100) {
		t.Run(fmt.Sprint("seed", seed+1), func(t *testing.T) { decimalModel(t, seed+1) })
	}
}

func decimalModel(t *testing.T, seed uint64) {
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 12))
	p := 1 + rng.IntN(38)
	s := rng.IntN(p + 1)
	if seed == 1 {
		p, s = 38, 10
	}
	sess, _ := modelSession(t, 8)
	var log statementLog
	exec := func(q string) (*Result, error) {
		log = append(log, q)
		return sess.Exec(context.Background(), q)
	}
	mustExec := func(q string) *Result {
		t.Helper()
		r, err := exec(q)
		if err != nil {
			t.Fatalf("%s: %v\nstatements:\n%s", q, err, log)
		}
		return r
	}
	mustExec(fmt.Sprintf("CREATE TABLE m (id INT NOT NULL, d DECIMAL(%d,%d)) UNIQUE KEY(id) PROPERTIES (\"enable_unique_key_merge_on_write\" = \"true\")", p, s))
	ten := big.NewInt(10)
	scaleDen := new(big.Int).Exp(ten, big.NewInt(int64(s)), nil)
	limit := new(big.Int).Exp(ten, big.NewInt(int64(p)), nil)
	// randUnscaled returns an unscaled value of d's type, often near its
	// bounds.
	randUnscaled := func() *big.Int {
		var x *big.Int
		switch rng.IntN(4) {
		case 0:
			x = new(big.Int).Sub(limit, big.NewInt(int64(1+rng.IntN(3))))
		case 1:
			x = new(big.Int).Mod(big.NewInt(int64(rng.IntN(100))), limit)
		default:
			var b strings.Builder
			b.WriteByte('0')
			for i := rng.IntN(p) + 1; i > 0; i-- {
				b.WriteByte(byte('0' + rng.IntN(10)))
			}
			x, _ = new(big.Int).SetString(b.String(), 10)
		}
		if x.Sign() < 0 {
			x.SetInt64(0)
		}
		if rng.IntN(2) == 0 {
			x.Neg(x)
		}
		return x
	}
	text := func(u *big.Int, scale int) string {
		r := new(big.Rat).SetFrac(u, new(big.Int).Exp(ten, big.NewInt(int64(scale)), nil))
		return r.FloatString(scale)
	}
	n := 5 + rng.IntN(40)
	vals := make([]*big.Int, n)
	var rows []string
	for i := range vals {
		vals[i] = randUnscaled()
		lit := text(vals[i], s)
		if rng.IntN(3) == 0 {
			lit = "'" + lit + "'"
		}
		rows = append(rows, fmt.Sprintf("(%d, %s)", i, lit))
	}
	mustExec("INSERT INTO m VALUES " + strings.Join(rows, ", "))

	got := mustExec("SELECT id, d FROM m ORDER BY id").Rows
	for i, r := range got {
		if r[1] != text(vals[i], s) {
			t.Fatalf("row %d: %s, want %s\n%s", i, r[1], text(vals[i], s), log)
		}
	}

	sum := new(big.Int)
	minV, maxV := vals[0], vals[0]
	for _, v := range vals {
		sum.Add(sum, v)
		if v.Cmp(minV) < 0 {
			minV = v
		}
		if v.Cmp(maxV) > 0 {
			maxV = v
		}
	}
	// avg: DECIMAL(38, max(s,4)) rounded half away from zero.
	as := max(s, 4)
	num := new(big.Int).Mul(sum, new(big.Int).Exp(ten, big.NewInt(int64(as-s)), nil))
	den := big.NewInt(int64(n))
	q, rem := new(big.Int).QuoRem(num, den, new(big.Int))
	if new(big.Int).Mul(new(big.Int).Abs(rem), big.NewInt(2)).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(int64(num.Sign())))
	}
	max38 := new(big.Int).Exp(ten, big.NewInt(38), nil)
	fits := func(x *big.Int) bool { return new(big.Int).Abs(x).Cmp(max38) < 0 }
	want := []string{text(sum, s), text(q, as), text(minV, s), text(maxV, s), fmt.Sprint(n)}
	if !fits(sum) {
		want[0], want[1] = "ERROR", "ERROR"
	}
	res, err := exec("SELECT sum(d), avg(d), min(d), max(d), count(d) FROM m")
	if want[0] == "ERROR" {
		if err == nil {
			t.Fatalf("sum %v beyond 38 digits gave %v\n%s", sum, res, log)
		}
	} else if err != nil || strings.Join(res.Rows[0], " ") != strings.Join(want, " ") {
		t.Fatalf("aggregates = %v, %v, want %v\n%s", res, err, want, log)
	}

	// d * 2 - 1: exact, or an error when a row's value passes 38 digits
	// (only possible where the derived precision was capped at 38).
	var arith []string
	overflow := false
	for _, v := range vals {
		x := new(big.Int).Mul(v, big.NewInt(2))
		y := new(big.Int).Sub(x, scaleDen)
		overflow = overflow || !fits(x) || !fits(y)
		arith = append(arith, text(y, s))
	}
	res, err = exec("SELECT d * 2 - 1 FROM m ORDER BY id")
	if overflow != (err != nil) {
		t.Fatalf("d * 2 - 1: error %v, want overflow %v\n%s", err, overflow, log)
	}
	for i := 0; err == nil && i < n; i++ {
		if res.Rows[i][0] != arith[i] {
			t.Fatalf("row %d: d * 2 - 1 = %s, want %s\n%s", i, res.Rows[i][0], arith[i], log)
		}
	}

	// WHERE against a DECIMAL literal of another scale and an integer.
	for k := 0; k < 10; k++ {
		// The literal keeps the column's digits and ks more after the point,
		// within 38 digits so that it is a DECIMAL.
		ks := rng.IntN(min(38-p, 12) + 1)
		ku := randUnscaled()
		ku.Mul(ku, new(big.Int).Exp(ten, big.NewInt(int64(ks)), nil))
		if rng.IntN(2) == 0 {
			ku.Add(ku, big.NewInt(int64(rng.IntN(3)-1)))
		}
		lit := text(ku, s+ks)
		if !fits(ku) {
			continue
		}
		if rng.IntN(3) == 0 {
			// An integer constant: the integer part.
			ku = new(big.Int).Quo(ku, new(big.Int).Exp(ten, big.NewInt(int64(s+ks)), nil))
			if !ku.IsInt64() {
				continue
			}
			lit = ku.String()
			ku.Mul(ku, new(big.Int).Exp(ten, big.NewInt(int64(s+ks)), nil))
		}
		op := []string{"=", "<>", "<", "<=", ">", ">="}[rng.IntN(6)]
		cnt := 0
		for _, v := range vals {
			c := new(big.Int).Mul(v, new(big.Int).Exp(ten, big.NewInt(int64(ks)), nil)).Cmp(ku)
			if map[string]bool{"=": c == 0, "<>": c != 0, "<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[op] {
				cnt++
			}
		}
		q := fmt.Sprintf("SELECT count(*) FROM m WHERE d %s %s", op, lit)
		if got := mustExec(q).Rows[0][0]; got != fmt.Sprint(cnt) {
			t.Fatalf("%s = %s, want %d\n%s", q, got, cnt, log)
		}
	}
}
