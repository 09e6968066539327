package mysql

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rowttl/rowttl"
	rsql "github.com/rowttl/rowttl/sql"
	vtmysql "vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/mysql/sqlerror"
	"vitess.io/vitess/go/sqltypes"
	querypb "vitess.io/vitess/go/vt/proto/query"
)

// The statements MySQL clients, drivers and BI tools send on their own
// (on connect, before a query, on Ctrl-C) that are no part of the SQL
// dialect: answered here, before the session sees the text.

var (
	reSelectItems = regexp.MustCompile(`(?is)^select\s+(.+?)(?:\s+limit\s+\d+)?$`)
	reItem        = regexp.MustCompile("(?is)^(@@(?:(?:session|global|local)\\.)?([a-z_][a-z0-9_]*)|(database|schema|user|current_user|session_user|system_user|connection_id|version)\\s*\\(\\s*\\))(?:\\s+(?:as\\s+)?([a-z_][a-z0-9_]*|`[^`]*`|'[^']*'))?$")
	reSetNames    = regexp.MustCompile(`(?is)^set\s+(?:names|character\s+set|charset)\b`)
	reSetTx       = regexp.MustCompile(`(?is)^set\s+(?:(?:session|local|global)\s+)?transaction\b`)
	reProcesslist = regexp.MustCompile(`(?is)^show\s+(full\s+)?processlist$`)
	reKill        = regexp.MustCompile(`(?is)^kill\s+(?:(query|connection)\s+)?(\d+)$`)
	reVariables   = regexp.MustCompile(`(?is)^show\s+(?:(?:session|global|local)\s+)?variables(?:\s+(like|where)\s+(.*))?$`)
	reWarnings    = regexp.MustCompile(`(?is)^show\s+(?:warnings|errors)(?:\s+limit\s+.*)?$`)
	reStatus      = regexp.MustCompile(`(?is)^show\s+(?:(?:session|global)\s+)?status(?:\s+like\s+.*)?$`)
	reBegin       = regexp.MustCompile(`(?is)^(?:begin(?:\s+work)?|start\s+transaction.*)$`)
	reEndTx       = regexp.MustCompile(`(?is)^(?:commit|rollback)(?:\s+work)?$`)
	reQuoted      = regexp.MustCompile(`'((?:[^'\\]|\\.|'')*)'`)
)

// compat answers text when it is one of the client statements; handled is
// false for everything else.
func (s *Server) compat(ctx context.Context, st *connState, text string, callback func(*sqltypes.Result) error) (handled bool, err error) {
	t := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text), ";"))
	if len(t) < 4 {
		return false, nil
	}
	switch strings.ToLower(t[:3]) {
	case "sel":
		return s.selectItems(st, t, callback)
	case "set":
		if reSetNames.MatchString(t) || reSetTx.MatchString(t) {
			return true, callback(&sqltypes.Result{})
		}
	case "sho":
		switch {
		case reProcesslist.MatchString(t):
			return true, callback(s.processList(reProcesslist.FindStringSubmatch(t)[1] != ""))
		case reVariables.MatchString(t):
			m := reVariables.FindStringSubmatch(t)
			return true, callback(s.showVariables(st, strings.ToLower(m[1]), m[2]))
		case reWarnings.MatchString(t):
			return true, callback(textResult([]string{"Level", "Code", "Message"}, nil))
		case reStatus.MatchString(t):
			return true, callback(textResult([]string{"Variable_name", "Value"}, nil))
		}
	case "kil":
		if m := reKill.FindStringSubmatch(t); m != nil {
			return true, s.kill(st, strings.ToLower(m[1]) == "query", m[2], callback)
		}
	case "beg", "sta":
		if reBegin.MatchString(t) {
			return true, rowttl.Errorf(rowttl.ErrNotSupported, "transactions are not supported: every statement commits on its own (autocommit)")
		}
	case "com", "rol":
		if reEndTx.MatchString(t) {
			return true, callback(&sqltypes.Result{})
		}
	}
	return false, nil
}

