//go:build !linux

package vfs

// Without a ranged writeback the file is written as a plain one: its
// caller's Sync does all of the work.

func rangeStart(uintptr, int64, int64) (bool, error) { return false, nil }
func rangeWait(uintptr, int64, int64) (bool, error)  { return false, nil }
