package sql

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/table"
)

// ProcessList is the registry SHOW PROCESSLIST reads: every session of a
// data directory in this process registers in the list of its table.DB
// (ProcessListOf), and a server registers its connections' sessions the
// same way, with their user and client host. KillQuery cancels the
// statement a process is running.
type ProcessList struct {
	mu    sync.Mutex
	next  int64
	procs map[int64]*Process
}

// Process is one registered session.
type Process struct {
	list *ProcessList
	id   int64

	mu      sync.Mutex
	user    string
	host    string
	db      string
	command string // "Sleep" or "Query"
	since   time.Time
	info    string
	cancel  context.CancelFunc
}

// ProcessInfo is one row of SHOW PROCESSLIST.
type ProcessInfo struct {
	ID      int64
	User    string
	Host    string
	DB      string
	Command string
	// Time is how long the process has been in its command.
	Time  time.Duration
	State string
	Info  string
}

var processLists sync.Map // *table.DB -> *ProcessList

// ProcessListOf returns the process list of the sessions of db.
func ProcessListOf(db *table.DB) *ProcessList {
	if l, ok := processLists.Load(db); ok {
		return l.(*ProcessList)
	}
	l, _ := processLists.LoadOrStore(db, &ProcessList{procs: map[int64]*Process{}})
	return l.(*ProcessList)
}

// Register adds a process, in command Sleep since now; the caller closes
// it when the session ends.
func (l *ProcessList) Register(user, host, db string, now time.Time) *Process {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	p := &Process{list: l, id: l.next, user: user, host: host, db: db, command: "Sleep", since: now}
	l.procs[p.id] = p
	return p
}

// Snapshot returns the processes ordered by id, their times measured at
// now.
func (l *ProcessList) Snapshot(now time.Time) []ProcessInfo {
	l.mu.Lock()
	ps := make([]*Process, 0, len(l.procs))
	for _, p := range l.procs {
		ps = append(ps, p)
	}
	ids := make(map[*Process]int64, len(ps))
	for _, p := range ps {
		ids[p] = p.id
	}
	l.mu.Unlock()
	sort.Slice(ps, func(i, j int) bool { return ids[ps[i]] < ids[ps[j]] })
	out := make([]ProcessInfo, len(ps))
	for i, p := range ps {
		p.mu.Lock()
		state := ""
		if p.command == "Query" {
			state = "executing"
		}
		out[i] = ProcessInfo{ID: ids[p], User: p.user, Host: p.host, DB: p.db, Command: p.command,
			Time: max(0, now.Sub(p.since)), State: state, Info: p.info}
		p.mu.Unlock()
	}
	return out
}

// KillQuery cancels the statement process id is running (its context);
// it reports whether there is such a process.
func (l *ProcessList) KillQuery(id int64) bool {
	l.mu.Lock()
	p := l.procs[id]
	l.mu.Unlock()
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancel != nil {
		p.cancel()
	}
	return true
}

// ID is the process id SHOW PROCESSLIST and KILL QUERY use.
func (p *Process) ID() int64 {
	p.list.mu.Lock()
	defer p.list.mu.Unlock()
	return p.id
}

// Close removes the process from its list.
func (p *Process) Close() {
	p.list.mu.Lock()
	delete(p.list.procs, p.id)
	p.list.mu.Unlock()
}

// SetID gives the process id instead of the one it registered with: a
// server's connections keep the id the handshake announced, which KILL
// QUERY and the mysql client's Ctrl-C name. It fails, changing nothing,
// when another process has id.
func (p *Process) SetID(id int64) error {
	l := p.list
	l.mu.Lock()
	defer l.mu.Unlock()
	if id == p.id {
		return nil
	}
	if id <= 0 || l.procs[id] != nil {
		return rowttl.Errorf(rowttl.ErrExists, "process id %d is in use", id)
	}
	if l.procs[p.id] == p {
		delete(l.procs, p.id)
		l.procs[id] = p
	}
	p.id = id
	l.next = max(l.next, id)
	return nil
}

// SetDB records the process's current database.
func (p *Process) SetDB(db string) {
	p.mu.Lock()
	p.db = db
	p.mu.Unlock()
}

// Begin marks the process as running statement info since now and returns
// the context the statement runs in (KillQuery cancels it) and the
// function that marks it done.
func (p *Process) Begin(ctx context.Context, info string, now time.Time) (context.Context, func(now time.Time)) {
	ctx, cancel := context.WithCancel(ctx)
	p.mu.Lock()
	p.command, p.info, p.since, p.cancel = "Query", info, now, cancel
	p.mu.Unlock()
	var once sync.Once
	return ctx, func(now time.Time) {
		once.Do(func() {
			p.mu.Lock()
			p.command, p.info, p.since, p.cancel = "Sleep", "", now, nil
			p.mu.Unlock()
			cancel()
		})
	}
}

// trackedReader marks its process's statement done when the last
// reference is released: the rows of a streaming query are read after
// Query returns.
type trackedReader struct {
	array.RecordReader
	mu   sync.Mutex
	refs int
	done func()
}

func (r *trackedReader) Retain() {
	r.mu.Lock()
	r.refs++
	r.mu.Unlock()
	r.RecordReader.Retain()
}

func (r *trackedReader) Release() {
	r.mu.Lock()
	r.refs--
	last := r.refs == 0
	r.mu.Unlock()
	r.RecordReader.Release()
	if last {
		r.done()
	}
}
