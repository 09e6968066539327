package mysql

import (
	"context"
	"fmt"
	"net"
	"regexp"
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
// dialect and act on the connection or the protocol rather than on the
// session: answered here, before the session sees the text. What the
// session answers itself (SELECT @@name, database(), current_user(),
// version(), connection_id(), SHOW VARIABLES, SHOW PROCESSLIST) goes to
// it, so that a connection and the in-process shell agree.

var (
	reSetNames = regexp.MustCompile(`(?is)^set\s+(?:names|character\s+set|charset)\b`)
	reSetTx    = regexp.MustCompile(`(?is)^set\s+(?:(?:session|local|global)\s+)?transaction\b`)
	reKill     = regexp.MustCompile(`(?is)^kill\s+(?:(query|connection)\s+)?(\d+)$`)
	reWarnings = regexp.MustCompile(`(?is)^show\s+(?:warnings|errors)(?:\s+limit\s+.*)?$`)
	reStatus   = regexp.MustCompile(`(?is)^show\s+(?:(?:session|global)\s+)?status(?:\s+like\s+.*)?$`)
	reBegin    = regexp.MustCompile(`(?is)^(?:begin(?:\s+work)?|start\s+transaction.*)$`)
	reEndTx    = regexp.MustCompile(`(?is)^(?:commit|rollback)(?:\s+work)?$`)
)

// compat answers text when it is one of the client statements; handled is
// false for everything else.
func (s *Server) compat(ctx context.Context, st *connState, text string, callback func(*sqltypes.Result) error) (handled bool, err error) {
	t := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text), ";"))
	if len(t) < 4 {
		return false, nil
	}
	switch strings.ToLower(t[:3]) {
	case "set":
		if reSetNames.MatchString(t) || reSetTx.MatchString(t) {
			return true, callback(&sqltypes.Result{})
		}
	case "sho":
		switch {
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

// clientHost is the host a connection's user is shown at (current_user(),
// SHOW PROCESSLIST): its address without the port, and localhost for a
// loopback address, as MySQL names it.
func clientHost(addr string) string {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return "localhost"
	}
	return host
}

// serverVariables are the variables whose values are the server's
// options; the session shows them (its other variables are its own).
func (s *Server) serverVariables() map[string]string {
	secs := func(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) }
	return map[string]string{
		"interactive_timeout": secs(s.o.IdleTimeout),
		"max_allowed_packet":  strconv.FormatInt(s.o.MaxAllowedPacket, 10),
		"max_connections":     strconv.Itoa(s.o.MaxConnections),
		"net_read_timeout":    secs(s.o.ReadTimeout),
		"net_write_timeout":   secs(s.o.WriteTimeout),
		"wait_timeout":        secs(s.o.IdleTimeout),
	}
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
