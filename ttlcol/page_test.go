package ttlcol

import (
	"bytes"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestClassify(t *testing.T) {
	const th = 100
	tests := []struct {
		name        string
		rows, nulls int64
		hasMinMax   bool
		min, max    int64
		want        PageState
	}{
		{"all below", 10, 0, true, 1, 99, AllExpired},
		{"max equals threshold is expired", 10, 0, true, 1, 100, AllExpired},
		{"max just above", 10, 0, true, 1, 101, Mixed},
		{"all above", 10, 0, true, 101, 200, AllLive},
		{"min equals threshold", 10, 0, true, 100, 200, Mixed},
		{"nulls keep it alive", 10, 3, true, 1, 99, Mixed},
		{"nulls and all above", 10, 3, true, 101, 200, AllLive},
		{"all null", 10, 10, false, 0, 0, AllLive},
		{"all null with junk stats", 10, 10, true, 1, 1, AllLive},
		{"empty", 0, 0, false, 0, 0, AllLive},
		{"no stats", 10, 0, false, 0, 0, Mixed},
		{"no stats, some nulls", 10, 2, false, 0, 0, Mixed},
		{"extremes expired", 2, 0, true, math.MinInt64, math.MinInt64, AllExpired},
		{"extremes live", 2, 0, true, math.MaxInt64, math.MaxInt64, AllLive},
		{"single value at threshold", 1, 0, true, 100, 100, AllExpired},
	}
	for _, tt := range tests {
		if got := Classify(tt.rows, tt.nulls, tt.hasMinMax, tt.min, tt.max, th); got != tt.want {
			t.Errorf("%s: Classify = %s; want %s", tt.name, got, tt.want)
		}
	}
	if got := Classify(1, 0, true, 0, 0, math.MinInt64); got != AllLive {
		t.Errorf("threshold MinInt64: %s", got)
	}
	if got := Classify(1, 0, true, math.MaxInt64, math.MaxInt64, math.MaxInt64); got != AllExpired {
		t.Errorf("threshold MaxInt64: %s", got)
	}
}

func TestPageStateString(t *testing.T) {
	for s, want := range map[PageState]string{Mixed: "mixed", AllExpired: "all-expired", AllLive: "all-live", 7: "PageState(?)"} {
		if got := s.String(); got != want {
			t.Errorf("%d.String() = %q; want %q", s, got, want)
		}
	}
}

func TestPageMask(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewInt64Builder(mem)
	// 70 rows, so that the 64-row kernel and its tail both run; every
	// seventh NULL, the values around the threshold.
	var want []bool
	for i := 0; i < 70; i++ {
		if i%7 == 0 {
			b.AppendNull()
			want = append(want, true)
			continue
		}
		v := int64(95 + i%10)
		b.Append(v)
		want = append(want, v > 100)
	}
	full := b.NewInt64Array()
	b.Release()
	defer full.Release()
	// A slice with an offset, as pages cut from larger arrays are.
	sliced := array.NewSlice(full, 3, 70)
	defer sliced.Release()
	for _, c := range []struct {
		name string
		a    arrow.Array
		want []bool
	}{{"whole", full, want}, {"offset 3", sliced, want[3:]}} {
		n := c.a.Len()
		mask := bytes.Repeat([]byte{0xAA}, (n+7)/8)
		live := PageMask(Mixed, c.a, n, 100, mask)
		count := 0
		for i, w := range c.want {
			if bitutil.BitIsSet(mask, i) != w {
				t.Errorf("%s: row %d live = %v, want %v", c.name, i, !w, w)
			}
			if w {
				count++
			}
		}
		if live != count {
			t.Errorf("%s: %d live, want %d", c.name, live, count)
		}
	}
	// The states the statistics decide never read the column.
	mask := bytes.Repeat([]byte{0x55}, 2)
	if got := PageMask(AllLive, nil, 10, 100, mask); got != 10 || mask[0] != 0xFF || mask[1] != 0x03 {
		t.Errorf("AllLive: %d, %08b", got, mask)
	}
	if got := PageMask(AllExpired, nil, 10, 100, mask); got != 0 || mask[0] != 0 || mask[1] != 0 {
		t.Errorf("AllExpired: %d, %08b", got, mask)
	}
}
