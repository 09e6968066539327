package mysql

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// The packets of the client's stream:
//
//	| payload length (3B, little endian) | sequence (1B) | payload |
//
// A payload of 0xffffff bytes is continued by the next packet; a command is
// the payload of one packet or of such a chain. conn follows this framing
// on what the library reads, to tell the wait for a command (the idle
// timeout) from the middle of one (the read timeout), to bound a command's
// size (max_allowed_packet), and to answer COM_FIELD_LIST.
const (
	packetHeader   = 4
	maxPayload     = 0xffffff
	comFieldList   = 0x04
	errPacketByte  = 0xff
	eofPacketByte  = 0xfe
	erConCount     = 1040
	erNetTooLarge  = 1153
	stateConCount  = "08004"
	stateNetTooBig = "08S01"
)

// errTooLarge ends a connection whose command passed max_allowed_packet.
var errTooLarge = errors.New("command larger than max_allowed_packet")

// limitListener admits at most Options.MaxConnections connections at a
// time; the others get error 1040 and are closed.
type limitListener struct {
	net.Listener
	s *Server
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if n := l.s.open.Add(1); n > int64(l.s.o.MaxConnections) {
			l.s.open.Add(-1)
			l.s.metrics.refused.Inc()
			l.s.logf("mysql connection from %s refused: too many connections (%d)", c.RemoteAddr(), l.s.o.MaxConnections)
			go func() {
				_ = c.SetWriteDeadline(time.Now().Add(time.Second))
				_, _ = c.Write(errPacket(0, erConCount, stateConCount, "Too many connections"))
				_ = c.Close()
			}()
			continue
		}
		cn := &conn{Conn: c, s: l.s}
		l.s.track(cn, true)
		return cn, nil
	}
}

// errPacket is an ERR packet with sequence number seq.
func errPacket(seq byte, code uint16, state, msg string) []byte {
	payload := make([]byte, 0, 9+len(msg))
	payload = append(payload, errPacketByte, byte(code), byte(code>>8), '#')
	payload = append(payload, state...)
	payload = append(payload, msg...)
	return appendPacket(nil, seq, payload)
}

func appendPacket(dst []byte, seq byte, payload []byte) []byte {
	n := len(payload)
	dst = append(dst, byte(n), byte(n>>8), byte(n>>16), seq)
	return append(dst, payload...)
}

// conn is one admitted connection: deadlines on every read and write, and
// the framing of the client's commands once the handshake is done.
type conn struct {
	net.Conn
	s      *Server
	closed sync.Once

	// ready is set (by the library's goroutine, ConnectionReady) once the
	// handshake is done: from then on the stream is read packet by packet.
	ready atomic.Bool
	state *connState

	pending []byte // bytes read ahead, to hand to the library
	remain  int    // payload bytes of the current packet not yet read
	cont    bool   // the current packet is continued by the next one
	size    int64  // payload bytes of the current command so far
	rerr    error  // a sticky read error

	out outFraming // the server's stream
}

// outFraming follows the packets of the server's stream during a command.
// A rowWriter hands the library packets it framed itself, whose sequence
// numbers the library does not count: from then on, until the next
// command, every packet is numbered on from the one before, which the
// protocol requires of a command's answer.
type outFraming struct {
	hdr      int  // header bytes of the current packet seen (0..4)
	length   int  // the current packet's payload length, as far as seen
	remain   int  // payload bytes of the current packet still to come
	next     byte // the sequence number the next packet takes
	seen     bool // a packet of this command has been seen (next is known)
	renumber atomic.Bool
}

// track follows (and, once asked, renumbers) the bytes written.
func (o *outFraming) track(p []byte) {
	for len(p) > 0 {
		if o.remain > 0 {
			k := min(o.remain, len(p))
			o.remain -= k
			p = p[k:]
			continue
		}
		switch o.hdr {
		case 0:
			o.length = int(p[0])
		case 1:
			o.length |= int(p[0]) << 8
		case 2:
			o.length |= int(p[0]) << 16
		case 3:
			if o.seen && o.renumber.Load() {
				p[0] = o.next
			}
			o.next, o.seen = p[0]+1, true
		}
		p = p[1:]
		if o.hdr++; o.hdr == packetHeader {
			o.hdr, o.remain = 0, o.length
		}
	}
}

