package sql

import (
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// What network front ends and drivers need to know about a session beyond
// running statements: the values of its variables (SHOW VARIABLES,
// SELECT @@var) and its time zone (to read and write client values).

// TextReturnsRows reports whether a statement yields a result set (run it with
// Query) or not (run it with Exec). A statement that does not parse gives
// its parse error.
func TextReturnsRows(text string) (bool, error) {
	stmt, err := Parse(text)
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

// Variable returns the value of a session variable as SHOW VARIABLES
// prints it: the ones the session acts on (time_zone, show_hidden_columns,
// enable_unique_key_partial_update, exec_mem_limit, session_now) and those
// only kept from SET. ok is false for a variable never set that the
// session does not know.
func (s *Session) Variable(name string) (value string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch name {
	case "time_zone":
		return s.zoneName, true
	case "show_hidden_columns":
		return strconv.FormatBool(s.showHidden), true
	case "enable_unique_key_partial_update":
		return strconv.FormatBool(s.partialUpdate), true
	case "exec_mem_limit":
		return strconv.FormatInt(s.memLimit, 10), true
	case "session_now":
		if s.frozen == nil {
			return "", true
		}
		return s.frozen.In(s.loc).Format("2006-01-02 15:04:05.000000"), true
	}
	v, ok := s.vars[name]
	return v, ok
}

// SetAllocator makes the session build its result batches with mem (tests
// give a checked allocator, to show that a front end releases every
// batch).
func (s *Session) SetAllocator(mem memory.Allocator) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mem = mem
}
