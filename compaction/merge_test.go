package compaction

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
)

// collect is a Sink that keeps every row as text and counts batches.
type collect struct {
	rows    []string
	batches int
}

func (c *collect) Write(rec arrow.RecordBatch) error {
	c.batches++
	for i := 0; i < int(rec.NumRows()); i++ {
		var f []string
		for _, col := range rec.Columns() {
			if col.IsNull(i) {
				f = append(f, "null")
			} else {
				f = append(f, col.ValueStr(i))
			}
		}
		c.rows = append(c.rows, strings.Join(f, " "))
	}
	return nil
}

var (
	intSchema = arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	strSchema = arrow.NewSchema([]arrow.Field{
		{Name: "k1", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "k2", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
)

// parseReader reads "k v, k v | k v": rows separated by commas, batches by
// bars; in the two-key schema a row is "k1 k2 v". null is NULL.
func parseReader(t *testing.T, mem memory.Allocator, sc *arrow.Schema, line string) array.RecordReader {
	t.Helper()
	var recs []arrow.RecordBatch
	for _, batch := range strings.Split(line, "|") {
		b := array.NewRecordBuilder(mem, sc)
		for _, row := range strings.Split(batch, ",") {
			f := strings.Fields(row)
			if len(f) == 0 {
				continue
			}
			if len(f) != sc.NumFields() {
				t.Fatalf("row %q: want %d fields", row, sc.NumFields())
			}
			for c, s := range f {
				switch fb := b.Field(c).(type) {
				case *array.Int64Builder:
					n, err := strconv.ParseInt(s, 10, 64)
					if err != nil {
						t.Fatal(err)
					}
					fb.Append(n)
				case *array.StringBuilder:
					if s == "null" {
						fb.AppendNull()
					} else {
						fb.Append(s)
					}
				}
			}
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	r, err := array.NewRecordReader(sc, recs)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		rec.Release()
	}
	return r
}

// TestMergeGolden runs testdata/merge: each case lists readers oldest first,
// one per line, and prints the rows written.
//
//	merge [keys=2] [batch=N]    rows in key order, the newest reader's row per key
//	concat [batch=N]            every row, reader after reader
//
// Regenerate with `go test ./compaction -run TestMergeGolden -rewrite`.
func TestMergeGolden(t *testing.T) {
	datadriven.Walk(t, "testdata/merge", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			sc, keys := intSchema, 1
			if d.HasArg("keys") {
				d.ScanArgs(t, "keys", &keys)
				sc = strSchema
			}
			if d.HasArg("batch") {
				defer func(n int64) { batchRows = n }(batchRows)
				d.ScanArgs(t, "batch", &batchRows)
			}
			var readers []array.RecordReader
			for _, line := range strings.Split(d.Input, "\n") {
				if line != "" {
					readers = append(readers, parseReader(t, mem, sc, line))
				}
			}
			defer func() {
				for _, r := range readers {
					r.Release()
				}
			}()
			var sink collect
			var n int64
			var err error
			switch d.Cmd {
			case "merge":
				n, err = MergeByKey(context.Background(), mem, sc, readers, keys, &sink)
			case "concat":
				n, err = Concat(context.Background(), mem, sc, readers, &sink)
			default:
				t.Fatalf("unknown command %s", d.Cmd)
			}
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			var out strings.Builder
			fmt.Fprintf(&out, "%d rows in %d batches\n", n, sink.batches)
			for _, r := range sink.rows {
				out.WriteString(r + "\n")
			}
			return out.String()
		})
	})
}

func testSeed(t *testing.T) uint64 {
	t.Helper()
	seed := rand.Uint64()
	if s := os.Getenv("ROWTTL_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("ROWTTL_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with ROWTTL_SEED=%d)", seed, seed)
	return seed
}

// TestMergeByKeyAgainstModel merges random sorted readers cut into random
// batches, with a random output batch size, and compares with a map in
// which later readers overwrite earlier ones.
func TestMergeByKeyAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 1))
	defer func(n int64) { batchRows = n }(batchRows)
	for iter := 0; iter < 300; iter++ {
		batchRows = int64(1 + rng.IntN(100))
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		model := map[int64]string{}
		var lines []string
		nr := rng.IntN(6)
		span := int64(1 + rng.IntN(200))
		for r := 0; r < nr; r++ {
			keys := map[int64]bool{}
			for i := rng.IntN(60); i > 0; i-- {
				keys[rng.Int64N(span)] = true
			}
			sorted := slices.Sorted(maps.Keys(keys))
			var sb strings.Builder
			for i, k := range sorted {
				v := fmt.Sprintf("r%d.%d", r, k)
				model[k] = v
				if i > 0 {
					if rng.IntN(8) == 0 {
						sb.WriteString("|")
					} else {
						sb.WriteString(",")
					}
				}
				fmt.Fprintf(&sb, "%d %s", k, v)
			}
			lines = append(lines, sb.String())
		}
		var readers []array.RecordReader
		for _, l := range lines {
			readers = append(readers, parseReader(t, mem, intSchema, l))
		}
		var sink collect
		n, err := MergeByKey(context.Background(), mem, intSchema, readers, 1, &sink)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, k := range slices.Sorted(maps.Keys(model)) {
			want = append(want, fmt.Sprintf("%d %s", k, model[k]))
		}
		if n != int64(len(want)) || !slices.Equal(sink.rows, want) {
			t.Fatalf("readers %q:\n got %d %v\nwant %v", lines, n, sink.rows, want)
		}
		for _, r := range readers {
			r.Release()
		}
		mem.AssertSize(t, 0)
	}
}

type failingSink struct{ err error }

func (f failingSink) Write(arrow.RecordBatch) error { return f.err }

// TestMergeErrors: a cancelled context, a failing sink and a failing reader
// end the merge with their error.
func TestMergeErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var big strings.Builder
	for i := 0; i < 5000; i++ {
		if i > 0 {
			big.WriteString(",")
		}
		fmt.Fprintf(&big, "%d x", i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := parseReader(t, mem, intSchema, big.String())
	if _, err := MergeByKey(ctx, mem, intSchema, []array.RecordReader{r}, 1, &collect{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled merge: %v", err)
	}
	r.Release()

	boom := errors.New("disk full")
	for _, merge := range []bool{true, false} {
		r := parseReader(t, mem, intSchema, "1 a, 2 b")
		var err error
		if merge {
			_, err = MergeByKey(context.Background(), mem, intSchema, []array.RecordReader{r}, 1, failingSink{boom})
		} else {
			_, err = Concat(context.Background(), mem, intSchema, []array.RecordReader{r}, failingSink{boom})
		}
		if !errors.Is(err, boom) {
			t.Errorf("merge=%v with a failing sink: %v", merge, err)
		}
		r.Release()
	}
}
