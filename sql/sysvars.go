package sql

import (
	"maps"
	"sort"
	"strconv"
	"strings"

	"github.com/rowttl/rowttl"
	"github.com/rowttl/rowttl/exec"
	"github.com/rowttl/rowttl/schema"
	"github.com/rowttl/rowttl/sql/parser"
)

// The variables a session shows (SHOW VARIABLES, SELECT @@name): those it
// acts on, those SET only keeps, and the ones MySQL clients, drivers and
// BI tools read on connect. A network front end states the values it
// runs with (SetServerVariables), so that a connection and an in-process
// shell answer alike.

// clientVariables are the variables clients read, at MySQL's and Doris's
// defaults, which the MySQL front end's defaults are too.
var clientVariables = map[string]string{
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
	"interactive_timeout":      "28800",
	"license":                  "Apache License, Version 2.0",
	"lower_case_table_names":   "0",
	"max_allowed_packet":       "67108864",
	"max_connections":          "1024",
	"net_buffer_length":        "16384",
	"net_read_timeout":         "30",
	"net_write_timeout":        "60",
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
	"version_comment":          "rowttl",
	"wait_timeout":             "28800",
}

// SetServerVariables sets the values of server variables as a front end
// runs with them (max_connections, wait_timeout, ...): SHOW VARIABLES and
// @@name show them unless the session SET them itself.
func (s *Session) SetServerVariables(vars map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.server == nil {
		s.server = map[string]string{}
	}
	maps.Copy(s.server, vars)
}

// variableLocked is the value of a variable (s.mu held); ok is false for
// a variable the session does not know.
func (s *Session) variableLocked(name string) (string, bool) {
	switch name {
	case "time_zone":
		return s.zoneName, true
	case "show_hidden_columns":
		return strconv.FormatBool(s.showHidden), true
	case "enable_unique_key_partial_update":
		return strconv.FormatBool(s.partialUpdate), true
	case "exec_mem_limit":
		return strconv.FormatInt(s.memLimit, 10), true
	case "session_now":
		if s.frozen == nil {
			return "DEFAULT", true
		}
		return schema.FormatDatetime(schema.DatetimeFromTime(s.frozen.In(s.loc)), 6), true
	case "version":
		return VersionString(), true
	}
	if v, ok := s.vars[name]; ok {
		return v, true
	}
	if v, ok := s.server[name]; ok {
		return v, true
	}
	v, ok := clientVariables[name]
	return v, ok
}

// variableNamesLocked lists every variable the session knows, sorted.
func (s *Session) variableNamesLocked() []string {
	set := map[string]bool{"time_zone": true, "show_hidden_columns": true, "enable_unique_key_partial_update": true,
		"exec_mem_limit": true, "session_now": true, "version": true}
	for _, m := range []map[string]string{s.vars, s.server, clientVariables} {
		for k := range m {
			set[k] = true
		}
	}
	names := make([]string, 0, len(set))
	for k := range set {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// sysVarValue is the value of @@name in a statement: a BIGINT when the
// variable's text is an integer (autocommit, max_allowed_packet), as
// MySQL types them, else a string.
func sysVarValue(env *stmtEnv, name string) (*compiled, error) {
	var (
		v  string
		ok bool
	)
	if env.sysvar != nil {
		v, ok = env.sysvar(name)
	}
	if !ok {
		return nil, rowttl.Errorf(rowttl.ErrInvalidArgument, "Unknown system variable '%s'", name)
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return constant(bigintType, schema.IntVal(n)), nil
	}
	return constant(stringType, schema.BytesVal([]byte(v))), nil
}

// showVariables lists the session's variables sorted by name; LIKE
// matches names ignoring case, WHERE is a condition on the columns
// Variable_name and Value.
func (s *Session) showVariables(env *stmtEnv, st *parser.ShowVariables) (*Result, error) {
	res := &Result{Columns: []string{"Variable_name", "Value"}, Rows: [][]string{}}
	var where *compiled
	if st.Where != nil {
		sc := &scope{tableName: "variables", cols: []column{{name: "Variable_name", typ: stringType}, {name: "Value", typ: stringType}}}
		c := newCompiler(env, sc)
		x, err := c.compile(st.Where)
		if err == nil {
			where, err = c.asBool(x)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, n := range s.variableNamesLocked() {
		if st.Like != "" && !exec.LikeMatch([]rune(strings.ToLower(n)), []rune(strings.ToLower(st.Like)), '\\') {
			continue
		}
		v, _ := s.variableLocked(n)
		if where != nil {
			// The row stays when WHERE is TRUE: not FALSE, not NULL.
			keep, err := where.eval([]schema.Value{schema.BytesVal([]byte(n)), schema.BytesVal([]byte(v))})
			if err != nil {
				return nil, err
			}
			if keep.IsNull() || keep.Int == 0 {
				continue
			}
		}
		res.Rows = append(res.Rows, []string{n, v})
	}
	return res, nil
}
