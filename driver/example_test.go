package driver_test

import (
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	_ "github.com/rowttl/rowttl/driver"
)

func Example() {
	dir, _ := os.MkdirTemp("", "rowttl-example")
	defer os.RemoveAll(dir)
	db, err := sql.Open("rowttl", "file:"+filepath.Join(dir, "data")+"?time_zone=%2B08:00&session_now=2026-01-02+12:00:00")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	// Events live one day after event_time, read in +08:00.
	if _, err := db.Exec(`CREATE TABLE events (id BIGINT, event_time DATETIME(6), msg STRING) DUPLICATE KEY(id)
		PROPERTIES ("function_column.enable_row_ttl" = "true", "function_column.ttl_col" = "event_time",
		            "function_column.ttl" = "1 day", "function_column.ttl_time_zone" = "+08:00")`); err != nil {
		log.Fatal(err)
	}
	loc := time.FixedZone("+08:00", 8*3600)
	for i, at := range []time.Time{
		time.Date(2025, 12, 31, 9, 0, 0, 0, loc), // expired at 2026-01-01 09:00
		time.Date(2026, 1, 2, 9, 0, 0, 0, loc),
	} {
		if _, err := db.Exec("INSERT INTO events VALUES (?, ?, ?)", i+1, at, fmt.Sprint("event ", i+1)); err != nil {
			log.Fatal(err)
		}
	}
	rows, err := db.Query("SELECT id, event_time, msg FROM events ORDER BY id")
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var at time.Time
		var msg string
		if err := rows.Scan(&id, &at, &msg); err != nil {
			log.Fatal(err)
		}
		fmt.Println(id, at.Format(time.DateTime), msg)
	}
	// Output:
	// 2 2026-01-02 09:00:00 event 2
}
