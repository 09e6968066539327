package rowttl

import (
	"errors"
	"fmt"
)

// Sentinels. Every error the engine returns for a rejected request wraps one
// of these, through Errorf so that the sentinel's own text (meant for
// errors.Is, not for people) never shows in the message; the message names
// the table, column, file or value concerned. A rejected request leaves the
// table exactly as it was.
var (
	// ErrCorruption marks data that failed a checksum or a structural check.
	// The message names the file. Corrupt data is never returned as rows.
	ErrCorruption = errors.New("rowttl: corruption")

	// ErrInvalidProperty marks a bad table property, the row TTL ones of
	// SPEC §2 included.
	ErrInvalidProperty = errors.New("rowttl: invalid table property")

	// ErrInvalidSchema marks a bad table definition: unknown types, reserved
	// column names, bad keys.
	ErrInvalidSchema = errors.New("rowttl: invalid schema")

	// ErrInvalidArgument marks a request whose data does not fit the table:
	// a wrong column, a value of the wrong type, a NULL in a NOT NULL column,
	// an expiration that overflows.
	ErrInvalidArgument = errors.New("rowttl: invalid argument")

	// ErrNotSupported marks a request the engine understands but refuses.
	ErrNotSupported = errors.New("rowttl: not supported")

	// ErrExists marks the creation of something that already exists.
	ErrExists = errors.New("rowttl: already exists")

	// ErrNotFound marks a reference to a table, database or column that does
	// not exist.
	ErrNotFound = errors.New("rowttl: not found")

	// ErrClosed marks use of a table after Close.
	ErrClosed = errors.New("rowttl: closed")

	// ErrMemLimit marks a query that would hold more memory than its limit
	// (exec_mem_limit); the message names the operator.
	ErrMemLimit = errors.New("rowttl: memory limit exceeded")

	// ErrLabelExists marks a load whose label this table has already applied.
	ErrLabelExists = errors.New("rowttl: Label Already Exists")
)

// Errorf formats an error that wraps sentinel without adding the
// sentinel's text to the message, so users read exactly what went wrong:
// errors.Is(err, sentinel) holds, and so does errors.Is for any error the
// format wraps with %w.
func Errorf(sentinel error, format string, args ...any) error {
	return &markedError{err: fmt.Errorf(format, args...), sentinel: sentinel}
}

type markedError struct {
	err      error
	sentinel error
}

func (e *markedError) Error() string   { return e.err.Error() }
func (e *markedError) Unwrap() []error { return []error{e.err, e.sentinel} }
