package mysql

import (
	"crypto/subtle"
	"net"

	vtmysql "vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/mysql/sqlerror"
	querypb "vitess.io/vitess/go/vt/proto/query"
)

// authServer checks the server's one user with mysql_native_password or,
// for clients that ask for it, caching_sha2_password. Both prove the
// password with a scramble of the connection's salt, never sending it.
type authServer struct {
	s *Server
}

func (a *authServer) AuthMethods() []vtmysql.AuthMethod {
	return []vtmysql.AuthMethod{
		vtmysql.NewMysqlNativeAuthMethod(a, a),
		// The library's caching_sha2_password takes only TLS or Unix
		// socket connections, for the full authentication that sends the
		// password itself. The server knows the password, so the fast
		// path (a scramble, as safe as mysql_native_password's) always
		// decides and the full one is never asked for.
		fastSha2{vtmysql.NewSha2CachingAuthMethod(a, a, a)},
	}
}

// DefaultAuthMethodDescription is the method of the greeting:
// mysql_native_password, which every client speaks; a client that wants
// caching_sha2_password answers with it and is served with it.
func (a *authServer) DefaultAuthMethodDescription() vtmysql.AuthMethodDescription {
	if a.s.greetSha2.Load() {
		return vtmysql.CachingSha2Password
	}
	return vtmysql.MysqlNativePassword
}

// HandleUser accepts every user name: a wrong one fails on its password,
// so that a client cannot tell users from passwords.
func (a *authServer) HandleUser(string) bool { return true }

func (a *authServer) open() bool { return a.s.o.User == "" }

func (a *authServer) denied(c *vtmysql.Conn, user string, remote net.Addr) error {
	a.s.metrics.loginFailures.Inc()
	a.s.logf("mysql login failed for user '%s' from %s", user, remote)
	using := "YES"
	if len(a.s.o.Password) == 0 {
		using = "NO"
	}
	host := ""
	if tcp, ok := remote.(*net.TCPAddr); ok {
		host = tcp.IP.String()
	}
	return sqlerror.NewSQLErrorf(sqlerror.ERAccessDeniedError, sqlerror.SSAccessDeniedError,
		"Access denied for user '%s'@'%s' (using password: %s)", user, host, using)
}

// matches compares a client's scramble with the expected one; an empty
// password (serve --allow-empty-password) is proven by an empty answer.
func (a *authServer) matches(want, got []byte) bool {
	if a.s.o.Password == "" {
		return len(got) == 0
	}
	return len(got) > 0 && subtle.ConstantTimeCompare(want, got) == 1
}

// UserEntryWithHash checks a mysql_native_password scramble.
func (a *authServer) UserEntryWithHash(c *vtmysql.Conn, salt []byte, user string, authResponse []byte, remote net.Addr) (vtmysql.Getter, error) {
	if a.open() {
		return userData(user), nil
	}
	want := vtmysql.ScrambleMysqlNativePassword(salt, []byte(a.s.o.Password))
	if user != a.s.o.User || !a.matches(want, authResponse) {
		return nil, a.denied(c, user, remote)
	}
	return userData(user), nil
}

// UserEntryWithCacheHash checks a caching_sha2_password scramble.
func (a *authServer) UserEntryWithCacheHash(c *vtmysql.Conn, salt []byte, user string, authResponse []byte, remote net.Addr) (vtmysql.Getter, vtmysql.CacheState, error) {
	if a.open() {
		return userData(user), vtmysql.AuthAccepted, nil
	}
	want := vtmysql.ScrambleCachingSha2Password(salt, []byte(a.s.o.Password))
	if user != a.s.o.User || !a.matches(want, authResponse) {
		return nil, vtmysql.AuthRejected, a.denied(c, user, remote)
	}
	return userData(user), vtmysql.AuthAccepted, nil
}

// UserEntryWithPassword is the full authentication, which fastSha2 never
// reaches; it checks the password all the same.
func (a *authServer) UserEntryWithPassword(c *vtmysql.Conn, user, password string, remote net.Addr) (vtmysql.Getter, error) {
	if a.open() {
		return userData(user), nil
	}
	if user != a.s.o.User || subtle.ConstantTimeCompare([]byte(password), []byte(a.s.o.Password)) != 1 {
		return nil, a.denied(c, user, remote)
	}
	return userData(user), nil
}

// fastSha2 is caching_sha2_password on any connection.
type fastSha2 struct{ vtmysql.AuthMethod }

func (fastSha2) HandleUser(*vtmysql.Conn, string) bool { return true }

type userData string

func (u userData) Get() *querypb.VTGateCallerID { return &querypb.VTGateCallerID{Username: string(u)} }
