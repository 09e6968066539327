package mysql

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// rawClient speaks the protocol byte by byte, for what no driver sends
// (COM_FIELD_LIST) or sends well (malformed packets).
type rawClient struct {
	c  net.Conn
	br *bufio.Reader
}

const (
	capProtocol41    = 1 << 9
	capSecure        = 1 << 15
	capPluginAuth    = 1 << 19
	capDeprecateEOF  = 1 << 24
	capMultiStmts    = 1 << 16
	rawClientTimeout = 5 * time.Second
)

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, rawClientTimeout)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(rawClientTimeout))
	return &rawClient{c: c, br: bufio.NewReader(c)}
}

func (r *rawClient) readPacket() (seq byte, payload []byte, err error) {
	var h [4]byte
	if _, err := io.ReadFull(r.br, h[:]); err != nil {
		return 0, nil, err
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	payload = make([]byte, n)
	_, err = io.ReadFull(r.br, payload)
	return h[3], payload, err
}

func (r *rawClient) write(seq byte, payload []byte) error {
	_, err := r.c.Write(appendPacket(nil, seq, payload))
	return err
}

// handshakeResponse is a client's answer to the greeting: protocol 4.1,
// user, a 20-byte auth response for mysql_native_password.
func handshakeResponse(user string, auth []byte, caps uint32) []byte {
	p := binary.LittleEndian.AppendUint32(nil, caps|capProtocol41|capSecure|capPluginAuth)
	p = binary.LittleEndian.AppendUint32(p, 1<<24)
	p = append(p, 45)
	p = append(p, make([]byte, 23)...)
	p = append(p, user...)
	p = append(p, 0, byte(len(auth)))
	p = append(p, auth...)
	p = append(p, "mysql_native_password"...)
	return append(p, 0)
}

// login logs in to an open server (any user, any password) and returns
// the first packet after the handshake response.
func (r *rawClient) login(t testing.TB, caps uint32) {
	t.Helper()
	if _, _, err := r.readPacket(); err != nil {
		t.Fatal(err)
	}
	if err := r.write(1, handshakeResponse("raw", make([]byte, 20), caps)); err != nil {
		t.Fatal(err)
	}
	_, ok, err := r.readPacket()
	if err != nil || len(ok) == 0 || ok[0] != 0 {
		t.Fatalf("login: %q %v", ok, err)
	}
}
