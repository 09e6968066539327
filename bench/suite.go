package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/table"
)

// Query is one query of the SQL suite: the same text runs in rowttl (where
// the engine applies the TTL) and in DuckDB (where events is a view of the
// live rows).
type Query struct {
	Name string
	Text string
	// TieKey, when positive, is the 1-based field of the ORDER BY key of a
	// query with LIMIT whose key may tie: rows of equal keys may come in
	// any order, and which of them make the cut is unspecified.
	TieKey int
}

// Suite is the SQL query suite, over the events table and the users
// dimension table.
var Suite = []Query{
	{"q01", "SELECT count(*) FROM events", 0},
	{"q02", "SELECT sum(amount) FROM events", 0},
	{"q03", "SELECT count(*) FROM events WHERE amount > 9000 AND user_id < 500000", 0},
	{"q04", "SELECT min(event_time), max(event_time), avg(amount) FROM events", 0},
	{"q05", "SELECT user_id, sum(amount) FROM events GROUP BY user_id ORDER BY 2 DESC LIMIT 10", 2},
	{"q06", "SELECT hour(event_time), count(*), sum(amount) FROM events GROUP BY hour(event_time) ORDER BY 1", 0},
	{"q07", "SELECT id, amount FROM events ORDER BY amount DESC LIMIT 10", 2},
	{"q08", "SELECT count(DISTINCT user_id) FROM events", 0},
	{"q09", "SELECT count(*) FROM events WHERE message LIKE '%refund%'", 0},
	{"q10", "SELECT * FROM events WHERE id = 123457", 0},
	{"q11", "SELECT u.country, count(*), sum(e.amount) FROM events e JOIN users u ON e.user_id = u.user_id GROUP BY u.country ORDER BY 1", 0},
	{"q12", "SELECT count(*) FROM events WHERE user_id IN (SELECT user_id FROM users WHERE plan = 'pro')", 0},
}

// SuiteQuery returns the query of the suite named name.
func SuiteQuery(name string) (Query, bool) {
	for _, q := range Suite {
		if q.Name == name {
			return q, true
		}
	}
	return Query{}, false
}

func suiteNames() []string {
	out := make([]string, len(Suite))
	for i, q := range Suite {
		out[i] = q.Name
	}
	return out
}

// SQLSession runs the suite's statements; the harness's caller provides it
// (the SQL layer sits above this package), so that the suite is timed
// through the same path a user's query takes. Closing it leaves its data
// directory open.
type SQLSession interface {
	// Run executes one statement at the benchmark's Now and returns its
	// rows formatted as the shell prints them.
	Run(ctx context.Context, text string) ([][]string, error)
	Close() error
}

// Countries of the users table, and the share of its users on the pro plan.
var Countries = [...]string{"BR", "CN", "DE", "IN", "JP", "US"}

const proPercent = 10

// UserCountry and UserPlan are the attributes of user i of the users table,
// a pure function of i (and the seed), as the events generator is.
func UserCountry(seed uint64, i int64) string {
	return Countries[splitmix64(seed^0x5eed+uint64(i)*0x9e3779b97f4a7c15)%uint64(len(Countries))]
}

// UserPlan is "pro" for about proPercent of the users, "free" otherwise.
func UserPlan(seed uint64, i int64) string {
	if splitmix64(splitmix64(seed^0x91a+uint64(i)*0x9e3779b97f4a7c15))%100 < proPercent {
		return "pro"
	}
	return "free"
}

// Names of the users table's columns.
const (
	ColCountry = "country"
	ColPlan    = "plan"
)

// UsersDefinition is the users dimension table: one row per user_id of the
// events domain, no TTL.
func UsersDefinition() *table.Definition {
	return &table.Definition{
		Model: schema.Duplicate,
		Schema: schema.Schema{KeyCount: 1, Columns: []schema.Column{
			{Name: ColUserID, Type: schema.BigIntType},
			{Name: ColCountry, Type: schema.VarcharType(16)},
			{Name: ColPlan, Type: schema.VarcharType(8)},
		}},
	}
}

// UsersArrowSchema is the schema of UsersBatches.
func UsersArrowSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: ColUserID, Type: arrow.PrimitiveTypes.Int64},
		{Name: ColCountry, Type: arrow.BinaryTypes.String},
		{Name: ColPlan, Type: arrow.BinaryTypes.String},
	}, nil)
}

