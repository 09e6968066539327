package sql

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestSourceTTLModelSQL checks source-mode row TTL through the shell
// against SPEC §2 computed in Go: a DATE or DATETIME source read at the
// table's fixed ttl_time_zone offset (a DATE is midnight there), plus the
// current retention, expires when it is at or before the session's now,
// which SET session_now gives in the session time_zone, not the table's.
// Retention shortened by ALTER applies to stored rows at once; compaction
// changes nothing visible. Now only moves forward: rows a compaction
// reclaimed do not come back for an earlier now.
func TestSourceTTLModelSQL(t *testing.T) {
	for seed := range modelSeeds(8, 200) {
		sourceTTLModel(t, seed+1)
	}
}

func offsetText(min int) string {
	sign := "+"
	if min < 0 {
		sign, min = "-", -min
	}
	return fmt.Sprintf("%s%02d:%02d", sign, min/60, min%60)
}

func sourceTTLModel(t *testing.T, seed uint64) {
	exec, log := loggedSession(t, 4)
	rng := rand.New(rand.NewPCG(seed, 7))
	ttlZone := []int{0, 480, -330, 840, -720}[rng.IntN(5)]
	sessZone := []int{0, 180, -300, 345}[rng.IntN(4)]
	retention := []int64{0, 3600, 86400, 7 * 86400}[rng.IntN(4)]
	dateSource := rng.IntN(2) == 0
	src := "ts"
	if dateSource {
		src = "d"
	}
	zoneText := offsetText(ttlZone)
	if ttlZone == 0 && rng.IntN(2) == 0 {
		zoneText = "UTC"
	}
	exec(fmt.Sprintf("SET time_zone = '%s'", offsetText(sessZone)))
	exec(fmt.Sprintf(`CREATE TABLE s (id INT, d DATE, ts DATETIME(6)) DUPLICATE KEY(id) PROPERTIES (
		"function_column.enable_row_ttl" = "true", "function_column.ttl_col" = "%s",
		"function_column.ttl" = "%d", "function_column.ttl_time_zone" = "%s")`, src, retention, zoneText))
	base := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	type srow struct {
		id  int
		src *time.Time // the source's wall clock, read as UTC
	}
	var rows []srow
	// expiry is the row's expiration in µs UTC, or nil.
	expiry := func(r srow) *int64 {
		if r.src == nil {
			return nil
		}
		v := r.src.UnixMicro() - int64(ttlZone)*60e6 + retention*1e6
		return &v
	}
	now := base.Add(-6 * 24 * time.Hour)
	for step := 0; step < 30; step++ {
		switch op := rng.IntN(8); {
		case op < 3:
			var tuples []string
			for range 1 + rng.IntN(6) {
				r := srow{id: len(rows)}
				wall := base.Add(time.Duration(rng.Int64N(10*24*3600)-5*24*3600) * time.Second).Add(time.Duration(rng.IntN(1e6)) * time.Microsecond)
				if dateSource {
					wall = time.Date(wall.Year(), wall.Month(), wall.Day(), 0, 0, 0, 0, time.UTC)
				}
				d, ts := "NULL", "NULL"
				if rng.IntN(6) > 0 {
					r.src = &wall
					if dateSource {
						d = "'" + wall.Format("2006-01-02") + "'"
					} else {
						ts = "'" + wall.Format("2006-01-02 15:04:05.000000") + "'"
					}
				}
				rows = append(rows, r)
				tuples = append(tuples, fmt.Sprintf("(%d, %s, %s)", r.id, d, ts))
			}
			exec("INSERT INTO s VALUES " + strings.Join(tuples, ", "))
		case op < 5: // a later now (compaction may have reclaimed the past)
			now = now.Add(time.Duration(rng.Int64N(3*24*3600)) * time.Second)
		case op < 6 && retention > 0: // shorten the retention
			retention = rng.Int64N(retention + 1)
			exec(fmt.Sprintf(`ALTER TABLE s SET ("function_column.ttl" = "%d")`, retention))
		case op < 7:
			exec("ADMIN COMPACT TABLE s WHERE type = 'full'")
		}
		// session_now is read in the session time_zone.
		exec(fmt.Sprintf("SET session_now = '%s'", now.Add(time.Duration(sessZone)*time.Minute).Format("2006-01-02 15:04:05")))
		var want []string
		for _, r := range rows {
			if e := expiry(r); e == nil || *e > now.UnixMicro() {
				want = append(want, fmt.Sprint(r.id))
			}
		}
		res := exec("SELECT id FROM s ORDER BY id")
		var got []string
		for _, r := range res.Rows {
			got = append(got, r[0])
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("seed %d step %d (source %s, ttl zone %s, session zone %s, retention %ds, now %s UTC): ids\n%v\nwant\n%v\nstatements:\n%s",
				seed, step, src, zoneText, offsetText(sessZone), retention, now.Format(time.DateTime), got, want, log)
		}
	}
}
