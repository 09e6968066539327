package segment

// memo is the one value a Reader keeps for a caller (see Memo).
type memo struct {
	key, val any
}

// Memo returns what build derived from the reader for key, calling build
// only when the reader holds no value for that key. A reader is immutable,
// so something derived from it and from another immutable thing (the
// query's mapping of a table schema's columns onto the segment's) is paid
// for once per segment, not once per scan that reads it. The reader keeps
// one value: a call with another key replaces it, and concurrent first
// calls may each build. key must be comparable (a pointer); build must
// depend on the reader and key alone, and its result must never be
// modified, but through atomics it holds for the caller's own later use
// (the query's memoized liveness of pages, which lives as long as the
// reader or until another key replaces the value).
func (r *Reader) Memo(key any, build func() any) any {
	if m := r.memo.Load(); m != nil && m.key == key {
		return m.val
	}
	v := build()
	r.memo.Store(&memo{key: key, val: v})
	return v
}
