package main

import (
	"fmt"
	"strings"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/table"
	"github.com/spf13/cobra"
)

// tableArg reads a --table value the same way for every command: [DB.]TABLE,
// the database "default" when none is named.
func tableArg(s string) (dbName, name string, err error) {
	s = strings.TrimSpace(s)
	dbName, name = table.DefaultDatabase, s
	if i := strings.IndexByte(s, '.'); i >= 0 {
		dbName, name = s[:i], s[i+1:]
	}
	if dbName == "" || name == "" || strings.Contains(name, ".") {
		return "", "", rowttl.Errorf(rowttl.ErrInvalidArgument, "--table %q: want [DB.]TABLE", s)
	}
	return dbName, name, nil
}

// fileArg accepts exactly one positional argument, what; a missing or
// extra one says so with the usage line.
func fileArg(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return fmt.Errorf("missing the %s argument\nUsage: %s", what, cmd.UseLine())
		case len(args) > 1:
			return fmt.Errorf("one %s argument expected, got %d: %s\nUsage: %s", what, len(args), strings.Join(args, " "), cmd.UseLine())
		}
		return nil
	}
}

// atLeast refuses a numeric flag below lo.
func atLeast[T int | int64](flag string, v, lo T) error {
	if v < lo {
		return rowttl.Errorf(rowttl.ErrInvalidArgument, "--%s %d: must be at least %d", flag, v, lo)
	}
	return nil
}
