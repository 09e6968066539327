package load

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLoadAgreesWithInsert loads random rows of every column kind from CSV
// and inserts the same values with SQL, into a DUPLICATE and a UNIQUE
// table each, and compares what SELECT returns: the two write paths
// convert text differently and must store the same values.
func TestLoadAgreesWithInsert(t *testing.T) {
	for _, model := range []string{"DUPLICATE KEY(id)", "UNIQUE KEY(id)"} {
		e := newEnv(t)
		cols := `(id INT NOT NULL, b BOOLEAN, ti TINYINT, si SMALLINT, i INT, bi BIGINT, f FLOAT, d DOUBLE, dec DECIMAL(9,3), dt DATE, ts DATETIME(6), s VARCHAR(12))`
		props := ` PROPERTIES ("function_column.enable_row_ttl" = "true")`
		e.exec(`SET session_now = '2026-01-01 00:00:00'`)
		e.exec(`CREATE TABLE by_load `+cols+` `+model+props, `CREATE TABLE by_insert `+cols+` `+model+props)
		rng := rand.New(rand.NewPCG(21, uint64(len(model))))
		pick := func(vals ...string) string { return vals[rng.IntN(len(vals))] }
		var csv strings.Builder
		var tuples []string
		for id := 0; id < 300; id++ {
			vals := []string{
				fmt.Sprint(rng.IntN(200)),
				pick("", "true", "false", "1", "0"),
				pick("", "-128", "0", "127", "42"),
				pick("", "-32768", "32767", "7"),
				pick("", "-2147483648", "2147483647", "0"),
				pick("", "-9223372036854775808", "9223372036854775807", "123456789012"),
				pick("", "0.5", "-2.25", "3.4e38", "1e-5"),
				pick("", "0.1", "-1e300", "2.5", "123456.789", "1e-300"),
				pick("", "1.5", "-0.125", "999999.999", "0"),
				pick("", "2024-02-29", "1970-01-01", "2026-12-31"),
				pick("", "2026-01-01 00:00:00", "2025-06-30 12:34:56.123456", "1999-12-31 23:59:59.5"),
				pick("", "abc", "héllo", "with space", "tab-free"),
				pick("", "1", "4102444800000000"), // __TTL__: expired, or 2100
			}
			var fields, lits []string
			for i, v := range vals {
				if v == "" && i > 0 {
					fields = append(fields, `\N`)
					lits = append(lits, "NULL")
					continue
				}
				fields = append(fields, v)
				switch i {
				case 9, 10, 11:
					lits = append(lits, "'"+v+"'")
				default:
					lits = append(lits, v)
				}
			}
			csv.WriteString(strings.Join(fields, "\t") + "\n")
			tuples = append(tuples, "("+strings.Join(lits, ", ")+")")
		}
		res := e.mustLoad("by_load", csv.String(), Options{Columns: "id, b, ti, si, i, bi, f, d, dec, dt, ts, s, __TTL__"})
		if res.NumberLoadedRows != 300 {
			t.Fatalf("%s: loaded %d rows", model, res.NumberLoadedRows)
		}
		e.exec("INSERT INTO by_insert (id, b, ti, si, i, bi, f, d, dec, dt, ts, s, __TTL__) VALUES " + strings.Join(tuples, ", "))
		for _, q := range []string{
			"SELECT * FROM %s ORDER BY id, s, ts, dec, d, b, ti",
			"SELECT count(*), count(b), sum(ti), min(d), max(ts), count(DISTINCT s) FROM %s",
			"SELECT * FROM %s WHERE b = true AND dt >= '2024-02-29' ORDER BY id, s, ts, dec, d, b, ti",
		} {
			got, want := e.exec(fmt.Sprintf(q, "by_load")), e.exec(fmt.Sprintf(q, "by_insert"))
			if got != want {
				t.Fatalf("%s: %s\nby load:\n%s\nby insert:\n%s", model, q, got, want)
			}
			if strings.Count(got, "\n") < 2 {
				t.Fatalf("%s: %s returned nothing to compare:\n%s", model, q, got)
			}
		}
	}
}
