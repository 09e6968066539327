//go:build !(linux || darwin || freebsd)

package vfs

// Elsewhere files are read, not mapped.
func mapFile(File, int) ([]byte, bool) { return nil, false }

func unmap([]byte) error { return nil }

func release([]byte) {}
