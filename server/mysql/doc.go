// Package mysql owns the MySQL-protocol front end of `rowttl serve`, the
// one a Doris FE offers on port 9030: the handshake and authentication
// (mysql_native_password and caching_sha2_password) against the server's
// user, one sql.Session per connection, COM_QUERY with multi-statements,
// COM_INIT_DB, COM_PING, COM_QUIT, COM_FIELD_LIST, server-side prepared
// statements, result sets streamed batch by batch from Session.Query with
// MySQL column types, ERR packets with a MySQL code and SQLSTATE, the
// protocol-level statements clients send (SET NAMES, SET TRANSACTION, SHOW
// WARNINGS, COMMIT, ...), KILL [QUERY], connection limits and timeouts,
// and its metrics. What a session can answer (SELECT @@var, DATABASE(),
// current_user(), SHOW VARIABLES, SHOW PROCESSLIST) the connection's
// session answers, told the server's variables, the client's user and
// host and the handshake's connection id, so that a connection and the
// in-process shell agree. Serve returns once every connection's statement
// has unwound and released its batches. A statement's scans run on one
// goroutine once the statements running and the loads computing (the
// slots held in Options.LoadWorkers) outnumber the processors.
//
// The wire protocol is vitess.io/vitess/go/mysql's; this package supplies
// its Handler and AuthServer, and wraps each connection to enforce the
// limits, to answer COM_FIELD_LIST, which the library does not, and to
// number the packets of a text-protocol result whose rows it encodes
// itself, straight from the Arrow arrays into one buffer (the library
// allocates a value per field and takes a lock per row).
//
// It must never hold a whole result set (rows go to the client as each
// batch is computed), never reword an engine error (the SPEC §5 text is
// the ERR packet's message as it is), and never touch a table except
// through a sql.Session: a malformed packet, a wrong password or a client
// that vanishes mid-result closes that connection only and changes no
// table.
//
// # Choices where MySQL and Doris leave room
//
//   - BOOLEAN is TINYINT(1) on the wire, as in Doris: 1 and 0 where the
//     shell prints true and false. TIMESTAMPTZ and TIMESTAMP_NS values are
//     strings (VAR_STRING) in the shell's format, offset included.
//   - Without a configured user the server accepts any user and password,
//     as the HTTP side accepts any request.
//   - Transactions: autocommit is always on; BEGIN and START TRANSACTION
//     are refused, COMMIT and ROLLBACK succeed with nothing to do.
//   - KILL QUERY id cancels the statement running on connection id (the
//     connection stays); KILL id also closes it. Only the server's user
//     exists, so any connection may kill any other.
package mysql
