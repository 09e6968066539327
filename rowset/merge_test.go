package rowset

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
)

// testSeed returns ROWTTL_SEED when set, else a fresh seed, and logs it.
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

type mergeStep struct {
	rank int
	key  int64
	wins bool
}

// modelMerge is the contract written plainly: every (key, rank) pair in key
// order, highest rank first among equal keys, the first of each key winning.
func modelMerge(runs [][]int64) []mergeStep {
	var all []mergeStep
	for rank, run := range runs {
		for _, k := range run {
			all = append(all, mergeStep{rank: rank, key: k})
		}
	}
	slices.SortFunc(all, func(a, b mergeStep) int {
		if a.key != b.key {
			if a.key < b.key {
				return -1
			}
			return 1
		}
		return b.rank - a.rank
	})
	for i := range all {
		all[i].wins = i == 0 || all[i-1].key != all[i].key
	}
	return all
}

// runMerge drives m over runs the way the engine's merges do: an int64
// merge takes the keys as they are, a bytes merge their encoding into a
// buffer each run reuses.
func runMerge(m *Merge, runs [][]int64) []mergeStep {
	pos := make([]int, len(runs))
	keys := make([][]byte, len(runs))
	push := func(rank int, v int64) {
		if m.ints {
			m.PushInt(rank, v)
			return
		}
		keys[rank] = encodeBytes(keys[rank], v)
		m.Push(rank, keys[rank])
	}
	advance := func(rank int, v int64) {
		if m.ints {
			m.AdvanceInt(v)
			return
		}
		keys[rank] = encodeBytes(keys[rank], v)
		m.Advance(keys[rank])
	}
	for rank, run := range runs {
		if len(run) > 0 {
			push(rank, run[0])
		}
	}
	var out []mergeStep
	for m.Len() > 0 {
		rank, wins := m.Next()
		out = append(out, mergeStep{rank: rank, key: runs[rank][pos[rank]], wins: wins})
		pos[rank]++
		if pos[rank] == len(runs[rank]) {
			m.Drop()
			continue
		}
		advance(rank, runs[rank][pos[rank]])
	}
	return out
}

func encodeBytes(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst[:0], uint64(v)^(1<<63))
}

func randomRuns(rng *rand.Rand) [][]int64 {
	runs := make([][]int64, rng.IntN(8))
	span := int64(1 + rng.IntN(60))
	for i := range runs {
		n := rng.IntN(40)
		seen := map[int64]bool{}
		for j := 0; j < n; j++ {
			k := rng.Int64N(span) - span/2
			if !seen[k] {
				seen[k] = true
				runs[i] = append(runs[i], k)
			}
		}
		slices.Sort(runs[i])
	}
	return runs
}

func TestMergeAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 18))
	for iter := 0; iter < 2000; iter++ {
		runs := randomRuns(rng)
		want := modelMerge(runs)
		if got := runMerge(NewBytesMerge(), runs); !slices.Equal(got, want) {
			t.Fatalf("bytes merge of %v:\n got %v\nwant %v", runs, got, want)
		}
		if got := runMerge(NewInt64Merge(), runs); !slices.Equal(got, want) {
			t.Fatalf("int64 merge of %v:\n got %v\nwant %v", runs, got, want)
		}
	}
}

// TestMergeTieBreak pins the one tie-break by hand: of equal keys the highest
// rank wins, whatever the order the runs were pushed in.
func TestMergeTieBreak(t *testing.T) {
	m := NewInt64Merge()
	m.PushInt(0, 5)
	m.PushInt(2, 5)
	m.PushInt(1, 5)
	var got []mergeStep
	for m.Len() > 0 {
		rank, wins := m.Next()
		got = append(got, mergeStep{rank: rank, key: 5, wins: wins})
		m.Drop()
	}
	want := []mergeStep{{2, 5, true}, {1, 5, false}, {0, 5, false}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestMergeBelow(t *testing.T) {
	m := NewInt64Merge()
	m.PushInt(0, 1)
	m.PushInt(1, 4)
	if rank, wins := m.Next(); rank != 0 || !wins {
		t.Fatalf("Next = %d, %v", rank, wins)
	}
	for k, want := range map[int64]bool{2: true, 3: true, 4: false, 5: false} {
		if got := m.BelowInt(k); got != want {
			t.Errorf("Below(%d) = %v, want %v", k, got, want)
		}
	}
	m.Drop()
	if !m.BelowInt(1 << 40) {
		t.Error("Below with one run left = false")
	}
}

func BenchmarkMerge(b *testing.B) {
	const runs, rows = 10, 100_000
	rng := rand.New(rand.NewPCG(3, 3))
	in := make([][]int64, runs)
	for i := range in {
		seen := map[int64]bool{}
		for len(in[i]) < rows {
			if k := rng.Int64N(100 * rows); !seen[k] {
				seen[k] = true
				in[i] = append(in[i], k)
			}
		}
		slices.Sort(in[i])
	}
	b.Run("int64", func(b *testing.B) {
		for b.Loop() {
			runMerge(NewInt64Merge(), in)
		}
	})
	b.Run("bytes", func(b *testing.B) {
		for b.Loop() {
			runMerge(NewBytesMerge(), in)
		}
	})
}
