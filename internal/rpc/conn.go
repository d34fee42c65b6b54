package rpc

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/rs/zerolog"
)

// A server connection is busy while it handshakes, reads a frame or
// serves a call; idle while it waits for the first byte of the next frame;
// evicted once the server closed it, idle, to make room at its cap. Only
// the transition idle -> evicted is made by another goroutine, by CAS, so
// a connection that has begun a call is never evicted mid-call.
const (
	connBusy int32 = iota
	connIdle
	connEvicted
)

// serverConn is one accepted connection.
type serverConn struct {
	conn  net.Conn
	host  string
	state atomic.Int32
	since atomic.Int64 // UnixNano when it last became idle
}

func (c *serverConn) setIdle(now time.Time) {
	c.since.Store(now.UnixNano())
	c.state.Store(connIdle)
}

// setBusy claims the connection for a call; false if it was evicted.
func (c *serverConn) setBusy() bool { return c.state.CompareAndSwap(connIdle, connBusy) }

func (c *serverConn) idleSince() (int64, bool) {
	if c.state.Load() != connIdle {
		return 0, false
	}
	return c.since.Load(), true
}

// Reasons a connection ends that need no further logging.
var (
	errEvicted    = errors.New("closed to make room at the connection cap")
	errIdleClosed = errors.New("idle past the idle timeout")
)

// errFrameTimeout wraps a read that missed FrameTimeout.
type errFrameTimeout struct{ err error }

func (e errFrameTimeout) Error() string { return "frame not finished in time: " + e.err.Error() }
func (e errFrameTimeout) Unwrap() error { return e.err }

// errBadFrame is a frame header the server will not read.
type errBadFrame struct{ size int32 }

func (e errBadFrame) Error() string { return fmt.Sprintf("frame of %d bytes refused", e.size) }

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// serveConn answers calls on one connection until it closes, is evicted,
// misbehaves or the server closes.
func (s *Server) serveConn(c *serverConn) {
	defer func() {
		c.conn.Close()
		s.mu.Lock()
		s.untrackLocked(c)
		s.mu.Unlock()
		s.wg.Done()
	}()
	s.mu.Lock()
	proc := s.proc
	s.mu.Unlock()
	if tc, ok := c.conn.(*tls.Conn); ok {
		// Handshake now, within a deadline, so a refused peer is reported
		// as such rather than as a broken connection on its first call, and
		// a peer that stalls the handshake is cut off.
		tc.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
		if err := tc.Handshake(); err != nil {
			s.log.Warn().Err(err).Str("peer", c.conn.RemoteAddr().String()).Msg("TLS handshake refused")
			return
		}
		tc.SetDeadline(time.Time{})
	}
	br := bufio.NewReaderSize(c.conn, reuseBytes)
	st := newServerTransport(c.conn, s.cfg.FrameTimeout)
	var served *CallCounter
	if s.cfg.Calls != nil {
		served = &s.cfg.Calls.Served
	}
	prot := newServerProtocol(st, s.tcfg, served, proc)
	var spare []byte // a small frame buffer kept for the next call
	ctx := context.Background()
	for {
		size, err := s.readHeader(c, br)
		if err != nil {
			s.connEnded(c, err)
			return
		}
		charge, ok := s.budget.Acquire(frameCharge(size), s.budgetWait(br, size), s.done)
		if !ok {
			if s.isClosed() {
				return
			}
			if err := s.refuseFrame(c, br, prot, size); err != nil {
				s.connEnded(c, err)
				return
			}
			continue
		}
		var frame []byte
		if size <= reuseBytes {
			if spare == nil {
				spare = make([]byte, reuseBytes)
			}
			frame = spare[:0]
		}
		c.conn.SetReadDeadline(time.Now().Add(s.cfg.FrameTimeout))
		frame, err = readBody(br, frame, size)
		if err != nil {
			s.budget.Release(charge)
			s.connEnded(c, readErr(err))
			return
		}
		st.setFrame(frame)
		prot.resetMeter(size)
		// ok means a reply went out and the stream is in step, even when
		// err reports a handler failure; only !ok ends the connection. A
		// handler's error may itself wrap a transport error from some other
		// connection (a relay that failed), so its type says nothing
		// about this one.
		ok, err = proc.Process(ctx, prot, prot)
		st.setFrame(nil)
		s.budget.Release(charge)
		if ok {
			if err != nil {
				s.log.Debug().Err(err).Msg("call failed; error sent to the caller")
			}
			continue
		}
		s.connEnded(c, err)
		return
	}
}

