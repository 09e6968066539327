package bench

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/table"
)

type testSession struct {
	s *sql.Session
}

func (t *testSession) Run(ctx context.Context, text string) ([][]string, error) {
	res, err := t.s.Exec(ctx, text)
	if err != nil {
		return nil, err
	}
	return res.Rows, nil
}

func (t *testSession) Close() error {
	t.s.Close()
	return nil
}

func openTestSQL(_ context.Context, db *table.DB) (SQLSession, error) {
	s := sql.NewSession(db)
	s.FreezeNow(Now)
	return &testSession{s: s}, nil
}

// suiteAnswers computes the answer of every suite query by brute force
// over the generated rows, rendered as NormalizeRows renders the engine's.
func suiteAnswers(g *Generator, seed uint64) map[string]string {
	now := Now.UnixMicro()
	var live []Row
	for i := int64(0); i < g.Rows; i++ {
		if r := g.Row(i); r.Live(now) {
			live = append(live, r)
		}
	}
	num := func(v float64) string { return FormatSum(v) }
	dt := func(us int64) string {
		return timeOf(us).Format("2006-01-02 15:04:05.000000")
	}
	out := map[string]string{}
	var sum float64
	var q3, q9 int64
	minT, maxT := live[0].EventTime, live[0].EventTime
	users := map[int64]float64{}
	hours := map[int]struct {
		n int64
		s float64
	}{}
	countries := map[string]struct {
		n int64
		s float64
	}{}
	var q12 int64
	for _, r := range live {
		sum += r.Amount
		if r.Amount > 9000 && r.UserID < 500000 {
			q3++
		}
		if strings.Contains(r.Message, "refund") {
			q9++
		}
		minT, maxT = min(minT, r.EventTime), max(maxT, r.EventTime)
		users[r.UserID] += r.Amount
		h := timeOf(r.EventTime).Hour()
		hs := hours[h]
		hs.n++
		hs.s += r.Amount
		hours[h] = hs
		c := UserCountry(seed, r.UserID)
		cs := countries[c]
		cs.n++
		cs.s += r.Amount
		countries[c] = cs
		if UserPlan(seed, r.UserID) == "pro" {
			q12++
		}
	}
	n := int64(len(live))
	out["q01"] = strconv.FormatInt(n, 10)
	out["q02"] = num(sum)
	out["q03"] = strconv.FormatInt(q3, 10)
	out["q04"] = fmt.Sprintf("%s %s %s", dt(minT), dt(maxT), num(sum/float64(n)))
	type us struct {
		id int64
		s  float64
	}
	var byUser []us
	for id, s := range users {
		byUser = append(byUser, us{id, s})
	}
	sort.Slice(byUser, func(i, j int) bool { return byUser[i].s > byUser[j].s })
	var rows []string
	for _, u := range byUser[:10] {
		rows = append(rows, fmt.Sprintf("%d %s", u.id, num(u.s)))
	}
	out["q05"] = strings.Join(rows, " | ")
	rows = nil
	for h := 0; h < 24; h++ {
		if hs, ok := hours[h]; ok {
			rows = append(rows, fmt.Sprintf("%d %d %s", h, hs.n, num(hs.s)))
		}
	}
	out["q06"] = strings.Join(rows, " | ")
	byAmount := append([]Row(nil), live...)
	// Ties keep scan order (id order here): a stable sort, as the engine's.
	sort.SliceStable(byAmount, func(i, j int) bool { return byAmount[i].Amount > byAmount[j].Amount })
	rows = nil
	for _, r := range byAmount[:10] {
		rows = append(rows, fmt.Sprintf("%d %s", r.ID, num(r.Amount)))
	}
	out["q07"] = strings.Join(rows, " | ")
	out["q08"] = strconv.Itoa(len(users))
	out["q09"] = strconv.FormatInt(q9, 10)
	out["q10"] = "(no rows)"
	for _, r := range live {
		if r.ID == 123457 {
			out["q10"] = fmt.Sprintf("%d %s %d %s %s", r.ID, dt(r.EventTime), r.UserID, num(r.Amount), r.Message)
		}
	}
	rows = nil
	for _, c := range Countries {
		if cs, ok := countries[c]; ok {
			rows = append(rows, fmt.Sprintf("%s %d %s", c, cs.n, num(cs.s)))
		}
	}
	out["q11"] = strings.Join(rows, " | ")
	out["q12"] = strconv.FormatInt(q12, 10)
	return out
}

// TestSuite runs the SQL suite through Run, as `rowttl bench` does, and
// checks every answer against brute force over the generated rows.
func TestSuite(t *testing.T) {
	ctx := context.Background()
	const rows = 150_000 // enough for id 123457 to exist
	o := Options{Dir: t.TempDir(), Rows: rows, Layout: Random, Runs: 1, Warmup: -1, SQL: openTestSQL}
	if err := Prepare(ctx, o); err != nil {
		t.Fatal(err)
	}
	want := suiteAnswers(Events(rows, Random, DefaultSeed), DefaultSeed)
	for _, q := range Suite {
		rs, err := Run(ctx, o, q.Name)
		if err != nil {
			t.Fatalf("%s: %v", q.Name, err)
		}
		got := rs[0].Answer
		if rs[0].Seconds <= 0 || len(rs[0].Runs) != 1 {
			t.Errorf("%s: bad result %+v", q.Name, rs[0])
		}
		if !answersAgree(got, want[q.Name]) {
			t.Errorf("%s %s:\n got %s\nwant %s", q.Name, q.Text, got, want[q.Name])
		}
	}
}

func timeOf(us int64) time.Time { return time.UnixMicro(us).UTC() }

func TestSuiteAnswersAgree(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"1 9.5 | 2 9.5 | 3 9", "2 9.5 | 1 9.5 | 3 9", true},  // ties swapped
		{"1 9.5 | 2 9 | 3 9", "1 9.5 | 4 9 | 2 9", true},      // the last key's ties differ
		{"1 9.5 | 2 9.5 | 3 9", "1 9.5 | 4 9.5 | 3 9", false}, // a row above the cut differs
		{"1 9.5 | 2 9.4 | 3 9", "1 9.5 | 2 9.3 | 3 9", false}, // keys differ
		{"1 9.5 | 2 9.5", "1 9.5 | 2 9.5 | 3 9", false},       // lengths differ
	} {
		if got := suiteAnswersAgree("q07", c.a, c.b); got != c.want {
			t.Errorf("%q vs %q: %v, want %v", c.a, c.b, got, c.want)
		}
	}
	if suiteAnswersAgree("q06", "1 2", "2 1") {
		t.Error("q06 has no tie key")
	}
}
