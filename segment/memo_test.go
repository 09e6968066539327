package segment

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestMemo: a reader keeps the value of the last key asked for, builds
// again for another key, and answers concurrent callers with a value of
// their key.
func TestMemo(t *testing.T) {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues([]int64{1, 2, 3}, nil)
	arr := b.NewArray()
	b.Release()
	rec := newRecord(arr)
	arr.Release()
	defer rec.Release()
	data, _ := writeBatches(t, rec, WriterOptions{}, 0)
	r := openBytes(t, data, "memo")
	var builds atomic.Int32
	get := func(key *int) int {
		return r.Memo(key, func() any { builds.Add(1); return *key * 10 }).(int)
	}
	k1, k2 := new(int), new(int)
	*k1, *k2 = 1, 2
	if get(k1) != 10 || get(k1) != 10 || builds.Load() != 1 {
		t.Fatalf("same key: built %d times", builds.Load())
	}
	if get(k2) != 20 || builds.Load() != 2 {
		t.Fatalf("another key: built %d times", builds.Load())
	}
	if get(k1) != 10 || builds.Load() != 3 {
		t.Fatalf("the first key again: built %d times", builds.Load())
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k, want := k1, 10
				if (g+i)%2 == 0 {
					k, want = k2, 20
				}
				if got := get(k); got != want {
					t.Errorf("key %d: %d, want %d", *k, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}
