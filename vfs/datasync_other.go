//go:build !linux

package vfs

import "os"

func dataSyncOS(f *os.File) error { return f.Sync() }