// readBody reads a frame body of size bytes into buf (grown as needed).
// Memory grows with the bytes that actually arrive, doubling up to size,
// so a header that claims a large frame and sends nothing costs nothing
// but its budget charge.
func readBody(br *bufio.Reader, buf []byte, size int) ([]byte, error) {
	if cap(buf) < min(size, growFrom) {
		buf = make([]byte, 0, min(size, growFrom))
	}
	for len(buf) < size {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(2*cap(buf), size))
			copy(grown, buf)
			buf = grown
		}
		n, err := br.Read(buf[len(buf):min(cap(buf), size)])
		buf = buf[:len(buf)+n]
		if err != nil && len(buf) < size {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return buf, nil
}

// growFrom is the first allocation for a frame body larger than the
// connection's spare buffer.
const growFrom = 64 << 10

// readErr marks a deadline miss while a frame was being read.
func readErr(err error) error {
	if isTimeout(err) {
		return errFrameTimeout{err}
	}
	return err
}

// readHeader waits, idle, for the next frame, then reads its header within
// FrameTimeout of its first byte.
func (s *Server) readHeader(c *serverConn, br *bufio.Reader) (int, error) {
	if br.Buffered() == 0 {
		now := time.Now()
		if s.cfg.IdleTimeout > 0 {
			c.conn.SetReadDeadline(now.Add(s.cfg.IdleTimeout))
		} else {
			c.conn.SetReadDeadline(time.Time{})
		}
		c.setIdle(now)
		_, err := br.Peek(1)
		if !c.setBusy() {
			return 0, errEvicted
		}
		if err != nil {
			if s.cfg.IdleTimeout > 0 && isTimeout(err) {
				// Close before anything counts it, so that whoever sees
				// the count also sees the connection closed.
				c.conn.Close()
				return 0, errIdleClosed
			}
			return 0, err
		}
	}
	c.conn.SetReadDeadline(time.Now().Add(s.cfg.FrameTimeout))
	var hdr [4]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return 0, readErr(err)
	}
	size := int32(binary.BigEndian.Uint32(hdr[:]))
	if size <= 0 || size > s.cfg.MaxFrameBytes {
		return 0, errBadFrame{size}
	}
	return int(size), nil
}

// onewayHead is how much of a frame budgetWait peeks at to find its
// message type.
const onewayHead = 256

// budgetWait is how long a frame may wait for decode memory. A oneway call
// (an executor's tasksFinished, say) cannot be told it was refused, so it
// waits as long as the server runs rather than be dropped; the others wait
// BudgetWait and are then refused with an error their caller sees.
func (s *Server) budgetWait(br *bufio.Reader, size int) time.Duration {
	head, _ := br.Peek(min(size, onewayHead))
	if t, ok := messageType(head); ok && t == thrift.ONEWAY {
		return math.MaxInt64
	}
	return s.cfg.BudgetWait
}

// messageType reads a binary-protocol message header's type from the first
// bytes of a frame, in the strict or the old form.
func messageType(head []byte) (thrift.TMessageType, bool) {
	if len(head) < 4 {
		return 0, false
	}
	v := int32(binary.BigEndian.Uint32(head))
	if v < 0 {
		if uint32(v)&0xffff0000 != 0x80010000 {
			return 0, false
		}
		return thrift.TMessageType(v & 0xff), true
	}
	if int(v)+4 >= len(head) {
		return 0, false
	}
	return thrift.TMessageType(head[4+v]), true
}

