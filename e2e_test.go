package rowttl_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// rowttlBin is the rowttl command built once by TestMain, with the tags of
// this test binary (the invariants build included).
var rowttlBin string

func TestMain(m *testing.M) {
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "rowttl-e2e-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		rowttlBin = filepath.Join(dir, "rowttl")
		goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goCmd); err != nil {
			goCmd = "go"
		}
		args := []string{"build", "-o", rowttlBin}
		if buildTags != "" {
			args = append(args, "-tags", buildTags)
		}
		build := exec.Command(goCmd, append(args, "./cmd/rowttl")...)
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building the rowttl command: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}())
}

// TestScripts runs the end-to-end scripts of testdata/: each file is a
// story told through the rowttl command, in the datadriven format, on a
// data directory of its own. Every directive is a process of its own, so
// each one reopens the directory as a restart would.
//
//	rowttl SUBCOMMAND [flag=value | flag=(a, b, ...) | flag] ...
//	<standard input>
//
// runs `rowttl SUBCOMMAND --dir DIR --flag value ...` (a list value is joined
// with ", "; a T in a now= value may stand for the space), and prints its
// standard output, its standard error prefixed with "stderr: ", and its exit
// status when not 0. The directory's path prints as $DIR and a load's
// timings as 0. Regenerate with `go test . -run TestScripts -rewrite`.
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		dir := t.TempDir()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "rowttl" || len(d.CmdArgs) == 0 || len(d.CmdArgs[0].Vals) != 0 {
				d.Fatalf(t, "want: rowttl SUBCOMMAND [flags]")
			}
			args := []string{d.CmdArgs[0].Key, "--dir", dir}
			for _, a := range d.CmdArgs[1:] {
				args = append(args, "--"+a.Key)
				if len(a.Vals) > 0 {
					v := strings.Join(a.Vals, ", ")
					if a.Key == "now" {
						v = strings.Replace(v, "T", " ", 1)
					}
					args = append(args, v)
				}
			}
			if args[0] == "load" {
				args = append(args, "-")
			}
			return run(t, dir, d.Input, args)
		})
	})
}

var loadTime = regexp.MustCompile(`"(LoadTimeMs|CommitAndPublishTimeMs)":\s*\d+`)

func run(t *testing.T, dir, stdin string, args []string) string {
	t.Helper()
	cmd := exec.Command(rowttlBin, args...)
	if stdin != "" {
		stdin += "\n"
	}
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	status := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("rowttl %v: %v", args, err)
		}
		status = ee.ExitCode()
	}
	var out strings.Builder
	out.WriteString(stdout.String())
	for _, l := range strings.SplitAfter(stderr.String(), "\n") {
		if l != "" {
			out.WriteString("stderr: " + l)
		}
	}
	s := out.String()
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	if status != 0 {
		s += fmt.Sprintf("exit status %d\n", status)
	}
	s = strings.ReplaceAll(s, dir, "$DIR")
	return loadTime.ReplaceAllString(s, `"$1": 0`)
}
