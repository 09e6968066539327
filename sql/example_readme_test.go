package sql_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl/query"
	"github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/table"
)

// Example_readme is the Go API section of README.md, verbatim between the
// README markers (TestREADMEGoAPI keeps them the same): a data directory,
// SQL through a session (a JOIN and a GROUP BY, read as Arrow), and the
// table API on the same table.
func Example_readme() {
	tmp, _ := os.MkdirTemp("", "rowttl-readme")
	defer os.RemoveAll(tmp)
	wd, _ := os.Getwd()
	os.Chdir(tmp)
	defer os.Chdir(wd)

	// README begin
	ctx := context.Background()
	// A data directory holds databases of tables: DIR/<db>/<table>/, the
	// database "default" always there. OpenDB makes a missing or empty
	// directory a data directory, and `rowttl sql --dir rowttl-data` sees
	// the same tables.
	db, err := table.OpenDB("rowttl-data", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	// SQL as the shell runs it: Exec for statements, Query for result sets.
	s := sql.NewSession(db)
	defer s.Close()
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	s.FreezeNow(now) // a fixed clock for the example; the wall clock by default
	for _, stmt := range []string{
		`CREATE TABLE events (id BIGINT NOT NULL, event_time DATETIME(6) NOT NULL, user_id BIGINT, amount DOUBLE)
		 DUPLICATE KEY(id) PROPERTIES ("function_column.enable_row_ttl" = "true",
		 "function_column.ttl_col" = "event_time", "function_column.ttl" = "7 days",
		 "function_column.ttl_time_zone" = "UTC")`,
		`CREATE TABLE users (user_id BIGINT NOT NULL, country VARCHAR(8)) DUPLICATE KEY(user_id)`,
		`INSERT INTO events VALUES (1, '2026-01-01 00:00:00', 10, 1.5),
		 (2, '2026-01-08 00:00:00', 10, 2.5), (3, '2026-01-09 12:00:00', 20, 4), (4, '2026-01-09 13:00:00', 20, 1)`,
		`INSERT INTO users VALUES (10, 'fr'), (20, 'de')`,
	} {
		if _, err := s.Exec(ctx, stmt); err != nil {
			log.Fatal(err)
		}
	}
	// Row 1 expired on 2026-01-08: a query sees only the rows alive at its
	// now. Results stream as Arrow record batches, each column an Arrow
	// array of its SQL type (sql.FieldType(field) names it).
	r, err := s.Query(ctx, `SELECT u.country, count(*) AS n, sum(e.amount) AS total
		FROM events e JOIN users u ON e.user_id = u.user_id
		GROUP BY u.country ORDER BY u.country`)
	if err != nil {
		log.Fatal(err)
	}
	for r.Next() {
		b := r.RecordBatch()
		country := b.Column(0).(*array.String)
		n := b.Column(1).(*array.Int64)
		total := b.Column(2).(*array.Float64)
		for i := range int(b.NumRows()) {
			fmt.Println(country.Value(i), n.Value(i), total.Value(i))
		}
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(sql.FieldType(r.Schema().Field(2)))
	r.Release()

	// The table API on the same table: Count and Aggregate reduce pages
	// where they lie, Scan streams the live rows as Arrow.
	tbl, err := db.Table("default", "events")
	if err != nil {
		log.Fatal(err)
	}
	n, err := tbl.Count(ctx, now, nil)
	if err != nil {
		log.Fatal(err)
	}
	tot, err := tbl.Aggregate(ctx, query.Request{Now: now, Columns: []string{"amount"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, tot.Rows, tot.Sums[0].Float)
	// README end

	// Output:
	// de 2 5
	// fr 1 2.5
	// DOUBLE
	// 3 3 7.5
}

// TestREADMEGoAPI: the Go API section of README.md is Example_readme's
// body, so that what the README shows compiles and runs.
func TestREADMEGoAPI(t *testing.T) {
	src, err := os.ReadFile("example_readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)\t// README begin\n(.*?)\t// README end\n`).FindSubmatch(src)
	if m == nil {
		t.Fatal("no README markers in example_readme_test.go")
	}
	var want strings.Builder
	for _, l := range strings.SplitAfter(string(m[1]), "\n") {
		want.WriteString(strings.TrimPrefix(l, "\t"))
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	sec := regexp.MustCompile("(?s)## Go API\n.*?```go\n(.*?)```\n").FindSubmatch(readme)
	if sec == nil {
		t.Fatal("README.md has no ```go block under ## Go API")
	}
	if got := string(sec[1]); got != want.String() {
		t.Fatalf("README.md's Go API block differs from Example_readme:\n--- README\n%s\n--- example\n%s", got, want.String())
	}
}
