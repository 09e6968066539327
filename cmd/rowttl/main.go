// Command rowttl is the engine's command line: the demo, the SQL shell and
// script runner (sql), loads, the server, inspection, checks and
// benchmarks. What a person reads is for people (aligned tables, timings,
// durations as 7d 8h27m, progress on a terminal); what a script reads is
// SPEC's formats, unchanged by a terminal.
//
// It must never turn a directory that is not a data directory into one
// (table.OpenDB refuses it), and its read-only commands (check, inspect, sql
// scripts that only read) must never create, lock or change anything, nor
// get in the way of the process that owns the directory.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// defaultDir is the data directory every subcommand uses unless told
// otherwise.
const defaultDir = "./rowttl-data"

func main() {
	if err := rootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "rowttl:", err)
		os.Exit(1)
	}
}

// rootCommand is rowttl with every subcommand.
func rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "rowttl",
		Short:         "rowttl: an embedded analytic store whose rows expire one by one",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n" + buildInfo())
	root.AddCommand(demoCommand())
	root.AddCommand(inspectCommand())
	root.AddCommand(sqlCommand())
	root.AddCommand(benchCommand())
	root.AddCommand(checkCommand())
	root.AddCommand(loadCommand())
	root.AddCommand(serveCommand())
	root.AddCommand(exportCommand())
	root.AddCommand(migrateCommand())
	return root
}

// version is the module version the binary was built from: a release tag,
// a pseudo-version, or "(devel)" for a build in the source tree.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Version == "" {
		return "(devel)"
	}
	return bi.Main.Version
}

// buildInfo is what `rowttl --version` prints after the version: the Go
// version, the commit and whether the tree had changes.
func buildInfo() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "go: %s\n", bi.GoVersion)
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision", "vcs.time", "vcs.modified", "GOOS", "GOARCH":
			fmt.Fprintf(&b, "%s: %s\n", s.Key, s.Value)
		}
	}
	return b.String()
}
