#!/usr/bin/env bash
# compare.sh [ROWS] — rowttl and DuckDB side by side on the same generated
# rows, in the same run; for the small writes, SQLite beside them too.
#
# Builds `rowttl` (main module) and `duckbench` (the nested bench/duckdb
# module, cgo; its first build compiles and links DuckDB and takes
# minutes), then runs every workload of every layout on both engines, one
# engine after the other (rowttl first on even steps, DuckDB first on odd
# ones, so that neither always runs on a warmer machine), each workload in a
# fresh process. The JSON lines of both go to $OUT; the table at the end is
# `rowttl bench --compare $OUT`.
#
# smallwrites (durable one-row writes from 1 and 16 goroutines, and 10-row
# writes during a full compaction of the ROWS-row events table) also builds
# `sqlbench` (the nested bench/sqlite module, pure Go: modernc.org/sqlite in
# WAL mode with synchronous=FULL, one autocommit INSERT per row) and runs it
# beside rowttl and DuckDB, WRITES writes each (default 20000).
#
# Environment: LAYOUTS (default "random correlated"), WORKLOADS (default
# "load count sum groupby project reclaim upsert export import smallwrites suite";
# smallwrites, like upsert, runs with the first layout only; suite is the SQL
# queries q01..q12 of bench.Suite, the same text in both engines; upsert
# ignores the layout and runs with the first one only), RUNS (measured runs per workload,
# default 3), DIR (tables and binaries, default ${TMPDIR:-/tmp}/rowttl-bench),
# OUT (default $DIR/compare-ROWS-DATE.jsonl), DUCKDB_LOAD_ARROW=1 to also
# time DuckDB loading through an Arrow view instead of the Appender,
# DUCKDB=0 to run without DuckDB (no cgo build; rowttl, and SQLite for
# smallwrites, alone).
set -euo pipefail

ROWS=${1:-2000000}
LAYOUTS=${LAYOUTS:-random correlated}
SUITE="q01 q02 q03 q04 q05 q06 q07 q08 q09 q10 q11 q12"
WORKLOADS=${WORKLOADS:-load count sum groupby project reclaim upsert export import smallwrites suite}
WORKLOADS=${WORKLOADS//suite/$SUITE}
RUNS=${RUNS:-3}
WRITES=${WRITES:-20000}
DIR=${DIR:-${TMPDIR:-/tmp}/rowttl-bench}
OUT=${OUT:-$DIR/compare-$ROWS-$(date +%Y%m%d-%H%M%S).jsonl}

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
mkdir -p "$DIR/bin"
: > "$OUT"

echo "compare.sh: building rowttl" >&2
(cd "$root" && go build -o "$DIR/bin/rowttl" ./cmd/rowttl)
if [[ ${DUCKDB:-1} != 0 ]]; then
  echo "compare.sh: building duckbench (the first build of DuckDB takes minutes)" >&2
  # -mod=mod: the nested module replaces rowttl with ../.., so a dependency
  # the main module gained since go.mod here was last tidied is added on the fly.
  (cd "$here/duckdb" && go build -mod=mod -tags duckdb_arrow -o "$DIR/bin/duckbench" .)
fi
if [[ " $WORKLOADS " == *" smallwrites "* ]]; then
  echo "compare.sh: building sqlbench" >&2
  (cd "$here/sqlite" && go build -mod=mod -o "$DIR/bin/sqlbench" .)
fi

common=(--rows "$ROWS" --runs "$RUNS" --dir "$DIR" --writes "$WRITES")
run_rowttl() { "$DIR/bin/rowttl" bench --json --isolate "${common[@]}" --layout "$1" --workloads "$2" >> "$OUT"; }
run_duckdb() {
  [[ ${DUCKDB:-1} != 0 ]] || return 0
  "$DIR/bin/duckbench" -json -isolate -rows "$ROWS" -runs "$RUNS" -dir "$DIR" -writes "$WRITES" -layout "$1" -workloads "$2" >> "$OUT"
}
run_sqlite() { "$DIR/bin/sqlbench" -json -writes "$WRITES" -dir "$DIR" -workloads "$1" >> "$OUT"; }

step=0
first_layout=
for layout in $LAYOUTS; do
  first_layout=${first_layout:-$layout}
  for w in $WORKLOADS; do
    if [[ ($w == upsert || $w == smallwrites) && $layout != "$first_layout" ]]; then
      continue
    fi
    duck_w=$w
    if [[ $w == load && ${DUCKDB_LOAD_ARROW:-0} == 1 ]]; then
      duck_w=load,load_arrow
    fi
    echo "compare.sh: $w ($layout), $ROWS rows" >&2
    if (( step % 2 == 0 )); then
      run_rowttl "$layout" "$w"
      run_duckdb "$layout" "$duck_w"
    else
      run_duckdb "$layout" "$duck_w"
      run_rowttl "$layout" "$w"
    fi
    if [[ $w == smallwrites ]]; then
      run_sqlite "$w"
    fi
    step=$((step + 1))
  done
done

echo "compare.sh: JSON lines in $OUT" >&2
"$DIR/bin/rowttl" bench --compare "$OUT"
