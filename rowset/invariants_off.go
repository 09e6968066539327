//go:build !invariants

package rowset

// Invariants is true in a binary built with -tags invariants: see
// invariants.go.
const Invariants = false
