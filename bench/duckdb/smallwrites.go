//go:build duckdb_arrow

package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/rowttl/rowttl/bench"
)

// runSmallWrites times autocommit one-row INSERTs of the small-writes rows
// (bench.SmallWriteRows) from 1 and 16 connections, each INSERT its own
// transaction, committed to DuckDB's WAL before it returns.
func runSmallWrites(ctx context.Context, c config) ([]bench.Result, error) {
	g := bench.SmallWriteRows(c.writes, c.seed)
	warm := bench.SmallWriteWarmup(c.writes)
	rows := make([]bench.Row, warm+c.writes)
	for i := range rows {
		rows[i] = g.Row(int64(i))
	}
	var out []bench.Result
	for _, workers := range bench.SmallWriteWorkers {
		name := fmt.Sprintf("smallwrites_%d", workers)
		path := filepath.Join(c.dir, "duckdb-"+name+".db")
		res, err := smallWrites(ctx, path, workers, rows, warm)
		removeDB(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		res.Workload, res.Layout = name, string(c.layout)
		out = append(out, res)
	}
	return out, nil
}

func smallWrites(ctx context.Context, path string, workers int, rows []bench.Row, warm int) (bench.Result, error) {
	res := bench.Result{Engine: Engine, Rows: int64(len(rows) - warm), Goroutines: workers}
	if err := removeDB(path); err != nil {
		return res, err
	}
	connector, err := duckdb.NewConnector(path, nil)
	if err != nil {
		return res, err
	}
	defer connector.Close()
	db := sql.OpenDB(connector)
	defer db.Close()
	db.SetMaxOpenConns(workers)
	db.SetMaxIdleConns(workers)
	if _, err := db.ExecContext(ctx, createEvents); err != nil {
		return res, err
	}
	stmt, err := db.PrepareContext(ctx, `INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return res, err
	}
	defer stmt.Close()
	insert := func(off int) func(i int) (time.Duration, error) {
		return func(i int) (time.Duration, error) {
			r := rows[off+i]
			var ttl any
			if r.HasTTL {
				ttl = r.TTL
			}
			return bench.Timed(func() error {
				_, err := stmt.ExecContext(ctx, r.ID, time.UnixMicro(r.EventTime).UTC(), r.UserID, r.Amount, r.Message, ttl)
				return err
			})
		}
	}
	if _, _, err := bench.RunConcurrent(warm, workers, insert(0)); err != nil {
		return res, err
	}
	cpu0 := bench.CPUTime()
	lat, wall, err := bench.RunConcurrent(len(rows)-warm, workers, insert(warm))
	if err != nil {
		return res, err
	}
	cpu := bench.CPUTime() - cpu0
	bench.SmallWriteResult(&res, lat, wall)
	res.CPUSeconds = cpu.Seconds()
	var live int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM events WHERE "+liveFilter).Scan(&live); err != nil {
		return res, err
	}
	res.Answer = fmt.Sprintf("live=%d", live)
	res.BytesOnDisk = fileBytes(path)
	res.PeakRSSBytes = bench.PeakRSS()
	return res, nil
}
