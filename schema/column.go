package schema

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/rowttl/rowttl"
)

// TTLColumn is the name of the hidden expiration column of a row TTL table.
const TTLColumn = "__TTL__"

// TTLAlias is the name Doris scripts use for TTLColumn; it is accepted
// wherever a column name is.
const TTLAlias = "__DORIS_TTL_COL__"

// IsTTLName reports whether name designates the hidden TTL column.
func IsTTLName(name string) bool {
	return strings.EqualFold(name, TTLColumn) || strings.EqualFold(name, TTLAlias)
}

// IsReservedName reports user column names that CREATE must reject.
func IsReservedName(name string) bool {
	u := strings.ToUpper(name)
	return u == TTLColumn || strings.HasPrefix(u, "__DORIS_")
}

// DefaultKind says what a column's DEFAULT clause is. Its numeric values are
// stored in manifests: append only, never renumber (TestPersistedEnums pins
// them).
type DefaultKind uint8

const (
	// NoDefault: the column has no DEFAULT clause; an omitted value is NULL
	// for nullable columns and an error for NOT NULL ones.
	NoDefault DefaultKind = iota
	// DefaultNull is DEFAULT NULL.
	DefaultNull
	// DefaultLiteral is DEFAULT 'literal'.
	DefaultLiteral
	// DefaultCurrentTimestamp is DEFAULT CURRENT_TIMESTAMP: the statement's
	// now.
	DefaultCurrentTimestamp
)

// Column is one user column.
type Column struct {
	// ID is unique within the table and never reused, so that a column
	// dropped and added again under the same name never reads old data.
	ID       uint32 `json:"id"`
	Name     string `json:"name"`
	Type     Type   `json:"type"`
	Nullable bool   `json:"nullable"`
	// DefaultKind and Default describe the DEFAULT clause; Default is the
	// literal's text, converted to the column's type where it is used.
	DefaultKind DefaultKind `json:"default_kind,omitempty"`
	Default     string      `json:"default,omitempty"`
	Comment     string      `json:"comment,omitempty"`
	// Agg is the aggregation of an AGGREGATE KEY value column (SUM, MIN,
	// MAX, REPLACE), empty otherwise.
	Agg string `json:"agg,omitempty"`
	// Generated marks a generated column; such columns cannot be a row TTL
	// source.
	Generated bool `json:"generated,omitempty"`
}

// Schema is an ordered list of user columns whose first KeyCount columns
// form the key.
type Schema struct {
	Columns  []Column `json:"columns"`
	KeyCount int      `json:"key_count"`
}

// Index returns the position of the named column (case-insensitive), or -1.
func (s *Schema) Index(name string) int {
	for i := range s.Columns {
		if strings.EqualFold(s.Columns[i].Name, name) {
			return i
		}
	}
	return -1
}

// Column returns the named column.
func (s *Schema) Column(name string) (*Column, bool) {
	i := s.Index(name)
	if i < 0 {
		return nil, false
	}
	return &s.Columns[i], true
}

// Clone returns a deep copy.
func (s *Schema) Clone() *Schema {
	c := &Schema{KeyCount: s.KeyCount, Columns: make([]Column, len(s.Columns))}
	copy(c.Columns, s.Columns)
	return c
}

// MaxID returns the largest column ID in use.
func (s *Schema) MaxID() uint32 {
	var m uint32
	for _, c := range s.Columns {
		if c.ID > m {
			m = c.ID
		}
	}
	return m
}

// Validate checks names, types and the key.
func (s *Schema) Validate() error {
	if len(s.Columns) == 0 {
		return rowttl.Errorf(rowttl.ErrInvalidSchema, "a table needs at least one column")
	}
	if s.KeyCount < 1 || s.KeyCount > len(s.Columns) {
		return rowttl.Errorf(rowttl.ErrInvalidSchema, "the key must name between 1 and %d leading columns, got %d", len(s.Columns), s.KeyCount)
	}
	seen := map[string]bool{}
	for _, c := range s.Columns {
		if c.Name == "" {
			return rowttl.Errorf(rowttl.ErrInvalidSchema, "a column needs a name")
		}
		if IsReservedName(c.Name) {
			return rowttl.Errorf(rowttl.ErrInvalidSchema, "column name %s is reserved for hidden columns", c.Name)
		}
		l := strings.ToLower(c.Name)
		if seen[l] {
			return rowttl.Errorf(rowttl.ErrInvalidSchema, "duplicate column name %s", c.Name)
		}
		seen[l] = true
		if err := c.Type.Validate(); err != nil {
			return rowttl.Errorf(rowttl.ErrInvalidSchema, "column %s: %w", c.Name, err)
		}
	}
	return nil
}

// FieldIDKey is the Arrow field metadata key that carries a column's ID in
// stored segments.
const FieldIDKey = "rowttl.id"

// Field returns the Arrow field of a column, its ID in the metadata.
func (c *Column) Field() arrow.Field {
	return arrow.Field{
		Name:     c.Name,
		Type:     c.Type.Arrow(),
		Nullable: c.Nullable,
		Metadata: arrow.NewMetadata([]string{FieldIDKey}, []string{fmt.Sprint(c.ID)}),
	}
}

// DeleteSignColumn is the hidden column of merge-on-read UNIQUE tables that
// marks a row as the deletion of its key.
const DeleteSignColumn = "__DORIS_DELETE_SIGN__"
