package sql

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestUniqueModelSQL drives UNIQUE KEY tables (merge-on-write and
// merge-on-read, direct-mode TTL) through the shell's statements — INSERT
// upserts, DELETE, UPDATE, ADMIN COMPACT, a moving session_now — with a
// column of every kind and NULLs everywhere, and compares every SELECT
// with a plain map of keys to rows kept by the rules of SPEC §"Unique-key
// writes": the newest version decides, UPDATE and DELETE see live rows
// only, UPDATE keeps the expiration.
func TestUniqueModelSQL(t *testing.T) {
	for seed := range modelSeeds(4, 100) {
		for _, mow := range []bool{true, false} {
			uniqueModel(t, seed+1, mow)
		}
	}
}

type uniqueRow struct {
	key  string   // as the shell prints the key columns, joined by |
	id   int      // the INT key column
	vals []string // as the shell prints them: b, ti, d, dec, dt, s
	ttl  *int64
}

func uniqueModel(t *testing.T, seed uint64, mow bool) {
	exec, log := loggedSession(t, 4)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	setNow := func() { exec(fmt.Sprintf("SET session_now = '%s'", now.Format("2006-01-02 15:04:05"))) }
	setNow()
	// Even seeds key on (ks VARCHAR, id INT): the merges of encoded keys;
	// odd ones on id alone.
	composite := seed%2 == 0
	keyCols, keyDecl := "id", "id INT"
	if composite {
		keyCols, keyDecl = "ks, id", "ks VARCHAR(4), id INT"
	}
	exec(fmt.Sprintf(`CREATE TABLE u (%s, b BOOLEAN, ti TINYINT, d DOUBLE, dec DECIMAL(9,2), dt DATE, s VARCHAR(8)) UNIQUE KEY(%s)
		PROPERTIES ("function_column.enable_row_ttl" = "true", "enable_unique_key_merge_on_write" = "%t")`, keyDecl, keyCols, mow))
	rng := rand.New(rand.NewPCG(seed, map[bool]uint64{true: 1, false: 2}[mow]))
	pick := func(vals ...string) string { return vals[rng.IntN(len(vals))] }
	ref := map[string]uniqueRow{}
	live := func(r uniqueRow) bool { return r.ttl == nil || *r.ttl > now.UnixMicro() }
	hour := int64(3600e6)
	for step := 0; step < 60; step++ {
		switch op := rng.IntN(12); {
		case op < 5: // upsert a few rows, the last of a key winning
			var tuples []string
			for range 1 + rng.IntN(6) {
				id := rng.IntN(20)
				key, keyLit := fmt.Sprint(id), fmt.Sprint(id)
				if composite {
					ks := pick("", "a", "b", "ab")
					key, keyLit = ks+"|"+key, "'"+ks+"', "+keyLit
				}
				r := uniqueRow{key: key, id: id, vals: []string{
					pick("NULL", "true", "false"),
					pick("NULL", "-128", "0", "7", "127"),
					pick("NULL", "0.5", "-2.25", "3", "1e+20"),
					pick("NULL", "1.25", "-7.50", "0.00", "3.10"),
					pick("NULL", "2025-12-31", "2026-01-01", "2026-03-01"),
					pick("NULL", "", "a", "bb", "ccc"),
				}}
				ttlLit := "NULL"
				switch rng.IntN(4) {
				case 0:
				case 1:
					v := now.UnixMicro() - rng.Int64N(5*hour)
					r.ttl, ttlLit = &v, fmt.Sprint(v)
				default:
					v := now.UnixMicro() + 1 + rng.Int64N(10*hour)
					r.ttl, ttlLit = &v, fmt.Sprint(v)
				}
				lits := make([]string, len(r.vals))
				for i, v := range r.vals {
					switch {
					case v == "NULL":
						lits[i] = v
					case i >= 4: // DATE and VARCHAR are quoted
						lits[i] = "'" + v + "'"
					default:
						lits[i] = v
					}
				}
				tuples = append(tuples, fmt.Sprintf("(%s, %s, %s)", keyLit, strings.Join(lits, ", "), ttlLit))
				ref[key] = r
			}
			exec("INSERT INTO u (" + keyCols + ", b, ti, d, dec, dt, s, __TTL__) VALUES " + strings.Join(tuples, ", "))
		case op < 7: // delete live rows by a column
			k := pick("true", "false")
			exec("DELETE FROM u WHERE b = " + k)
			for key, r := range ref {
				if live(r) && r.vals[0] == k {
					delete(ref, key)
				}
			}
		case op < 9: // update another column of live rows; the expiration stays
			nv := pick("x", "yy")
			lim := rng.IntN(20)
			exec(fmt.Sprintf("UPDATE u SET s = '%s', ti = NULL WHERE id < %d", nv, lim))
			for key, r := range ref {
				if live(r) && r.id < lim {
					r.vals = slices.Clone(r.vals)
					r.vals[5], r.vals[1] = nv, "NULL"
					ref[key] = r
				}
			}
		case op < 10:
			exec("ADMIN COMPACT TABLE u WHERE type = '" + pick("cumulative", "base", "full") + "'")
		default:
			now = now.Add(time.Duration(rng.Int64N(3*hour)) * time.Microsecond)
			setNow()
		}
		var shown []uniqueRow
		for _, r := range ref {
			if live(r) {
				shown = append(shown, r)
			}
		}
		// ORDER BY ks, id: the key string's first part, then the number.
		slices.SortFunc(shown, func(a, b uniqueRow) int {
			ka, kb := strings.Split(a.key, "|"), strings.Split(b.key, "|")
			if c := strings.Compare(ka[0], kb[0]); composite && c != 0 {
				return c
			}
			return a.id - b.id
		})
		var want []string
		for _, r := range shown {
			want = append(want, r.key+"|"+strings.Join(r.vals, "|"))
		}
		res := exec("SELECT * FROM u ORDER BY " + keyCols)
		var got []string
		for _, r := range res.Rows {
			got = append(got, strings.Join(r, "|"))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("seed %d mow %t step %d: rows\n%s\nwant\n%s\nstatements:\n%s", seed, mow, step, strings.Join(got, "\n"), strings.Join(want, "\n"), log)
		}
		cnt := exec("SELECT count(*) FROM u")
		if cnt.Rows[0][0] != fmt.Sprint(len(want)) {
			t.Fatalf("seed %d mow %t step %d: count %s, want %d", seed, mow, step, cnt.Rows[0][0], len(want))
		}
		stats := exec("SHOW TABLE STATS u")
		if v := stats.Rows[0][slices.Index(stats.Columns, "visible_rows")]; v != fmt.Sprint(len(want)) {
			t.Fatalf("seed %d mow %t step %d: SHOW TABLE STATS visible_rows %s, want %d", seed, mow, step, v, len(want))
		}
	}
}
