package table

import (
	"context"
	"sync"
)

// writeLock is the table's writer lock: a readers–writer lock whose waits
// can give up when the waiter's context ends, so that a request cancelled by
// its client (or its deadline) does not queue behind another writer's
// publish. The exclusive side serialises everything that publishes through
// the manifest (writes of rowsets, DELETE, ALTER, flush installs); the
// shared side is taken by small writes through the write-ahead log, which
// order themselves in its queue (group commit), and by a compaction's
// planning and install, which run one at a time (see lockForCompaction).
// A waiting exclusive holder keeps new shared holders out, so a stream of
// small writes never starves a flush. The zero value is unlocked.
type writeLock struct {
	mu      sync.Mutex
	writer  bool
	readers int
	// writersWaiting counts exclusive waiters; while there is one, shared
	// holders queue behind it.
	writersWaiting int
	// changed is closed (and replaced) at every release.
	changed chan struct{}
}

func (l *writeLock) changedLocked() chan struct{} {
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

func (l *writeLock) releasedLocked() {
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// Lock waits for the exclusive lock whatever happens.
func (l *writeLock) Lock() { _ = l.LockContext(context.Background()) }

// LockContext waits for the exclusive lock until ctx ends, and then returns
// its error without the lock.
func (l *writeLock) LockContext(ctx context.Context) error {
	l.mu.Lock()
	if !l.writer && l.readers == 0 {
		l.writer = true
		l.mu.Unlock()
		return nil
	}
	l.writersWaiting++
	for {
		ch := l.changedLocked()
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			l.mu.Lock()
			l.writersWaiting--
			// Shared waiters held back by this one may go now.
			l.releasedLocked()
			l.mu.Unlock()
			return context.Cause(ctx)
		}
		l.mu.Lock()
		if !l.writer && l.readers == 0 {
			l.writer = true
			l.writersWaiting--
			l.mu.Unlock()
			return nil
		}
	}
}

// Unlock releases the exclusive lock, which must be held.
func (l *writeLock) Unlock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.writer {
		panic("table: unlock of an unlocked writer lock")
	}
	l.writer = false
	l.releasedLocked()
}

// RLockContext waits for the shared lock until ctx ends.
func (l *writeLock) RLockContext(ctx context.Context) error {
	l.mu.Lock()
	for l.writer || l.writersWaiting > 0 {
		ch := l.changedLocked()
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		l.mu.Lock()
	}
	l.readers++
	l.mu.Unlock()
	return nil
}

// RUnlock releases the shared lock, which must be held.
func (l *writeLock) RUnlock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.readers <= 0 {
		panic("table: unlock of an unlocked shared writer lock")
	}
	l.readers--
	if l.readers == 0 {
		l.releasedLocked()
	}
}
