package ttlcol

// ttlError is an error whose text is exactly the wording of SPEC §5 (or a
// message naming the value concerned) and which wraps one of the rowttl
// sentinels, so that callers can both match the text users search for and
// test the class with errors.Is. Callers add context (table, column, row) by
// wrapping it again with %w.
type ttlError struct {
	msg      string
	sentinel error
}

func (e *ttlError) Error() string { return e.msg }

func (e *ttlError) Unwrap() error { return e.sentinel }