// refuseFrame reads past a frame that could not get decode memory, without
// keeping it, and answers its call with an application exception, so the
// caller learns the server is busy and the stream stays in step.
func (s *Server) refuseFrame(c *serverConn, br *bufio.Reader, prot thrift.TProtocol, size int) error {
	s.stats.budgetRefused.Add(1)
	inUse, limit := s.budget.InUse(), s.budget.Limit()
	s.budgetLog.event(s.log, time.Now(), "requests refused: decode memory budget busy", func(e *zerolog.Event) {
		e.Int("frame_bytes", size).Int64("budget_in_use", inUse).Int64("budget", limit).
			Str("last_peer", c.conn.RemoteAddr().String())
	})
	c.conn.SetReadDeadline(time.Now().Add(s.cfg.FrameTimeout))
	head := make([]byte, min(size, onewayHead))
	if _, err := io.ReadFull(br, head); err != nil {
		return readErr(err)
	}
	if _, err := io.CopyN(io.Discard, br, int64(size-len(head))); err != nil {
		return readErr(err)
	}
	mb := thrift.NewTMemoryBuffer()
	mb.Write(head)
	ctx := context.Background()
	name, typ, seq, err := thrift.NewTBinaryProtocolConf(mb, s.tcfg).ReadMessageBegin(ctx)
	if err != nil {
		return fmt.Errorf("refused frame has no readable message header: %w", err)
	}
	if typ == thrift.ONEWAY {
		return nil // not reached: oneway calls wait; see budgetWait
	}
	exc := thrift.NewTApplicationException(thrift.INTERNAL_ERROR, fmt.Sprintf(
		"server busy: a %d-byte %s request waited %v for decode memory (%d of %d bytes in use); retry later",
		size, name, s.cfg.BudgetWait, inUse, limit))
	if err := prot.WriteMessageBegin(ctx, name, thrift.EXCEPTION, seq); err != nil {
		return err
	}
	if err := exc.Write(ctx, prot); err != nil {
		return err
	}
	if err := prot.WriteMessageEnd(ctx); err != nil {
		return err
	}
	return prot.Flush(ctx)
}

// connEnded counts and logs why a connection ended. Conditions a peer can
// repeat at will are logged at most once per interval.
func (s *Server) connEnded(c *serverConn, err error) {
	peer := c.conn.RemoteAddr().String()
	var te thrift.TTransportException
	var pe thrift.TProtocolException
	var ft errFrameTimeout
	var bf errBadFrame
	switch {
	case errors.Is(err, errEvicted):
	case errors.Is(err, errIdleClosed):
		s.stats.idleClosed.Add(1)
	case err == nil, errors.Is(err, net.ErrClosed), s.isClosed():
		// The server is shutting down and closed the connection itself.
	case errors.As(err, &ft):
		s.stats.frameTimeouts.Add(1)
		s.frameLog.event(s.log, time.Now(), "connections closed: a frame was not finished within the frame timeout", func(e *zerolog.Event) {
			e.Str("last_peer", peer).Dur("frame_timeout", s.cfg.FrameTimeout)
		})
	case errors.As(err, &bf):
		s.malformedLog.event(s.log, time.Now(), "connections closed: frame size out of range", func(e *zerolog.Event) {
			e.Str("last_peer", peer).Int32("frame_bytes", bf.size).Int32("max_frame_bytes", s.cfg.MaxFrameBytes)
		})
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		// The peer closed or went away, between calls or mid-call.
	case errors.As(err, &te) && te.TypeId() == thrift.END_OF_FILE:
	case errors.As(err, &pe):
		s.malformedLog.event(s.log, time.Now(), "connections closed: malformed request", func(e *zerolog.Event) {
			e.Err(err).Str("last_peer", peer)
		})
	default:
		s.log.Debug().Err(err).Str("peer", peer).Msg("closing connection")
	}
}
