package table

import (
	"context"
	"errors"
	"testing"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/vfs"
)

// TestReadOnlyOpenChangesNothing: a read-only open (what `rowttl check`
// uses) shows the table, leaves a torn tail and orphans where they are,
// and refuses every change.
func TestReadOnlyOpenChangesNothing(t *testing.T) {
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	fsys := vfs.NewMemFS()
	tbl := mustCreate(t, "/t", modelDef(schema.UniqueMOW, false), reliabilityOpts(fsys, mem))
	ref := newRef(schema.UniqueMOW, false)
	standardSetup(t, tbl, mem, ref)
	checkClose(t, tbl)
	appendBytes(t, fsys, "/t/"+manifestName(1), []byte{5, 0, 0, 0})
	writeBytes(t, fsys, "/t/000777.seg", []byte("orphan"))
	before := fsys.String()

	o := reliabilityOpts(vfs.NewErrorFS(fsys, vfs.FailNth(1, vfs.WriteOps).Sticky()), mem)
	o.ReadOnly = true
	o.ManifestRotateBytes = 1
	tbl, err := Open("/t", o)
	if err != nil {
		t.Fatal(err)
	}
	expectState(t, "read-only", tbl, []*refModel{ref})
	if err := tbl.Check(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, rowttl.ErrNotSupported) {
			t.Fatalf("%s on a read-only table: %v", what, err)
		}
	}
	refused("write", writeModelRows(tbl, mem, ref.clone(), modelRowsFor(0, 3, 0, 0, false)))
	refused("compaction", tbl.CompactAt(ctx, Full, base))
	refused("alter", tbl.SetProperties(ctx, map[string]string{PropDisableAutoComp: "true"}))
	_, err = tbl.DeleteWhere(ctx, Matcher{}, WriteOptions{Now: base})
	refused("delete", err)
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	if after := fsys.String(); after != before {
		t.Fatalf("a read-only open changed files:\nbefore\n%s\nafter\n%s", before, after)
	}
	o.FS = fsys
	if _, err := Create("/u", modelDef(schema.Duplicate, false), o); !errors.Is(err, rowttl.ErrNotSupported) {
		t.Fatalf("read-only Create: %v", err)
	}
}
