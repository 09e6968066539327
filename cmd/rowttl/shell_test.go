package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chzyer/readline"
	"github.com/cockroachdb/datadriven"
	"github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/table"
	"github.com/rowttl/rowttl/vfs"
)

// fakeTerm is an in-process terminal: it hands the shell one scripted key
// press at a time (a line, Ctrl-C or Ctrl-D) and records the prompts and
// history entries. A line may come with an action run once the shell has
// read it (a Ctrl-C pressed while that statement runs).
type fakeTerm struct {
	mu      sync.Mutex
	out     *bytes.Buffer
	inputs  []input
	prompts []string
	history []string
}

type input struct {
	line  string
	err   error  // readline.ErrInterrupt or io.EOF
	after func() // run in its own goroutine once the line is read
}

func (f *fakeTerm) Readline() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.inputs) == 0 {
		return "", io.EOF
	}
	in := f.inputs[0]
	f.inputs = f.inputs[1:]
	key := in.line
	switch in.err {
	case readline.ErrInterrupt:
		key = "^C"
	case io.EOF:
		key = "^D"
	}
	f.out.WriteString(f.prompts[len(f.prompts)-1] + key + "\n")
	if in.after != nil {
		go in.after()
	}
	return in.line, in.err
}

func (f *fakeTerm) SetPrompt(p string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prompts = append(f.prompts, p)
}

func (f *fakeTerm) SaveHistory(e string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.history = append(f.history, e)
	return nil
}

// lockedBuffer is the terminal's screen: the shell and the fake write it
// from different goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// runShell runs the shell on session s with the inputs and returns the
// screen, the history and the shell.
func runShell(t *testing.T, s *sql.Session, intr chan os.Signal, inputs ...input) (string, []string, *shell) {
	t.Helper()
	var screen bytes.Buffer
	ft := &fakeTerm{out: &screen, inputs: inputs}
	sh := &shell{
		r: &runner{sess: s, out: &screen, pr: printer{format: formatTable, maxRows: 1000}, summary: true,
			now: func() time.Time { return time.Unix(0, 0) }},
		ed: ft, interrupts: intr,
	}
	done := make(chan error, 1)
	go func() { done <- sh.loop(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shell: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the shell did not finish")
	}
	return screen.String(), ft.history, sh
}

func lines(ls ...string) []input {
	var in []input
	for _, l := range ls {
		in = append(in, input{line: l})
	}
	return in
}

func newSession(t *testing.T, o *table.Options) *sql.Session {
	t.Helper()
	db, err := table.OpenDB(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := sql.NewSession(db)
	s.FreezeNow(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return s
}

// TestShellCtrlCCancelsStatement: Ctrl-C while a query runs cancels it
// (the scan reads from a file system that takes 20ms a read, so the query
// would run for minutes), the prompt comes back, and the session keeps its
// settings.
func TestShellCtrlCCancelsStatement(t *testing.T) {
	var slow atomic.Bool
	fs := vfs.NewErrorFS(vfs.Default, vfs.InjectorFunc(func(op vfs.Op, path string) error {
		if slow.Load() && op == vfs.OpRead && strings.Contains(path, "seg") {
			time.Sleep(20 * time.Millisecond)
		}
		return nil
	}))
	s := newSession(t, &table.Options{FS: fs, PageRows: 16, DisableAutoCompaction: true})
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE t (id BIGINT, v VARCHAR(20)) DUPLICATE KEY(id)",
		"INSERT INTO t VALUES " + strings.TrimSuffix(strings.Repeat("(1, 'x'),", 4000), ","),
	} {
		if _, err := s.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	slow.Store(true)
	intr := make(chan os.Signal, 1)
	var cancelledAt time.Time
	screen, _, sh := runShell(t, s, intr,
		input{line: "SET time_zone = '+08:00';"},
		input{line: "SELECT count(*) FROM t WHERE concat(v, id) = 'y';", after: func() {
			time.Sleep(300 * time.Millisecond)
			cancelledAt = time.Now()
			intr <- os.Interrupt
		}},
		input{line: "SELECT NOW();"},
	)
	if sh.cancelled.Load() != 1 {
		t.Fatalf("cancelled %d statements, want 1:\n%s", sh.cancelled.Load(), screen)
	}
	if d := time.Since(cancelledAt); d > 10*time.Second {
		t.Errorf("the shell took %v after Ctrl-C to finish", d)
	}
	for _, want := range []string{
		"ERROR: Query execution was interrupted\n",
		// The session survived with its time zone: NOW() is 08:00.
		"| 2026-01-01 08:00:00 |\n",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
}

// TestShellScreens runs the sessions of testdata/shell at the fake
// terminal: each "shell" block's input is what is typed, one line a key
// press (^C is Ctrl-C, ^D Ctrl-D; "format=F max-rows=N" set the output),
// and its output is the screen followed by the history entries.
func TestShellScreens(t *testing.T) {
	datadriven.RunTest(t, "testdata/shell", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "shell" {
			d.Fatalf(t, "unknown directive %s", d.Cmd)
		}
		s := newSession(t, nil)
		var in []input
		for _, l := range strings.Split(d.Input, "\n") {
			switch l {
			case "^C":
				in = append(in, input{err: readline.ErrInterrupt})
			case "^D":
				in = append(in, input{err: io.EOF})
			default:
				in = append(in, input{line: l})
			}
		}
		screen, history, _ := runShell(t, s, make(chan os.Signal), in...)
		return screen + "-- history --\n" + strings.Join(history, "\n") + "\n"
	})
}

// TestVersion: rowttl --version prints the module version and the build
// information the binary carries.
func TestVersion(t *testing.T) {
	out, _, err := runIn(rootCommand(), "", "--version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "rowttl "+version()+"\n") || !strings.Contains(out, "go: go1.") {
		t.Fatalf("--version printed %q", out)
	}
}

// TestElapsedTicker: an operation that outlasts the delay shows its
// elapsed time on the terminal and clears the line when it ends; a quick
// one prints nothing.
func TestElapsedTicker(t *testing.T) {
	old := elapsedDelay
	elapsedDelay = 20 * time.Millisecond
	defer func() { elapsedDelay = old }()
	var quick, slow lockedBuffer
	elapsedTicker(&quick, "compacting t")()
	stop := elapsedTicker(&slow, "compacting default.t")
	time.Sleep(200 * time.Millisecond)
	stop()
	if quick.b.Len() != 0 {
		t.Errorf("a quick operation printed %q", quick.b.String())
	}
	if got := slow.b.String(); !strings.HasPrefix(got, "\r\x1b[Kcompacting default.t: 0.0") || !strings.HasSuffix(got, "Ctrl-C cancels\r\x1b[K") {
		t.Errorf("slow operation printed %q", got)
	}
}
