package main

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestFormats runs `rowttl sql` with the arguments of each "sql" block of
// testdata/formats (the block's input is the -e script) on one data
// directory, and compares its standard output.
func TestFormats(t *testing.T) {
	dir := t.TempDir()
	datadriven.RunTest(t, "testdata/formats", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "sql" {
			d.Fatalf(t, "unknown directive %s", d.Cmd)
		}
		args := []string{"--dir", dir, "--now", "2026-01-01 00:00:00"}
		for _, a := range d.CmdArgs {
			args = append(args, "--"+a.Key)
			args = append(args, a.Vals...)
		}
		out, errOut, err := runIn(sqlCommand(), "", append(args, "-e", d.Input)...)
		if err != nil {
			out += "exit: " + err.Error() + "\n"
		}
		if strings.TrimSpace(errOut) != "" && !strings.Contains(errOut, "initialised") {
			out += "stderr: " + errOut
		}
		return out
	})
}
