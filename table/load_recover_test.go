package table

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/vfs"
)

// TestLoadRecoversUnderTheWriterLock: a load that starts on a table whose
// manifest append failed recovers it only while holding the writer lock,
// never behind the back of a writer that holds it (two recoveries at once
// would both rewrite the manifest).
func TestLoadRecoversUnderTheWriterLock(t *testing.T) {
	mem := newCountingAllocator()
	defer mem.AssertSize(t, 0)
	fsys := vfs.NewMemFS()
	var full atomic.Bool
	efs := vfs.NewErrorFS(fsys, vfs.InjectorFunc(func(o vfs.Op, path string) error {
		if full.Load() && o == vfs.OpSync && strings.Contains(path, "MANIFEST") {
			return &vfs.InjectedError{Op: o, Path: path, Err: syscall.ENOSPC}
		}
		return nil
	}))
	o := reliabilityOpts(efs, mem)
	o.Logf = func(string, ...any) {}
	tbl := mustCreate(t, "/t", modelDef(schema.Duplicate, false), o)
	defer tbl.Close()
	ref := newRef(schema.Duplicate, false)
	full.Store(true)
	rows := modelRowsFor(0, 10, 0, 0, false)
	if err := writeModelRows(tbl, mem, ref.clone(), rows); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write with a failing manifest sync: %v", err)
	}
	full.Store(false)
	ref.write(rows) // the record reached the file: recovery adopts it

	tbl.writeMu.Lock() // another writer is publishing
	started := make(chan error, 1)
	go func() {
		lw, err := tbl.NewLoadWriter(context.Background(), WriteOptions{})
		if err == nil {
			lw.Abort()
		}
		started <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if tbl.vs.failure() == nil {
		tbl.writeMu.Unlock()
		t.Fatal("a load recovered the table while another writer held the writer lock")
	}
	tbl.writeMu.Unlock()
	if err := <-started; err != nil {
		t.Fatalf("load on a table that can recover: %v", err)
	}
	if err := tbl.vs.failure(); err != nil {
		t.Fatalf("still failed after the load started: %v", err)
	}
	expectState(t, "recovered by the load", tbl, []*refModel{ref})
}
