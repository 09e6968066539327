package load

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/rowttl/rowttl/sql"
	"github.com/rowttl/rowttl/sql/parser"
)

// TestGolden runs the golden files of testdata, each over a fresh data
// directory with one SQL session. Commands:
//
//	sql                      run the input as a script, printed as
//	                         `rowttl sql -f` prints it
//	load table=T [columns=…] [max_filter_ratio=R] [strict_mode=B]
//	                         load the input as a tab-separated CSV file
//	                         into T; print the status, the row counts and
//	                         the reasons of the filtered rows
//
// Regenerate with: go test ./load -run TestGolden -rewrite
func TestGolden(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		e := newEnv(t)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "sql":
				var b strings.Builder
				e.s.ExecScript(context.Background(), d.Input, false, func(_ parser.Piece, res *sql.Result, err error) {
					if perr := sql.PrintScriptResult(&b, res, err); perr != nil {
						t.Fatal(perr)
					}
				})
				return b.String()
			case "load":
				var name string
				var o Options
				for _, a := range d.CmdArgs {
					v := strings.Join(a.Vals, ",")
					switch a.Key {
					case "table":
						name = v
					case "columns":
						o.Columns = v
					case "max_filter_ratio":
						r, err := strconv.ParseFloat(v, 64)
						if err != nil {
							d.Fatalf(t, "max_filter_ratio: %v", err)
						}
						o.MaxFilterRatio = r
					case "strict_mode":
						b := v == "true"
						o.StrictMode = &b
					default:
						d.Fatalf(t, "unknown argument %s", a.Key)
					}
				}
				res := e.load(name, d.Input, o)
				var b strings.Builder
				fmt.Fprintf(&b, "%s: %d loaded, %d filtered\n", res.Status, res.NumberLoadedRows, res.NumberFilteredRows)
				for _, r := range res.ErrorRows {
					fmt.Fprintln(&b, r)
				}
				return b.String()
			}
			d.Fatalf(t, "unknown command %q", d.Cmd)
			return ""
		})
	})
}
