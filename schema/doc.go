// Package schema owns the logical description of a table's columns: the SQL
// types of SPEC §1 with Doris's limits (VARCHAR 1..65533, CHAR 1..255,
// DECIMAL(1..38, 0..p)), their mapping to Arrow types, and Value, the
// physical scalar used by zone maps and filters. A DECIMAL Value holds the
// full 128-bit unscaled integer; arithmetic on it belongs to package
// decimal. It parses DATE and DATETIME text and holds the one conversion
// between a wall clock and an instant in a time zone (WallToInstant,
// InstantToWall). Its errors wrap rowttl.ErrInvalidSchema (a bad type or
// schema) or rowttl.ErrInvalidArgument (a value that does not parse or fit).
//
// It must never know about files, versions or TTL policy: it only describes
// shapes, and every other package builds on it.
package schema
