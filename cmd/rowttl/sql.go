package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/chzyer/readline"
	"github.com/rowttl/rowttl/sql"
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
}

func sqlCommand() *cobra.Command {
	var o sqlOptions
	cmd := &cobra.Command{
		Use:   "sql",
		Short: "Run SQL statements (the Doris-compatible dialect) on the data directory",
		Long: `sql runs statements of rowttl's Doris-compatible SQL dialect.

Script mode (-e, -f, or standard input that is not a terminal): each result
set prints as a header line and one line per row, fields separated by TAB;
other statements print nothing; a failed statement prints one line
"ERROR: <message>" and the script goes on unless --bail is given. The exit
status is 1 when any statement failed.

Interactive mode (standard input is a terminal): statements end with ';',
with line editing and history.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
	// A script that only reads opens the directory read-only: it creates
	// nothing (not even a missing directory) and runs alongside the
	// process that owns it.
	readOnly := !tty && !scriptsWrite(scripts)
	db, err := openDB(o.dir, &table.Options{ReadOnly: readOnly}, stderr)
	if err != nil {
		return err
	}
	defer db.Close()
	s := sql.NewSession(db)
	if o.now != "" {
		t, err := s.ParseSessionNow(o.now)
		if err != nil {
			return fmt.Errorf("--now: %w", err)
		}
		s.FreezeNow(t)
	}
	if tty {
		return interactive(ctx, s, stdout)
	}
	failed := 0
	for _, src := range scripts {
		errs, werr := s.RunScript(ctx, src, sql.ScriptOptions{Bail: o.bail}, stdout)
		if werr != nil {
			return werr
		}
		failed += len(errs)
		if failed > 0 && o.bail {
			break
		}
	}
	if failed > 0 {
		return &statementsFailed{n: failed}
	}
	return nil
}

// interactive runs the shell on a terminal: statements end with ';'.
func interactive(ctx context.Context, s *sql.Session, out io.Writer) error {
	cfg := &readline.Config{Prompt: "rowttl> ", Stdout: out, InterruptPrompt: "^C", EOFPrompt: "exit"}
	if home, err := os.UserHomeDir(); err == nil {
		cfg.HistoryFile = filepath.Join(home, ".rowttl_history")
	}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		return err
	}
	defer rl.Close()
	fmt.Fprintln(out, "rowttl SQL shell. End statements with ';'. Type exit or quit to leave.")
	var buf strings.Builder
	for {
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			buf.Reset()
			rl.SetPrompt("rowttl> ")
			continue
		}
		if err != nil { // io.EOF
			return nil
		}
		trimmed := strings.TrimSpace(line)
		if buf.Len() == 0 {
			switch strings.ToLower(strings.TrimSuffix(trimmed, ";")) {
			case "exit", "quit", `\q`:
				return nil
			case "":
				continue
			}
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		if !strings.HasSuffix(trimmed, ";") {
			rl.SetPrompt("     -> ")
			continue
		}
		src := buf.String()
		buf.Reset()
		rl.SetPrompt("rowttl> ")
		if _, err := s.RunScript(ctx, src, sql.ScriptOptions{Summary: true}, out); err != nil {
			return err
		}
	}
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
		for _, p := range sql.SplitStatements(src) {
			stmt, err := sql.Parse(p.Text)
			if err != nil {
				continue
			}
			switch stmt.(type) {
			case *sql.Select, *sql.ShowDatabases, *sql.ShowTables, *sql.ShowCreateTable, *sql.ShowColumns,
				*sql.Describe, *sql.ShowTableStats, *sql.ShowRowsets, *sql.Set, *sql.Use:
			default:
				return true
			}
		}
	}
	return false
}
