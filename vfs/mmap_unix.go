//go:build linux || darwin || freebsd

package vfs

import (
	"os"

	"golang.org/x/sys/unix"
)

func mapFile(f File, size int) ([]byte, bool) {
	of, isOS := f.(*os.File)
	if !isOS {
		return nil, false
	}
	sc, err := of.SyscallConn()
	if err != nil {
		return nil, false
	}
	var data []byte
	var merr error
	if err := sc.Control(func(fd uintptr) {
		data, merr = unix.Mmap(int(fd), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	}); err != nil || merr != nil {
		return nil, false
	}
	return data, true
}

func unmap(data []byte) error {
	if data == nil {
		return nil
	}
	return unix.Munmap(data)
}

// release drops the process's mappings of the pages of data; the next
// read of them maps them again from the page cache.
func release(data []byte) { _ = unix.Madvise(data, unix.MADV_DONTNEED) }
