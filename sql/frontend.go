package sql

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/rowttl/rowttl/sql/parser"
)

// What network front ends and drivers need to know about a session beyond
// running statements: the values of its variables (SHOW VARIABLES,
// SELECT @@var) and its time zone (to read and write client values).

// TextReturnsRows reports whether a statement yields a result set (run it with
// Query) or not (run it with Exec). A statement that does not parse gives
// its parse error.
func TextReturnsRows(text string) (bool, error) {
	stmt, err := parser.Parse(text)
	if err != nil {
		return false, err
	}
	return yieldsResultSet(stmt), nil
}

// Location returns the session time zone.
func (s *Session) Location() *time.Location {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loc
}

// Variable returns the value of a variable as SHOW VARIABLES prints it:
// the ones the session acts on (time_zone, show_hidden_columns,
// enable_unique_key_partial_update, exec_mem_limit, session_now), those
// only kept from SET, the server's (SetServerVariables) and those clients
// read on connect. ok is false for a variable the session does not know.
func (s *Session) Variable(name string) (value string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.variableLocked(name)
}

// SetAllocator makes the session build its result batches with mem (tests
// give a checked allocator, to show that a front end releases every
// batch).
func (s *Session) SetAllocator(mem memory.Allocator) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mem = mem
}