// selectItems answers a SELECT of system variables and client functions
// only (SELECT @@version_comment LIMIT 1, SELECT DATABASE(), ...).
func (s *Server) selectItems(st *connState, t string, callback func(*sqltypes.Result) error) (bool, error) {
	m := reSelectItems.FindStringSubmatch(t)
	if m == nil || !strings.Contains(m[1], "@@") && !strings.Contains(m[1], "(") {
		return false, nil
	}
	items := strings.Split(m[1], ",")
	names := make([]string, len(items))
	row := make([]sqltypes.Value, len(items))
	fl := make([]*querypb.Field, len(items))
	for i, it := range items {
		it = strings.TrimSpace(it)
		im := reItem.FindStringSubmatch(it)
		if im == nil {
			return false, nil
		}
		names[i] = im[1]
		if a := im[4]; a != "" {
			names[i] = strings.Trim(a, "`'")
		}
		typ := querypb.Type_VARCHAR
		var val string
		if im[2] != "" {
			v, ok := s.variable(st, strings.ToLower(im[2]))
			if !ok {
				return true, sqlerror.NewSQLErrorf(sqlerror.ERUnknownSystemVariable, sqlerror.SSUnknownSQLState, "Unknown system variable '%s'", im[2])
			}
			val = v
			if _, err := strconv.ParseInt(v, 10, 64); err == nil {
				typ = querypb.Type_INT64
			}
		} else {
			switch strings.ToLower(im[3]) {
			case "database", "schema":
				val = st.sess.CurrentDatabase()
			case "user", "session_user", "system_user", "current_user":
				val = st.user + "@" + hostOnly(st.host)
			case "connection_id":
				val, typ = strconv.FormatUint(uint64(st.id), 10), querypb.Type_UINT64
			case "version":
				val = ServerVersion
			}
		}
		row[i] = sqltypes.MakeTrusted(typ, []byte(val))
		fl[i] = textField(names[i])
		if typ != querypb.Type_VARCHAR {
			fl[i] = &querypb.Field{Name: names[i], Type: typ, ColumnLength: 20, Charset: collationBinary, Flags: uint32(querypb.MySqlFlag_NUM_FLAG | querypb.MySqlFlag_BINARY_FLAG)}
		}
	}
	return true, callback(&sqltypes.Result{Fields: fl, Rows: [][]sqltypes.Value{row}})
}

func hostOnly(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return strings.Trim(addr[:i], "[]")
	}
	return addr
}

// baseVariables are the server variables clients read, at the values the
// server runs with.
func (s *Server) baseVariables() map[string]string {
	secs := func(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) }
	return map[string]string{
		"auto_increment_increment": "1",
		"autocommit":               "1",
		"character_set_client":     "utf8mb4",
		"character_set_connection": "utf8mb4",
		"character_set_database":   "utf8mb4",
		"character_set_results":    "utf8mb4",
		"character_set_server":     "utf8mb4",
		"collation_connection":     "utf8mb4_general_ci",
		"collation_database":       "utf8mb4_general_ci",
		"collation_server":         "utf8mb4_general_ci",
		"init_connect":             "",
		"interactive_timeout":      secs(s.o.IdleTimeout),
		"license":                  "Apache License, Version 2.0",
		"lower_case_table_names":   "0",
		"max_allowed_packet":       strconv.FormatInt(s.o.MaxAllowedPacket, 10),
		"max_connections":          strconv.Itoa(s.o.MaxConnections),
		"net_buffer_length":        "16384",
		"net_read_timeout":         secs(s.o.ReadTimeout),
		"net_write_timeout":        secs(s.o.WriteTimeout),
		"performance_schema":       "0",
		"query_cache_size":         "0",
		"query_cache_type":         "OFF",
		"sql_mode":                 "",
		"sql_select_limit":         "18446744073709551615",
		"system_time_zone":         "UTC",
		"transaction_isolation":    "REPEATABLE-READ",
		"transaction_read_only":    "0",
		"tx_isolation":             "REPEATABLE-READ",
		"tx_read_only":             "0",
		"version":                  ServerVersion,
		"version_comment":          "rowttl (Doris-compatible row-TTL engine)",
		"wait_timeout":             secs(s.o.IdleTimeout),
	}
}

// sessionVariables are the variables the session acts on.
var sessionVariables = []string{"time_zone", "show_hidden_columns", "enable_unique_key_partial_update", "exec_mem_limit", "session_now"}

// variable is the value of a variable for a connection: what its session
// set, else the server's.
func (s *Server) variable(st *connState, name string) (string, bool) {
	if v, ok := st.sess.Variable(name); ok {
		return v, true
	}
	v, ok := s.baseVariables()[name]
	return v, ok
}

func (s *Server) showVariables(st *connState, kind, arg string) *sqltypes.Result {
	names := []string{}
	for n := range s.baseVariables() {
		names = append(names, n)
	}
	names = append(names, sessionVariables...)
	sort.Strings(names)
	keep := func(string) bool { return true }
	switch kind {
	case "like":
		if q := reQuoted.FindStringSubmatch(arg); q != nil {
			re := likeRegexp(q[1])
			keep = re.MatchString
		}
	case "where":
		// Clients filter on names (Variable_name = 'x' OR ..., IN (...));
		// the quoted names are the ones kept, a LIKE among them matches.
		var pats []*regexp.Regexp
		for _, q := range reQuoted.FindAllStringSubmatch(arg, -1) {
			pats = append(pats, likeRegexp(q[1]))
		}
		keep = func(n string) bool {
			for _, p := range pats {
				if p.MatchString(n) {
					return true
				}
			}
			return false
		}
	}
	var rows [][]string
	for _, n := range names {
		if !keep(n) {
			continue
		}
		v, _ := s.variable(st, n)
		rows = append(rows, []string{n, v})
	}
	return textResult([]string{"Variable_name", "Value"}, rows)
}

