// Command rowttl is the engine's command line: the demo, and (as they land)
// the SQL shell, loads, compaction, inspection and benchmarks.
//
// It must never turn a directory that is not a data directory into one
// (table.OpenDB refuses it), and its read-only commands (check, inspect, sql
// scripts that only read) must never create, lock or change anything, nor
// get in the way of the process that owns the directory.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// defaultDir is the data directory every subcommand uses unless told
// otherwise.
const defaultDir = "./rowttl-data"

func main() {
	root := &cobra.Command{
		Use:           "rowttl",
		Short:         "rowttl: an embedded analytic store whose rows expire one by one",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(demoCommand())
	root.AddCommand(inspectCommand())
	root.AddCommand(sqlCommand())
	root.AddCommand(benchCommand())
	root.AddCommand(checkCommand())
	root.AddCommand(loadCommand())
	root.AddCommand(serveCommand())
	root.AddCommand(exportCommand())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "rowttl:", err)
		os.Exit(1)
	}
}