// UsersBatches generates the users table: user_id 0..Users-1 in order.
func UsersBatches(mem memory.Allocator, seed uint64) []arrow.RecordBatch {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	var out []arrow.RecordBatch
	b := array.NewRecordBuilder(mem, UsersArrowSchema())
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	countries := b.Field(1).(*array.StringBuilder)
	plans := b.Field(2).(*array.StringBuilder)
	for start := int64(0); start < Users; start += DefaultBatchRows {
		n := min(int64(DefaultBatchRows), Users-start)
		for i := start; i < start+n; i++ {
			ids.Append(i)
			countries.Append(UserCountry(seed, i))
			plans.Append(UserPlan(seed, i))
		}
		out = append(out, b.NewRecordBatch())
	}
	return out
}

// NormalizeRows renders a query's rows as the answer of its workload:
// fields as printed, separated by spaces, rows by " |", except that numbers
// with a fraction or an exponent keep ten significant digits, which engines
// summing in different orders agree on (the comparison then allows a
// relative 1e-8 between numbers). Both engines' sides render through it.
func NormalizeRows(rows [][]string) string {
	var b strings.Builder
	for i, row := range rows {
		if i > 0 {
			b.WriteString(" | ")
		}
		for j, f := range row {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(normalizeField(f))
		}
	}
	if len(rows) == 0 {
		return "(no rows)"
	}
	return b.String()
}

func normalizeField(f string) string {
	if !strings.ContainsAny(f, ".eE") {
		return f
	}
	if v, err := strconv.ParseFloat(f, 64); err == nil {
		return FormatSum(v)
	}
	return f
}

// suiteAnswersAgree compares the answers of a suite query whose ORDER BY
// key may tie (Query.TieKey): the keys must come in the same sequence, and
// the rows whose key is not the last one's must be the same set (rows tied
// with the last key may differ: either may make the cut).
func suiteAnswersAgree(workload, a, b string) bool {
	q, ok := SuiteQuery(workload)
	if !ok || q.TieKey <= 0 {
		return false
	}
	ra, rb := strings.Split(a, " | "), strings.Split(b, " | ")
	if len(ra) != len(rb) {
		return false
	}
	key := func(row string) string {
		f := strings.Fields(row)
		if q.TieKey > len(f) {
			return ""
		}
		return f[q.TieKey-1]
	}
	for i := range ra {
		if !answersAgree(key(ra[i]), key(rb[i])) {
			return false
		}
	}
	last := key(ra[len(ra)-1])
	seen := map[string]int{}
	for i := range ra {
		if key(ra[i]) != last {
			seen[ra[i]]++
		}
		if key(rb[i]) != last {
			seen[rb[i]]--
		}
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// ErrorAnswer starts the answer of a query the engine refused.
const ErrorAnswer = "ERROR: "

func runQuery(ctx context.Context, o *Options, res *Result, q Query) error {
	if o.SQL == nil {
		return fmt.Errorf("%s needs a SQL session (Options.SQL)", q.Name)
	}
	db, err := table.OpenDB(o.SQLDir(), &table.Options{DisableAutoCompaction: true})
	if err != nil {
		return fmt.Errorf("open the prepared data directory (run Prepare first): %w", err)
	}
	defer db.Close()
	sess, err := o.SQL(ctx, db)
	if err != nil {
		return err
	}
	defer sess.Close()
	if res.BytesOnDisk, err = bytesOnDisk(o.EventsDir()); err != nil {
		return err
	}
	res.OpRows = o.Rows
	o.logf("%s: %s: %d warm-up + %d runs", q.Name, q.Text, o.Warmup, o.Runs)
	if _, err := sess.Run(ctx, q.Text); err != nil {
		// A query the engine refuses is reported, not timed, so that one
		// unsupported query does not hide the rest of the suite.
		o.logf("%s: %v", q.Name, err)
		res.Answer = ErrorAnswer + err.Error()
		return nil
	}
	res.Seconds, res.Runs, res.Answer, err = Measure(o.Warmup, o.Runs, &res.CPUSeconds, Trial{
		Run: func() (string, error) {
			rows, err := sess.Run(ctx, q.Text)
			if err != nil {
				return "", err
			}
			return NormalizeRows(rows), nil
		},
	})
	return err
}
