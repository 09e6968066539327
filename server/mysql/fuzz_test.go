package mysql

import (
	"database/sql"
	"io"
	"net"
	"testing"
	"time"
)

// fuzzServer is one open server for all the inputs of a fuzz target, with
// a canary table whose rows must survive every input.
func fuzzServer(f *testing.F) (*testServer, *sql.DB) {
	ts := startServer(f, Options{User: "-", ReadTimeout: time.Second, IdleTimeout: time.Second})
	db, err := sql.Open("mysql", ts.dsn("x", "", ""))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	mustExec(f, db, "CREATE TABLE canary (id BIGINT)")
	mustExec(f, db, "INSERT INTO canary VALUES (1), (2), (3)")
	return ts, db
}

func checkCanary(t *testing.T, db *sql.DB) {
	t.Helper()
	if n := count(t, db, "SELECT count(*) FROM canary"); n != 3 {
		t.Fatalf("canary has %d rows", n)
	}
}

// drain reads what the server answers until it closes the connection or
// stops talking.
func drain(r *rawClient) {
	// The end of the input: the server reads EOF after the last command.
	_ = r.c.(*net.TCPConn).CloseWrite()
	_ = r.c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, _ = io.Copy(io.Discard, r.c)
	r.c.Close()
}

// FuzzHandshake sends arbitrary bytes as the client's handshake response:
// the connection fails or logs in, and the server serves on.
func FuzzHandshake(f *testing.F) {
	ts, db := fuzzServer(f)
	f.Add(handshakeResponse("root", make([]byte, 20), 0))
	f.Add(handshakeResponse("", nil, capMultiStmts))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1})
	f.Add(handshakeResponse("root", make([]byte, 20), 0)[:12])
	f.Fuzz(func(t *testing.T, data []byte) {
		r := dialRaw(t, ts.addr)
		if _, _, err := r.readPacket(); err != nil {
			t.Fatal(err)
		}
		_ = r.write(1, data)
		drain(r)
		checkCanary(t, db)
	})
}

// FuzzCommands sends arbitrary bytes after a login, as packets: commands,
// malformed ones, lengths that lie, continued packets that never end.
func FuzzCommands(f *testing.F) {
	ts, db := fuzzServer(f)
	pkt := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = appendPacket(out, 0, p)
		}
		return out
	}
	f.Add(pkt([]byte("\x03SELECT 1")))
	f.Add(pkt([]byte("\x03SELECT * FROM canary; SELECT @@version")))
	f.Add(pkt([]byte("\x04canary\x00")))
	f.Add(pkt([]byte("\x04")))
	f.Add(pkt([]byte("\x02default")))
	f.Add(pkt([]byte("\x0e"), []byte("\x01")))
	f.Add(pkt([]byte("\x16SELECT ? + ?")))
	f.Add(pkt([]byte("\x16SELECT ?"), []byte("\x17\x01\x00\x00\x00\x00\x01\x00\x00\x00\x00\x01\x08\x00\x02\x00\x00\x00\x00\x00\x00\x00")))
	f.Add(pkt([]byte("\x17\xff\xff\xff\xff")))
	f.Add(pkt([]byte("\x19\x01\x00\x00\x00")))
	f.Add(pkt([]byte("\x1a\x01\x00\x00\x00")))
	f.Add(pkt([]byte("\x1b\x00\x00")))
	f.Add(pkt([]byte("\x1f")))
	f.Add(pkt([]byte("\x11root\x00")))
	f.Add(pkt([]byte("\x03KILL QUERY 999")))
	f.Add([]byte{0xff, 0xff, 0xff, 0, 3, 'S'})
	f.Add([]byte{5, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := dialRaw(t, ts.addr)
		r.login(t, capMultiStmts|capDeprecateEOF)
		_, _ = r.c.Write(data)
		drain(r)
		checkCanary(t, db)
	})
}
