package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/chzyer/readline"
	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// statementsFailed makes the command exit with status 1 after a script in
// which some statement failed (each failure was already printed as an ERROR
// line).
type statementsFailed struct{ n int }

func (e *statementsFailed) Error() string { return fmt.Sprintf("%d statement(s) failed", e.n) }

type sqlOptions struct {
	dir     string
	now     string
	execute string
	file    string
	bail    bool
	format  string
	maxRows int64
	// connect is the address of a server to run the statements on, over
	// the MySQL protocol, instead of opening dir.
	connect     string
	user        string
	askPassword bool
	compact     compactFlags
	wait        time.Duration
}

// scriptRunner runs a script as sql.Session.RunScript does: in process,
// or on a server (remote).
type scriptRunner interface {
	RunScript(ctx context.Context, src string, o sql.ScriptOptions, w io.Writer) ([]*sql.ScriptError, error)
}

func sqlCommand() *cobra.Command {
	var o sqlOptions
	cmd := &cobra.Command{
		Use:   "sql",
		Short: "Run SQL statements (the Doris-compatible dialect) on the data directory",
		Long: `sql runs statements of rowttl's Doris-compatible SQL dialect.

Script mode (-e, -f, or standard input that is not a terminal): each result
set prints as a header line and one line per row, fields separated by TAB
(--format tsv, the default); other statements print nothing; a failed
statement prints one line "ERROR: <message>" and the script goes on unless
--bail is given. The exit status is 1 when any statement failed. With both
-f and -e, the file runs first, then the -e statements. A syntax error
names its line and column in the script (the file, or the -e text).

Interactive mode (standard input is a terminal, neither -e nor -f): results
as an aligned table (--format table, the default) followed by
"N rows in set (0.01 sec)"; a statement runs as soon as the ';' ending it is
typed, and \G instead of ';' shows its rows vertically. Ctrl-C cancels the
running statement and keeps the session. Type help for the statements and
shell commands.

Formats: table and vertical show at most --max-rows rows (0: all) and say
how many there were; tsv (SPEC's script format, strings escaped as mysql -B
does), csv (RFC 4180, NULL as an empty field) and json (an array of objects
per result set) write every row.

With --connect HOST:PORT the statements run on a server (rowttl serve's
MySQL port, 9030 by default) over the MySQL protocol, as user -u, with the
password of $ROWTTL_PASSWORD or, with -p, asked on the terminal; the output
is the same, except that BOOLEAN values print as 1 and 0 (the protocol's
TINYINT(1)). Only the tsv format runs remotely, and the remote shell is a plain line
reader. Use it while a server owns the data directory.

--now freezes the session clock (SET session_now) and is the now at which
the compaction before exit judges expiry. When the statements may have
written (locally), the command runs before it exits the compaction the
tables it used have due, as rowttl load does: no compaction starts after
--compact-timeout (30s; the one under way finishes), Ctrl-C or a failure
leaves the rest for the next command without changing the exit status,
a terminal shows what it does, and --no-compact skips it (and the
background compaction that may start while the command runs).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.format != "" {
				if err := checkFormat(o.format); err != nil {
					return err
				}
			}
			if err := o.compact.check(); err != nil {
				return err
			}
			if err := checkWait(o.wait); err != nil {
				return err
			}
			if o.maxRows < 0 {
				return rowttl.Errorf(rowttl.ErrInvalidArgument, "--max-rows %d: want 0 (no cap) or more", o.maxRows)
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runSQL(ctx, o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", defaultDir, "data directory")
	f.StringVar(&o.now, "now", "", "freeze the session clock at this time (read in UTC unless it names a zone), like SET session_now")
	f.StringVarP(&o.execute, "execute", "e", "", "statements to run")
	f.StringVarP(&o.file, "file", "f", "", "script file to run")
	f.BoolVar(&o.bail, "bail", false, "stop at the first failed statement")
	f.StringVar(&o.format, "format", "", "result format: table|tsv|csv|json|vertical (default: table on a terminal, tsv in script mode)")
	f.Int64Var(&o.maxRows, "max-rows", 1000, "rows shown of a result set in the table and vertical formats (0: all)")
	f.StringVar(&o.connect, "connect", "", "run the statements on the server at HOST:PORT (MySQL protocol) instead of --dir")
	f.StringVarP(&o.user, "user", "u", "root", "user on the server (with --connect)")
	f.BoolVarP(&o.askPassword, "password", "p", false, "ask for the password on the terminal (with --connect; default $ROWTTL_PASSWORD)")
	addCompactFlags(cmd, &o.compact)
	addWaitFlag(cmd, &o.wait)
	return cmd
}

func runSQL(ctx context.Context, o sqlOptions, stdin io.Reader, stdout, stderr io.Writer) error {
	var scripts []string
	if o.file != "" {
		b, err := os.ReadFile(o.file)
		if err != nil {
			return err
		}
		scripts = append(scripts, string(b))
	}
	if o.execute != "" {
		scripts = append(scripts, o.execute)
	}
	tty := false
	if len(scripts) == 0 {
		if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			tty = true
		} else {
			b, err := io.ReadAll(stdin)
			if err != nil {
				return err
			}
			scripts = append(scripts, string(b))
		}
	}
	if o.connect != "" {
		return runRemote(ctx, o, tty, scripts, stdout, stderr)
	}
	// A script that only reads opens the directory read-only: it creates
	// nothing (not even a missing directory) and runs alongside the
	// process that owns it.
	readOnly := !tty && !scriptsWrite(scripts)
	var clock nowClock
	var frozen time.Time
	if o.now != "" {
		t, err := clock.parseNow(o.now)
		if err != nil {
			return err
		}
		frozen = t
	}
	opts := o.compact.options(&clock)
	opts.ReadOnly = readOnly
	db, err := openDBWaiting(ctx, o.dir, opts, o.wait, stderr)
	if errors.Is(err, table.ErrLocked) {
		return fmt.Errorf("%w; while it runs, run the statements on it: rowttl sql --connect HOST:9030 -u USER -p", err)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	s := sql.NewSession(db)
	if o.now != "" {
		s.FreezeNow(frozen)
	}
	if tty {
		if o.format == "" {
			o.format = formatTable
		}
		err = interactive(ctx, s, o, stdout)
	} else {
		err = runScripts(ctx, s, s, o, scripts, stdout)
	}
	if !readOnly {
		payDebt(ctx, db.OpenTables(), o.compact, stderr)
	}
	return err
}

// runRemote runs the scripts (or the shell) on the server at o.connect.
func runRemote(ctx context.Context, o sqlOptions, tty bool, scripts []string, stdout, stderr io.Writer) error {
	password := os.Getenv("ROWTTL_PASSWORD")
	if o.askPassword {
		p, err := readPassword(stderr)
		if err != nil {
			return err
		}
		password = p
	}
	r, err := connect(ctx, o.connect, o.user, password)
	if err != nil {
		return err
	}
	defer r.Close()
	if o.now != "" {
		if errs, werr := r.RunScript(ctx, "SET session_now = '"+strings.ReplaceAll(o.now, "'", "''")+"'", sql.ScriptOptions{Bail: true}, stderr); werr != nil || len(errs) > 0 {
			return fmt.Errorf("--now: %s", o.now)
		}
	}
	if o.format != "" && o.format != formatTSV {
		return rowttl.Errorf(rowttl.ErrNotSupported, "--format %s: only tsv runs with --connect", o.format)
	}
	if tty {
		return remoteShell(ctx, r, stdout)
	}
	return runScripts(ctx, nil, r, o, scripts, stdout)
}

// remoteShell reads statements on a terminal and runs each on the server,
// printing as script mode does.
func remoteShell(ctx context.Context, s scriptRunner, out io.Writer) error {
	cfg := &readline.Config{Prompt: prompt, Stdout: out, InterruptPrompt: "^C", EOFPrompt: "exit"}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		return err
	}
	defer rl.Close()
	var buf strings.Builder
	for {
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			buf.Reset()
			continue
		}
		if err != nil {
			if buf.Len() > 0 {
				fmt.Fprintln(out, "(unfinished statement discarded)")
			}
			return nil
		}
		if t := strings.TrimSpace(line); buf.Len() == 0 && (t == "exit" || t == "quit" || t == `\q`) {
			return nil
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		done, rest := parser.CompleteStatements(buf.String())
		if len(done) == 0 {
			continue
		}
		buf.Reset()
		buf.WriteString(rest)
		for _, p := range done {
			if _, err := s.RunScript(ctx, p.Text, sql.ScriptOptions{}, out); err != nil {
				return err
			}
		}
	}
}

// runScripts runs the scripts on s; local, the session behind it for the
// formats other than tsv (nil with --connect, where only tsv runs).
func runScripts(ctx context.Context, local *sql.Session, s scriptRunner, o sqlOptions, scripts []string, stdout io.Writer) error {
	failed := 0
	r := &runner{sess: local, out: stdout, pr: printer{format: o.format, maxRows: o.maxRows}, now: time.Now}
	for _, src := range scripts {
		if o.format == "" || o.format == formatTSV {
			// RunScript is the reference of SPEC's script format.
			errs, werr := s.RunScript(ctx, src, sql.ScriptOptions{Bail: o.bail}, stdout)
			if werr != nil {
				return werr
			}
			failed += len(errs)
		} else {
			for _, p := range parser.SplitStatements(src) {
				err := r.statement(ctx, p, false)
				var oe *outputError
				if errors.As(err, &oe) {
					return oe.err
				}
				if err != nil {
					failed++
					if o.bail {
						break
					}
				}
			}
		}
		if failed > 0 && o.bail {
			break
		}
	}
	if failed > 0 {
		return &statementsFailed{n: failed}
	}
	return nil
}

// interactive runs the shell on a terminal. SIGINT (Ctrl-C while a
// statement runs: the terminal is not in raw mode then) cancels the
// statement instead of ending the process.
func interactive(ctx context.Context, s *sql.Session, o sqlOptions, out io.Writer) error {
	cfg := &readline.Config{Prompt: prompt, Stdout: out, InterruptPrompt: "^C", EOFPrompt: "",
		DisableAutoSaveHistory: true, HistorySearchFold: true}
	if home, err := os.UserHomeDir(); err == nil {
		cfg.HistoryFile = filepath.Join(home, ".rowttl_history")
	}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		return err
	}
	defer rl.Close()
	intr := make(chan os.Signal, 1)
	signal.Notify(intr, os.Interrupt)
	defer signal.Stop(intr)
	var progress io.Writer
	if term.IsTerminal(int(os.Stderr.Fd())) {
		progress = os.Stderr
	}
	sh := &shell{
		r: &runner{sess: s, out: out, pr: printer{format: o.format, maxRows: o.maxRows}, summary: true,
			progress: progress, now: time.Now},
		ed:         rl,
		interrupts: intr,
	}
	return sh.loop(ctx)
}

// openDB opens a data directory and says on stderr when it made a new one
// or adopted an old one.
func openDB(dir string, o *table.Options, stderr io.Writer) (*table.DB, error) {
	db, err := table.OpenDB(dir, o)
	if err != nil {
		return nil, err
	}
	if msg := db.Initialized(); msg != "" {
		fmt.Fprintln(stderr, "rowttl:", msg)
	}
	return db, nil
}

// scriptsWrite reports whether any statement of the scripts may change the
// data directory: anything but queries, SHOW, DESC, USE and SET. A
// statement that does not parse changes nothing (it fails).
func scriptsWrite(scripts []string) bool {
	for _, src := range scripts {
		for _, p := range parser.SplitStatements(src) {
			stmt, err := parser.Parse(p.Text)
			if err != nil {
				continue
			}
			switch stmt.(type) {
			case *parser.Select, *parser.ShowDatabases, *parser.ShowTables, *parser.ShowCreateTable, *parser.ShowColumns,
				*parser.Describe, *parser.ShowTableStats, *parser.ShowRowsets, *parser.Set, *parser.Use,
				*parser.ShowVariables, *parser.ShowProcesslist, *parser.ShowData, *parser.Explain:
			default:
				return true
			}
		}
	}
	return false
}