// likeRegexp is a LIKE pattern (% and _, backslash escapes) as a
// case-insensitive regexp.
func likeRegexp(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?is)^")
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		case '\\':
			if i+1 < len(p) {
				i++
				b.WriteString(regexp.QuoteMeta(p[i : i+1]))
			}
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

func (s *Server) processList(full bool) *sqltypes.Result {
	var rows [][]string
	now := time.Now()
	for _, st := range s.processes() {
		st.mu.Lock()
		info := st.mu.info
		if !full && len(info) > 100 {
			info = info[:100]
		}
		row := []string{strconv.FormatUint(uint64(st.id), 10), st.user, st.host, st.mu.db, st.mu.command,
			strconv.FormatInt(int64(now.Sub(st.mu.started)/time.Second), 10), "", info}
		if st.mu.command == "Sleep" {
			row[7] = "NULL"
		} else {
			row[6] = "executing"
		}
		st.mu.Unlock()
		rows = append(rows, row)
	}
	return textResult([]string{"Id", "User", "Host", "db", "Command", "Time", "State", "Info"}, rows)
}

func (s *Server) kill(self *connState, queryOnly bool, id string, callback func(*sqltypes.Result) error) error {
	n, _ := strconv.ParseUint(id, 10, 64)
	target := s.process(n)
	if target == nil {
		return sqlerror.NewSQLErrorf(sqlerror.ERNoSuchThread, sqlerror.SSUnknownSQLState, "Unknown thread id: %s", id)
	}
	if queryOnly {
		if target != self {
			target.cancelQuery()
		}
		return callback(&sqltypes.Result{})
	}
	s.logf("mysql connection %d killed by connection %d", target.id, self.id)
	if target == self {
		_ = callback(&sqltypes.Result{})
		target.kill()
		return nil
	}
	target.kill()
	return callback(&sqltypes.Result{})
}

func textField(name string) *querypb.Field {
	return &querypb.Field{Name: name, Type: querypb.Type_VARCHAR, ColumnLength: 1024, Charset: collationUTF8MB4}
}

// textResult is a result set of VARCHAR columns; "NULL" is NULL.
func textResult(cols []string, rows [][]string) *sqltypes.Result {
	res := &sqltypes.Result{Fields: make([]*querypb.Field, len(cols))}
	for i, c := range cols {
		res.Fields[i] = textField(c)
	}
	for _, r := range rows {
		vals := make([]sqltypes.Value, len(r))
		for i, v := range r {
			if v == "NULL" {
				vals[i] = sqltypes.NULL
			} else {
				vals[i] = sqltypes.NewVarChar(v)
			}
		}
		res.Rows = append(res.Rows, vals)
	}
	return res
}

// fieldList is the answer to COM_FIELD_LIST (table name, NUL, wildcard):
// a column definition per column of the table in the current database,
// with its default, then EOF; or an ERR packet.
func (s *Server) fieldList(st *connState, seq byte, body []byte) []byte {
	name := string(body)
	if i := strings.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	db := st.sess.CurrentDatabase()
	q := fmt.Sprintf("SELECT * FROM `%s`.`%s` LIMIT 0", strings.ReplaceAll(db, "`", "``"), strings.ReplaceAll(name, "`", "``"))
	r, err := st.sess.Query(st.ctx, q)
	if err != nil {
		se := sqlError(err)
		return errPacket(seq, uint16(se.Num), se.State, se.Message)
	}
	defer r.Release()
	var out []byte
	for _, f := range r.Schema().Fields() {
		typ, length, dec, flags := columnType(rsql.FieldType(f))
		cs := uint16(collationUTF8MB4)
		if flags&uint32(querypb.MySqlFlag_BINARY_FLAG) != 0 {
			cs = collationBinary
		}
		mt, _ := sqltypes.TypeToMySQL(typ)
		p := lenencString(nil, "def")
		p = lenencString(p, db)
		p = lenencString(p, name)
		p = lenencString(p, name)
		p = lenencString(p, f.Name)
		p = lenencString(p, f.Name)
		p = append(p, 0x0c, byte(cs), byte(cs>>8),
			byte(length), byte(length>>8), byte(length>>16), byte(length>>24),
			byte(mt), byte(flags), byte(flags>>8), byte(dec), 0, 0)
		p = append(p, 0xfb) // default: NULL
		out = appendPacket(out, seq, p)
		seq++
	}
	eof := []byte{eofPacketByte, 0, 0, 2, 0}
	if st.vc.Capabilities&vtmysql.CapabilityClientDeprecateEOF != 0 {
		eof = []byte{eofPacketByte, 0, 0, 2, 0, 0, 0}
	}
	return appendPacket(out, seq, eof)
}
