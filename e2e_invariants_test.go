//go:build invariants

package rowttl_test

const buildTags = "invariants"
