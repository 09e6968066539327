package table

import (
	"fmt"

	"github.com/rowttl/rowttl"
)

// CompactionKind names a compaction of SPEC §3.
type CompactionKind string

// The compaction kinds ADMIN COMPACT and Compact accept.
const (
	Cumulative CompactionKind = "cumulative"
	Base       CompactionKind = "base"
	Full       CompactionKind = "full"
)

// ParseCompactionKind accepts "cumulative", "base" or "full".
func ParseCompactionKind(s string) (CompactionKind, error) {
	switch k := CompactionKind(s); k {
	case Cumulative, Base, Full:
		return k, nil
	}
	return "", fmt.Errorf("unknown compaction type %q (want cumulative, base or full): %w", s, rowttl.ErrInvalidArgument)
}
