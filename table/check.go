package table

import (
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/rowttl/rowttl"
)

// Check verifies the current version against its files: every segment of
// every live rowset decodes with valid checksums, row counts agree with the
// manifest, and rowset versions do not overlap. It is run after every test
// and by `rowttl check`.
func (t *Table) Check() error {
	v, err := t.pin()
	if err != nil {
		return err
	}
	defer v.unref()
	mem := memory.NewGoAllocator()
	var prevHi int64 = -1
	for _, h := range v.rowsets {
		m := h.Meta
		if m.Lo <= prevHi || m.Lo > m.Hi {
			return rowttl.Errorf(rowttl.ErrCorruption, "table %s: rowset %d covers versions %d-%d, overlapping or out of order", t.Name(), m.ID, m.Lo, m.Hi)
		}
		prevHi = m.Hi
		var rows int64
		for i, r := range h.Segments {
			if r.NumRows() != m.Segments[i].Rows {
				return rowttl.Errorf(rowttl.ErrCorruption, "table %s: rowset %d segment %d has %d rows, manifest says %d", t.Name(), m.ID, m.Segments[i].FileNum, r.NumRows(), m.Segments[i].Rows)
			}
			rows += r.NumRows()
			// Every checksum, those of chunks a scan of the mapped file
			// verified already too.
			if err := r.VerifyChecksums(); err != nil {
				return err
			}
			for p := 0; p < r.NumPages(); p++ {
				for c := 0; c < r.Schema().NumFields(); c++ {
					a, err := r.ReadPage(mem, c, p)
					if err != nil {
						return err
					}
					a.Release()
				}
			}
		}
		if rows != m.Rows {
			return rowttl.Errorf(rowttl.ErrCorruption, "table %s: rowset %d has %d rows, manifest says %d", t.Name(), m.ID, rows, m.Rows)
		}
	}
	if prevHi > v.lastVersion {
		return rowttl.Errorf(rowttl.ErrCorruption, "table %s: rowsets reach version %d beyond the last published %d", t.Name(), prevHi, v.lastVersion)
	}
	return nil
}
