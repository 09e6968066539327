package mysql

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// TestPutLenenc: a value's length before it, in as many bytes as it
// takes, the value moved behind it unchanged.
func TestPutLenenc(t *testing.T) {
	for _, l := range []int{0, 1, 250, 251, 252, 1<<16 - 1, 1 << 16, 1<<24 - 1, 1 << 24} {
		val := bytes.Repeat([]byte{'v'}, l)
		val = append(val[:0:0], val...)
		if l > 0 {
			val[0], val[l-1] = 'a', 'z'
		}
		buf := append([]byte("head"), 0)
		buf = append(buf, val...)
		buf = putLenenc(buf, 4, l)
		want := append(lenenc([]byte("head"), uint64(l)), val...)
		if !bytes.Equal(buf, want) {
			t.Errorf("length %d: prefix % x, want % x", l, buf[4:min(len(buf), 13)], want[4:min(len(want), 13)])
		}
	}
}

// TestSplitPacket: a payload of 0xffffff bytes or more is cut into
// packets of 0xffffff bytes, ending with a shorter one (empty when the
// payload is a multiple).
func TestSplitPacket(t *testing.T) {
	for _, c := range []struct{ payload, packets int }{{maxPayload, 2}, {maxPayload + 1, 2}, {2 * maxPayload, 3}, {2*maxPayload + 7, 3}} {
		buf := append([]byte("xy"), 0, 0, 0, 0)
		payload := make([]byte, c.payload)
		for i := range payload {
			payload[i] = byte(i % 251)
		}
		buf = append(buf, payload...)
		out := splitPacket(buf, 2)
		if string(out[:2]) != "xy" {
			t.Fatalf("payload %d: the bytes before it changed", c.payload)
		}
		var got []byte
		rest := out[2:]
		for i := 0; i < c.packets; i++ {
			l := int(rest[0]) | int(rest[1])<<8 | int(rest[2])<<16
			if (i < c.packets-1) != (l == maxPayload) {
				t.Fatalf("payload %d: packet %d has length %d", c.payload, i, l)
			}
			got = append(got, rest[4:4+l]...)
			rest = rest[4+l:]
		}
		if len(rest) != 0 || !bytes.Equal(got, payload) {
			t.Fatalf("payload %d: %d bytes read back, %d left over", c.payload, len(got), len(rest))
		}
	}
}

// TestOutFraming: the packets written, however the writes cut them, are
// followed; once asked, every packet after the first is numbered on
// from the one before; a reset forgets the command.
func TestOutFraming(t *testing.T) {
	stream := appendPacket(nil, 5, []byte{1})
	stream = appendPacket(stream, 0, bytes.Repeat([]byte{'x'}, 300))
	stream = appendPacket(stream, 0, nil)
	stream = appendPacket(stream, 2, []byte{0xfe, 0, 0})
	for cut := 1; cut < 12; cut++ {
		for _, renumber := range []bool{false, true} {
			var o outFraming
			o.renumber.Store(renumber)
			s := append([]byte(nil), stream...)
			for p := s; len(p) > 0; {
				k := min(cut, len(p))
				o.track(p[:k])
				p = p[k:]
			}
			seqs := []byte{s[3], s[5+3], s[5+304+3], s[5+304+4+3]}
			want := []byte{5, 0, 0, 2}
			if renumber {
				want = []byte{5, 6, 7, 8}
			}
			if !bytes.Equal(seqs, want) || o.next != want[3]+1 {
				t.Fatalf("writes of %d bytes, renumbering %v: sequences %v, next %d", cut, renumber, seqs, o.next)
			}
			o.reset()
			if o.seen || o.renumber.Load() || o.hdr != 0 || o.remain != 0 {
				t.Fatalf("reset kept %+v", &o)
			}
		}
	}
}

