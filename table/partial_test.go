package table

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
)

// TestWritePartialRefused: a partial-column write is refused, with Doris's
// message on a row TTL table.
func TestWritePartialRefused(t *testing.T) {
	for _, tc := range []struct {
		ttl  bool
		want string
	}{
		{true, "Partial update is not supported on tables with row TTL"},
		{false, "partial-column updates"},
	} {
		def := modelDef(schema.UniqueMOW, false)
		if !tc.ttl {
			delete(def.Properties, PropEnableRowTTL)
			def.Schema.Columns = def.Schema.Columns[:2]
		}
		tbl := mustCreate(t, t.TempDir(), def, nil)
		rec := modelBatch(memory.DefaultAllocator, []modelRow{{id: 1, v: 1}}, false)
		err := tbl.WriteWith(context.Background(), rec, WriteOptions{Partial: true})
		rec.Release()
		if !errors.Is(err, rowttl.ErrNotSupported) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("row ttl %v: %v, want %q", tc.ttl, err, tc.want)
		}
		checkClose(t, tbl)
	}
}
