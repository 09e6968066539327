package sql

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
	"github.com/rowttl/rowttl/table"
)

func quoteBack(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

func quoteDouble(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// createTableText renders a definition as SHOW CREATE TABLE prints it, in
// Doris's layout: one column per line, the key clause, the comment, the
// distribution and the properties one per line as "key" = "value", sorted
// by key (the retention in whole seconds).
func createTableText(name string, def *table.Definition) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n", quoteBack(name))
	for i, c := range def.Schema.Columns {
		b.WriteString("  ")
		b.WriteString(quoteBack(c.Name))
		b.WriteByte(' ')
		b.WriteString(lowerTypeName(c.Type))
		if c.Agg != "" {
			b.WriteString(" " + c.Agg)
		}
		if c.Nullable {
			b.WriteString(" NULL")
		} else {
			b.WriteString(" NOT NULL")
		}
		switch c.DefaultKind {
		case schema.DefaultNull:
			b.WriteString(" DEFAULT NULL")
		case schema.DefaultLiteral:
			b.WriteString(" DEFAULT " + quoteDouble(c.Default))
		case schema.DefaultCurrentTimestamp:
			b.WriteString(" DEFAULT CURRENT_TIMESTAMP")
		}
		if c.Comment != "" {
			b.WriteString(" COMMENT " + parser.QuoteString(c.Comment))
		}
		if i < len(def.Schema.Columns)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(") ENGINE=OLAP\n")
	keys := make([]string, def.Schema.KeyCount)
	for i := range keys {
		keys[i] = quoteBack(def.Schema.Columns[i].Name)
	}
	fmt.Fprintf(&b, "%s KEY(%s)\n", def.Model.KeyWord(), strings.Join(keys, ", "))
	if def.Comment != "" {
		fmt.Fprintf(&b, "COMMENT %s\n", parser.QuoteString(def.Comment))
	}
	if def.Distribution != "" {
		b.WriteString(def.Distribution + "\n")
	}
	names := def.PropertyNames()
	b.WriteString("PROPERTIES (")
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n%s = %s", quoteDouble(k), quoteDouble(def.Properties[k]))
	}
	if len(names) > 0 {
		b.WriteByte('\n')
	}
	b.WriteString(");")
	return b.String()
}

func (s *Session) showCreateTable(st *parser.ShowCreateTable) (*Result, error) {
	tbl, _, name, err := s.openTable(st.Table)
	if err != nil {
		return nil, err
	}
	return &Result{
		Columns: []string{"Table", "Create Table"},
		Rows:    [][]string{{name, createTableText(name, tbl.SharedDefinition())}},
	}, nil
}

func (s *Session) showTables(st *parser.ShowTables) (*Result, error) {
	db := st.DB
	if db == "" {
		db = s.curDB
	}
	names, err := s.db.Tables(db)
	if err != nil {
		return nil, err
	}
	res := &Result{Columns: []string{"Tables_in_" + db}, Rows: [][]string{}}
	if st.Full {
		res.Columns = append(res.Columns, "Table_type")
	}
	for _, n := range names {
		if st.Like != "" && !exec.LikeMatch([]rune(n), []rune(st.Like), '\\') {
			continue
		}
		row := []string{n}
		if st.Full {
			row = append(row, "BASE TABLE")
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// describe answers DESC t and SHOW COLUMNS: Field, Type, Null, Key,
// Default, Extra; __TTL__ is listed (Extra HIDDEN) only with hidden
// columns shown.
func (s *Session) describe(t parser.TableName) (*Result, error) {
	tbl, _, _, err := s.openTable(t)
	if err != nil {
		return nil, err
	}
	def := tbl.SharedDefinition()
	pol := policyOf(tbl)
	res := &Result{Columns: []string{"Field", "Type", "Null", "Key", "Default", "Extra"}, Rows: [][]string{}}
	yesNo := func(b bool) string {
		if b {
			return "Yes"
		}
		return "No"
	}
	for i, c := range def.Schema.Columns {
		dflt := "NULL"
		switch c.DefaultKind {
		case schema.DefaultLiteral:
			dflt = c.Default
		case schema.DefaultCurrentTimestamp:
			dflt = "CURRENT_TIMESTAMP"
		}
		res.Rows = append(res.Rows, []string{c.Name, typeName(c.Type), yesNo(c.Nullable), strconv.FormatBool(i < def.Schema.KeyCount), dflt, c.Agg})
	}
	if pol.on && s.showHidden {
		res.Rows = append(res.Rows, []string{schema.TTLColumn, typeName(ttlType(def, pol)), "Yes", "false", "NULL", "HIDDEN"})
	}
	return res, nil
}

func (s *Session) showTableStats(ctx context.Context, env *stmtEnv, st *parser.ShowTableStats) (*Result, error) {
	tbl, _, _, err := s.openTable(st.Table)
	if err != nil {
		return nil, err
	}
	stats, err := tbl.Stats(ctx, env.now)
	if err != nil {
		return nil, err
	}
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	return &Result{
		Columns: []string{"rowsets", "rows_on_disk", "bytes_on_disk", "visible_rows", "expired_rows_on_disk", "reclaimed_rows", "reclaimed_bytes", "compactions"},
		Rows: [][]string{{
			strconv.Itoa(stats.Rowsets), i(stats.RowsOnDisk), i(stats.BytesOnDisk), i(stats.VisibleRows),
			i(stats.ExpiredRowsOnDisk), i(stats.ReclaimedRows), i(stats.ReclaimedBytes), i(stats.TotalCompactions()),
		}},
	}, nil
}

func (s *Session) showRowsets(ctx context.Context, env *stmtEnv, st *parser.ShowRowsets) (*Result, error) {
	tbl, _, _, err := s.openTable(st.Table)
	if err != nil {
		return nil, err
	}
	infos, err := tbl.Rowsets(ctx, env.now)
	if err != nil {
		return nil, err
	}
	res := &Result{Columns: []string{"rowset_id", "versions", "rows", "bytes", "min_ttl", "max_ttl", "expired_rows"}, Rows: [][]string{}}
	opt := func(p *int64) string {
		if p == nil {
			return "NULL"
		}
		return strconv.FormatInt(*p, 10)
	}
	for _, r := range infos {
		res.Rows = append(res.Rows, []string{
			strconv.FormatUint(r.ID, 10), fmt.Sprintf("%d-%d", r.Lo, r.Hi),
			strconv.FormatInt(r.Rows, 10), strconv.FormatInt(r.Bytes, 10),
			opt(r.MinTTL), opt(r.MaxTTL), strconv.FormatInt(r.ExpiredRows, 10),
		})
	}
	return res, nil
}

// adminCompact runs one compaction now, judging expiry at the statement's
// now, and returns when it is published.
func (s *Session) adminCompact(ctx context.Context, env *stmtEnv, st *parser.AdminCompact) error {
	kind, err := table.ParseCompactionKind(st.Type)
	if err != nil {
		return err
	}
	tbl, _, _, err := s.openTable(st.Table)
	if err != nil {
		return err
	}
	return tbl.CompactAt(ctx, kind, env.now)
}

// showProcesslist lists the sessions of the data directory in this
// process (and the connections a server registered); without FULL, Info
// keeps its first 100 characters, as MySQL does.
func (s *Session) showProcesslist(st *parser.ShowProcesslist) *Result {
	res := &Result{Columns: []string{"Id", "User", "Host", "db", "Command", "Time", "State", "Info"}, Rows: [][]string{}}
	for _, p := range ProcessListOf(s.db).Snapshot(s.Clock()) {
		info := p.Info
		if r := []rune(info); !st.Full && len(r) > 100 {
			info = string(r[:100])
		}
		if p.Info == "" {
			info = "NULL"
		}
		db := p.DB
		if p.ID == s.proc.ID() {
			db = s.curDB // the process records it after each statement
		}
		res.Rows = append(res.Rows, []string{strconv.FormatInt(p.ID, 10), p.User, p.Host, db, p.Command,
			strconv.FormatInt(int64(p.Time/time.Second), 10), p.State, info})
	}
	return res
}

// showData answers SHOW DATA [FROM db] as Doris does, per table and in
// total: visible rows, bytes on disk, and the rows and (estimated) bytes
// that have expired and wait for a compaction to reclaim them.
func (s *Session) showData(ctx context.Context, env *stmtEnv, st *parser.ShowData) (*Result, error) {
	db := st.DB
	if db == "" {
		db = s.curDB
	}
	names, err := s.db.Tables(db)
	if err != nil {
		return nil, err
	}
	res := &Result{Columns: []string{"TableName", "Rows", "BytesOnDisk", "ExpiredRows", "ExpiredBytes"}, Rows: [][]string{}}
	var total table.Stats
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	for _, n := range names {
		tbl, _, _, err := s.openTable(parser.TableName{DB: db, Name: n})
		if err != nil {
			return nil, err
		}
		stats, err := tbl.Stats(ctx, env.now)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, []string{n, i(stats.VisibleRows), i(stats.BytesOnDisk), i(stats.ExpiredRowsOnDisk), i(stats.ExpiredBytesOnDisk)})
		total.VisibleRows += stats.VisibleRows
		total.BytesOnDisk += stats.BytesOnDisk
		total.ExpiredRowsOnDisk += stats.ExpiredRowsOnDisk
		total.ExpiredBytesOnDisk += stats.ExpiredBytesOnDisk
	}
	res.Rows = append(res.Rows, []string{"Total", i(total.VisibleRows), i(total.BytesOnDisk), i(total.ExpiredRowsOnDisk), i(total.ExpiredBytesOnDisk)})
	return res, nil
}
