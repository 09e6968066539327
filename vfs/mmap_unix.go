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

// release drops the process's mappings of the pages that hold the n bytes
// of data at off (with the pages they share with their neighbours, which a
// later read maps again from the page cache like the rest).
func release(data []byte, off, n int64) {
	pg := int64(os.Getpagesize())
	lo := off &^ (pg - 1)
	hi := min((off+n+pg-1)&^(pg-1), int64(len(data)))
	_ = unix.Madvise(data[lo:hi], unix.MADV_DONTNEED)
}
