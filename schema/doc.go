// Package schema owns the logical description of a table's columns: the SQL
// types of SPEC §1, their mapping to Arrow types, and Value, the physical
// scalar used by zone maps and filters.
//
// It must never know about files, versions or TTL policy: it only describes
// shapes, and every other package builds on it.
package schema
