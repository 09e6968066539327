package vfs

import (
	"errors"

	"golang.org/x/sys/unix"
)

// rangeStart starts the writeback of [off, off+n) of the file fd without
// waiting for it. ok is false when the file system cannot (the caller then
// stops asking); err is a write error the kernel reported.
func rangeStart(fd uintptr, off, n int64) (ok bool, err error) {
	return rangeSync(fd, off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// rangeWait writes [off, off+n) of the file fd out and waits for it.
func rangeWait(fd uintptr, off, n int64) (ok bool, err error) {
	return rangeSync(fd, off, n, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
}

func rangeSync(fd uintptr, off, n int64, flags int) (bool, error) {
	for {
		err := unix.SyncFileRange(int(fd), off, n, flags)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EINVAL), errors.Is(err, unix.ESPIPE):
			return false, nil
		}
		return false, err
	}
}