// reset forgets the previous command's answer.
func (o *outFraming) reset() {
	o.hdr, o.length, o.remain, o.next, o.seen = 0, 0, 0, 0, false
	o.renumber.Store(false)
}

func (c *conn) Close() error {
	err := net.ErrClosed
	c.closed.Do(func() {
		c.s.open.Add(-1)
		err = c.Conn.Close()
		c.s.track(c, false)
	})
	return err
}

// cut closes the socket, which ends the connection's reads and writes;
// the library's own Close, once its goroutine has unwound, frees the
// connection's place.
func (c *conn) cut() { _ = c.Conn.Close() }

func (c *conn) Write(p []byte) (int, error) {
	if c.ready.Load() {
		c.out.track(p)
	}
	if c.s.o.WriteTimeout > 0 {
		_ = c.Conn.SetWriteDeadline(time.Now().Add(c.s.o.WriteTimeout))
	}
	return c.Conn.Write(p)
}

func (c *conn) deadline(d time.Duration) {
	if d > 0 {
		_ = c.Conn.SetReadDeadline(time.Now().Add(d))
	} else {
		_ = c.Conn.SetReadDeadline(time.Time{})
	}
}

func (c *conn) Read(p []byte) (int, error) {
	if !c.ready.Load() {
		c.deadline(c.s.o.ReadTimeout)
		return c.Conn.Read(p)
	}
	for len(c.pending) == 0 && c.remain == 0 {
		if c.rerr != nil {
			return 0, c.rerr
		}
		if err := c.nextPacket(); err != nil {
			c.rerr = err
			return 0, err
		}
	}
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	c.deadline(c.s.o.ReadTimeout)
	if len(p) > c.remain {
		p = p[:c.remain]
	}
	n, err := c.Conn.Read(p)
	c.remain -= n
	return n, err
}

// nextPacket reads the next packet's header (and a command's first byte)
// into pending, or answers a COM_FIELD_LIST itself.
func (c *conn) nextPacket() error {
	var hdr [packetHeader + 1]byte
	if c.cont {
		c.deadline(c.s.o.ReadTimeout)
	} else {
		c.size = 0
		c.deadline(c.s.o.IdleTimeout)
	}
	if _, err := io.ReadFull(c.Conn, hdr[:1]); err != nil {
		return err
	}
	c.deadline(c.s.o.ReadTimeout)
	if _, err := io.ReadFull(c.Conn, hdr[1:packetHeader]); err != nil {
		return err
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	command := !c.cont
	if command {
		// The library has written all it answers to the previous
		// command: a new one numbers its packets afresh.
		c.out.reset()
	}
	c.cont = n == maxPayload
	c.size += int64(n)
	if c.size > c.s.o.MaxAllowedPacket {
		_, _ = c.Conn.Write(errPacket(hdr[3]+1, erNetTooLarge, stateNetTooBig, "Got a packet bigger than 'max_allowed_packet' bytes"))
		return errTooLarge
	}
	if !command || n == 0 {
		c.pending = append(c.pending[:0], hdr[:packetHeader]...)
		c.remain = n
		return nil
	}
	if _, err := io.ReadFull(c.Conn, hdr[packetHeader:]); err != nil {
		return err
	}
	if hdr[packetHeader] == comFieldList && !c.cont && c.state != nil {
		body := make([]byte, n-1)
		if _, err := io.ReadFull(c.Conn, body); err != nil {
			return err
		}
		_, err := c.Conn.Write(c.s.fieldList(c.state, hdr[3]+1, body))
		return err
	}
	c.pending = append(c.pending[:0], hdr[:]...)
	c.remain = n - 1
	return nil
}

// lenenc appends a length-encoded integer.
func lenenc(dst []byte, n uint64) []byte {
	switch {
	case n < 251:
		return append(dst, byte(n))
	case n < 1<<16:
		return append(dst, 0xfc, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(dst, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	}
	dst = append(dst, 0xfe)
	return binary.LittleEndian.AppendUint64(dst, n)
}

func lenencString(dst []byte, s string) []byte {
	return append(lenenc(dst, uint64(len(s))), s...)
}
