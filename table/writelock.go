package table

import (
	"context"
	"sync"
)

// writeLock is the table's writer lock: a mutex whose wait can give up when
// the waiter's context ends, so that a request cancelled by its client (or
// its deadline) does not queue behind another writer's publish. The zero
// value is unlocked.
type writeLock struct {
	once sync.Once
	ch   chan struct{} // holds a token while locked
}

func (l *writeLock) tokens() chan struct{} {
	l.once.Do(func() { l.ch = make(chan struct{}, 1) })
	return l.ch
}

// Lock waits for the lock whatever happens.
func (l *writeLock) Lock() { l.tokens() <- struct{}{} }

// LockContext waits for the lock until ctx ends, and then returns its error
// without the lock.
func (l *writeLock) LockContext(ctx context.Context) error {
	select {
	case l.tokens() <- struct{}{}:
		return nil
	default:
	}
	select {
	case l.tokens() <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Unlock releases the lock, which must be held.
func (l *writeLock) Unlock() {
	select {
	case <-l.tokens():
	default:
		panic("table: unlock of an unlocked writer lock")
	}
}
