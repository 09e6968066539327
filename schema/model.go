package schema

import "fmt"

// Model is a table's key model (SPEC §1).
type Model uint8

// The key models. Stored in manifests: append only, never renumber
// (TestPersistedEnums pins them).
const (
	Duplicate Model = iota
	UniqueMOW
	UniqueMOR
	Aggregate
)

func (m Model) String() string {
	switch m {
	case Duplicate:
		return "DUPLICATE"
	case UniqueMOW:
		return "UNIQUE (merge-on-write)"
	case UniqueMOR:
		return "UNIQUE (merge-on-read)"
	case Aggregate:
		return "AGGREGATE"
	}
	return fmt.Sprintf("Model(%d)", m)
}

// IsUnique reports both UNIQUE KEY flavours.
func (m Model) IsUnique() bool { return m == UniqueMOW || m == UniqueMOR }

// KeyWord is the model's word in CREATE TABLE.
func (m Model) KeyWord() string {
	switch m {
	case UniqueMOW, UniqueMOR:
		return "UNIQUE"
	case Aggregate:
		return "AGGREGATE"
	}
	return "DUPLICATE"
}
