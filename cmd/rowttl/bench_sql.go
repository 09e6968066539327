package main

import (
	"context"
	"fmt"
	"os"

	"github.com/rowttl/rowttl/bench"
	"github.com/rowttl/rowttl/load"
	"github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/table"
)

// benchSQL opens the suite's session the way `rowttl sql` does: a data
// directory, a session in its default database, the clock frozen at the
// benchmark's now; each query's rows come formatted as the shell prints
// them.
func benchSQL(_ context.Context, dir string) (bench.SQLSession, error) {
	db, err := table.OpenDB(dir, &table.Options{DisableAutoCompaction: true})
	if err != nil {
		return nil, err
	}
	s := sql.NewSession(db)
	s.FreezeNow(bench.Now)
	return &benchSession{db: db, s: s}, nil
}

// benchLoad loads a Parquet file into tbl as `rowttl load --format
// parquet` does, at the benchmark's now.
func benchLoad(ctx context.Context, tbl *table.Table, path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	res := load.Run(ctx, tbl, f, load.Options{Format: load.FormatParquet, Now: bench.Now}, nil)
	if !res.OK() {
		return 0, fmt.Errorf("load %s: %s: %s", path, res.Status, res.Message)
	}
	return res.NumberLoadedRows, nil
}

type benchSession struct {
	db *table.DB
	s  *sql.Session
}

func (b *benchSession) Run(ctx context.Context, text string) ([][]string, error) {
	res, err := b.s.Exec(ctx, text)
	if err != nil {
		return nil, err
	}
	return res.Rows, nil
}

func (b *benchSession) Close() error { return b.db.Close() }
