package rpc

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"time"
)

// serverTransport is one server connection's Thrift transport. The
// connection loop reads each request frame whole, under its own deadlines
// and budget, and hands it here; the protocol decodes from it and writes
// the reply into a buffer that Flush sends as one frame in one write.
//
// Used by one goroutine: the connection's.
type serverTransport struct {
	conn         net.Conn
	writeTimeout time.Duration

	in  []byte // the request frame being decoded
	pos int
	out []byte // the reply frame: a 4-byte size, then the body
}

// reuseBytes is the largest frame or reply buffer a connection keeps for
// its next call; larger ones are dropped after use so that an idle
// connection holds little memory.
const reuseBytes = 4 << 10

func newServerTransport(conn net.Conn, writeTimeout time.Duration) *serverTransport {
	return &serverTransport{conn: conn, writeTimeout: writeTimeout, out: make([]byte, 4, 512)}
}

// setFrame makes frame the bytes the protocol reads next.
func (t *serverTransport) setFrame(frame []byte) { t.in, t.pos = frame, 0 }

// Read implements io.Reader over the current frame; past its end it
// returns io.EOF, so a request that claims more than it sent fails cleanly.
func (t *serverTransport) Read(p []byte) (int, error) {
	if t.pos >= len(t.in) {
		return 0, io.EOF
	}
	n := copy(p, t.in[t.pos:])
	t.pos += n
	return n, nil
}

// ReadByte implements io.ByteReader.
func (t *serverTransport) ReadByte() (byte, error) {
	if t.pos >= len(t.in) {
		return 0, io.EOF
	}
	b := t.in[t.pos]
	t.pos++
	return b, nil
}

// RemainingBytes implements thrift.ReadSizeProvider: the unread bytes of
// the current frame.
func (t *serverTransport) RemainingBytes() uint64 { return uint64(len(t.in) - t.pos) }

// Write implements io.Writer into the reply buffer.
func (t *serverTransport) Write(p []byte) (int, error) {
	t.out = append(t.out, p...)
	return len(p), nil
}

// WriteByte implements io.ByteWriter.
func (t *serverTransport) WriteByte(c byte) error {
	t.out = append(t.out, c)
	return nil
}

// WriteString implements thrift's string writer.
func (t *serverTransport) WriteString(s string) (int, error) {
	t.out = append(t.out, s...)
	return len(s), nil
}

// Flush sends the buffered reply as one frame, within writeTimeout, so a
// peer that stops reading cannot hold the connection's goroutine.
func (t *serverTransport) Flush(context.Context) error {
	body := len(t.out) - 4
	if body <= 0 {
		return nil
	}
	binary.BigEndian.PutUint32(t.out, uint32(body))
	t.conn.SetWriteDeadline(time.Now().Add(t.writeTimeout))
	_, err := t.conn.Write(t.out)
	if cap(t.out) > reuseBytes {
		t.out = make([]byte, 4, 512)
	} else {
		t.out = t.out[:4]
	}
	return err
}

// Open implements thrift.TTransport; the connection is already open.
func (t *serverTransport) Open() error { return nil }

// IsOpen implements thrift.TTransport.
func (t *serverTransport) IsOpen() bool { return true }

// Close implements thrift.TTransport by closing the connection.
func (t *serverTransport) Close() error { return t.conn.Close() }
