package sql

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestAlterModelSQL evolves a table's columns at random — ADD COLUMN with
// or without a DEFAULT, DROP, RENAME, a name dropped and added back — with
// INSERTs of the current columns and compactions in between, and compares
// every SELECT * with a model: a row reads a column it was written with as
// written, and any other as the column's default (NULL without one), never
// the data of a dropped column of the same name.
func TestAlterModelSQL(t *testing.T) {
	for seed := range modelSeeds(6, 150) {
		alterModel(t, seed+1)
	}
}

type modelCol struct {
	uid  int // the model's identity of the column, never reused
	name string
	typ  string
	def  string // as printed; "NULL" without a DEFAULT
}

func alterModel(t *testing.T, seed uint64) {
	exec, log := loggedSession(t, 4)
	rng := rand.New(rand.NewPCG(seed, 99))
	exec(`CREATE TABLE a (id INT NOT NULL, c0 INT) DUPLICATE KEY(id)`)
	cols := []modelCol{{uid: 0, name: "c0", typ: "INT", def: "NULL"}}
	nextUID, nextName := 1, 1
	type mrow struct {
		id   int
		vals map[int]string // by column uid
	}
	var rows []mrow
	values := map[string][]string{
		"INT":        {"0", "-5", "2147483647"},
		"VARCHAR(6)": {"x", "yy", ""},
		"BOOLEAN":    {"true", "false"},
		"DOUBLE":     {"0.5", "-3", "1e+100"},
		"DATE":       {"2026-01-01", "1999-12-31"},
	}
	types := []string{"INT", "VARCHAR(6)", "BOOLEAN", "DOUBLE", "DATE"}
	lit := func(typ, v string) string {
		if v == "NULL" || typ == "INT" || typ == "BOOLEAN" || typ == "DOUBLE" {
			return v
		}
		return "'" + v + "'"
	}
	dropped := []string{}
	for step := 0; step < 40; step++ {
		switch op := rng.IntN(10); {
		case op < 4: // insert rows with a random subset of the current columns
			use := []modelCol{}
			for _, c := range cols {
				if rng.IntN(3) > 0 {
					use = append(use, c)
				}
			}
			names := []string{"id"}
			for _, c := range use {
				names = append(names, c.name)
			}
			var tuples []string
			for range 1 + rng.IntN(5) {
				r := mrow{id: rng.IntN(50), vals: map[int]string{}}
				l := []string{fmt.Sprint(r.id)}
				for _, c := range use {
					v := "NULL"
					if rng.IntN(4) > 0 {
						vs := values[c.typ]
						v = vs[rng.IntN(len(vs))]
					}
					r.vals[c.uid] = v
					l = append(l, lit(c.typ, v))
				}
				for _, c := range cols {
					if _, ok := r.vals[c.uid]; !ok {
						r.vals[c.uid] = c.def // omitted: the column's default
					}
				}
				rows = append(rows, r)
				tuples = append(tuples, "("+strings.Join(l, ", ")+")")
			}
			exec(fmt.Sprintf("INSERT INTO a (%s) VALUES %s", strings.Join(names, ", "), strings.Join(tuples, ", ")))
		case op < 6 && len(cols) < 6: // add a column, maybe reusing a dropped name
			typ := types[rng.IntN(len(types))]
			name := fmt.Sprintf("c%d", nextName)
			if len(dropped) > 0 && rng.IntN(2) == 0 {
				name = dropped[rng.IntN(len(dropped))]
			} else {
				nextName++
			}
			if slices.ContainsFunc(cols, func(c modelCol) bool { return c.name == name }) {
				continue
			}
			c := modelCol{uid: nextUID, name: name, typ: typ, def: "NULL"}
			nextUID++
			q := fmt.Sprintf("ALTER TABLE a ADD COLUMN %s %s", name, typ)
			if rng.IntN(2) == 0 {
				vs := values[typ]
				c.def = vs[rng.IntN(len(vs))]
				q += " DEFAULT \"" + c.def + "\""
			}
			exec(q)
			cols = append(cols, c)
		case op < 7 && len(cols) > 0: // drop a column
			i := rng.IntN(len(cols))
			exec("ALTER TABLE a DROP COLUMN " + cols[i].name)
			dropped = append(dropped, cols[i].name)
			cols = slices.Delete(cols, i, i+1)
		case op < 8 && len(cols) > 0: // rename a column to a fresh name
			i := rng.IntN(len(cols))
			name := fmt.Sprintf("c%d", nextName)
			nextName++
			exec(fmt.Sprintf("ALTER TABLE a RENAME COLUMN %s %s", cols[i].name, name))
			cols[i].name = name
		case op < 9:
			exec("ADMIN COMPACT TABLE a WHERE type = 'full'")
		}
		names := []string{"id"}
		for _, c := range cols {
			names = append(names, c.name)
		}
		var want []string
		for _, r := range rows {
			line := []string{fmt.Sprint(r.id)}
			for _, c := range cols {
				v, ok := r.vals[c.uid]
				if !ok {
					v = c.def
				}
				line = append(line, v)
			}
			want = append(want, strings.Join(line, "|"))
		}
		slices.Sort(want)
		res := exec(fmt.Sprintf("SELECT %s FROM a", strings.Join(names, ", ")))
		var got []string
		for _, r := range res.Rows {
			got = append(got, strings.Join(r, "|"))
		}
		slices.Sort(got)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("seed %d step %d: rows\n%s\nwant\n%s\nstatements:\n%s", seed, step, strings.Join(got, "\n"), strings.Join(want, "\n"), log)
		}
	}
}