// TestRowsWrittenDirectly: the rows the server writes itself read back
// exactly through go-sql-driver (which checks every packet's sequence
// number): values whose lengths take 1, 3 and 4 bytes, NULLs, rows of
// more than one packet, a second result set and an error after rows in
// the same multi-statement query, and the prepared statements' binary
// protocol, which the library writes, giving the same values.
func TestRowsWrittenDirectly(t *testing.T) {
	ts := startServer(t, Options{})
	db := ts.open(t, "multiStatements=true")
	db.SetMaxOpenConns(1)
	mustExec(t, db, "CREATE TABLE v (id BIGINT, s STRING, d DOUBLE) DUPLICATE KEY(id)")
	lengths := []int{0, 1, 250, 251, 65535, 65536, maxPayload - 7, maxPayload + 100}
	for i, l := range lengths {
		mustExec(t, db, fmt.Sprintf("INSERT INTO v VALUES (%d, '%s', NULL)", i, strings.Repeat(string(rune('a'+i)), l)))
	}
	mustExec(t, db, "INSERT INTO v VALUES (100, NULL, 2.5), (101, 'tab\there', -0.0)")
	check := func(rows *sql.Rows, what string) {
		t.Helper()
		n := 0
		for rows.Next() {
			var id int64
			var s sql.NullString
			var d sql.NullFloat64
			if err := rows.Scan(&id, &s, &d); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			switch {
			case id < int64(len(lengths)):
				if s.String != strings.Repeat(string(rune('a'+id)), lengths[id]) || d.Valid {
					t.Errorf("%s: row %d: %d bytes, d %v", what, id, len(s.String), d)
				}
			case id == 100:
				if s.Valid || d.Float64 != 2.5 {
					t.Errorf("%s: row 100: %v %v", what, s, d)
				}
			case id == 101:
				if s.String != "tab\there" || !d.Valid {
					t.Errorf("%s: row 101: %v %v", what, s, d)
				}
			}
			n++
		}
		if err := rows.Err(); err != nil || n != len(lengths)+2 {
			t.Fatalf("%s: %d rows: %v", what, n, err)
		}
	}
	rows, err := db.Query("SELECT id, s, d FROM v ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	check(rows, "text protocol")
	rows.Close()
	rows, err = db.Query("SELECT id, s, d FROM v WHERE id >= ? ORDER BY id", 0)
	if err != nil {
		t.Fatal(err)
	}
	check(rows, "binary protocol")
	rows.Close()

	// A result, another, then one failing after its first rows: the
	// packets after the server's own rows are numbered after them.
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn, "CREATE TABLE w (id BIGINT, s STRING) DUPLICATE KEY(id)")
	mustExec(t, conn, "INSERT INTO w VALUES (0, '1'), (1, '2')")
	for n := 2; n < 1<<17; n *= 2 {
		mustExec(t, conn, fmt.Sprintf("INSERT INTO w SELECT id + %d, s FROM w", n))
	}
	mustExec(t, conn, "INSERT INTO w VALUES (-1, 'bad')")
	rows, err = conn.QueryContext(ctx, "SELECT id, s, d FROM v ORDER BY id; SELECT count(*) FROM v; SELECT CAST(s AS INT) FROM w")
	if err != nil {
		t.Fatal(err)
	}
	check(rows, "first result")
	if !rows.NextResultSet() || !rows.Next() {
		t.Fatalf("no second result: %v", rows.Err())
	}
	var count int
	if err := rows.Scan(&count); err != nil || count != len(lengths)+2 {
		t.Fatalf("count %d: %v", count, err)
	}
	if !rows.NextResultSet() {
		t.Fatalf("no third result: %v", rows.Err())
	}
	before := 0
	for rows.Next() {
		before++
	}
	me := mysqlErr(t, rows.Err(), 1105)
	if !strings.Contains(me.Message, "value bad to INT") || before == 0 {
		t.Errorf("the failing cast's error after %d rows: %q", before, me.Message)
	}
	rows.Close()
	var one int
	if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("the connection after the error: %d %v", one, err)
	}
}
