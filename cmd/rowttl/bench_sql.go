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

// benchSQL opens the suite's session the way `rowttl sql` does: a session
// in the data directory's default database, the clock frozen at the
// benchmark's now; each query's rows come formatted as the shell prints
// them. The harness opened the directory and closes it.
func benchSQL(_ context.Context, db *table.DB) (bench.SQLSession, error) {
	s := sql.NewSession(db)
	s.FreezeNow(bench.Now)
	return &benchSession{s: s}, nil
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
	s *sql.Session
}

func (b *benchSession) Run(ctx context.Context, text string) ([][]string, error) {
	res, err := b.s.Exec(ctx, text)
	if err != nil {
		return nil, err
	}
	return res.Rows, nil
}

func (b *benchSession) Close() error {
	b.s.Close()
	return nil
}
