//go:build invariants

package rowset

// Invariants is true in a binary built with -tags invariants.
const Invariants = true
