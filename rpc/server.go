package rpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/rs/zerolog"
)

// Server serves one Thrift service on one listener. It runs its own accept
// loop rather than thrift's TSimpleServer, which stops serving silently on
// an accept error and has no connection cap.
//
// Serve runs in one goroutine and each connection in another; Close may be
// called from any goroutine, once or more.
type Server struct {
	cfg   Config
	tcfg  *thrift.TConfiguration
	ln    net.Listener
	proc  thrift.TProcessor
	log   zerolog.Logger
	slots chan struct{}

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Listen binds addr. Call Serve to start accepting.
func Listen(addr string, cfg Config, log zerolog.Logger) (*Server, error) {
	cfg = cfg.withDefaults()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	if cfg.TLS != nil {
		ln = tls.NewListener(ln, cfg.TLS)
	}
	return &Server{
		cfg:   cfg,
		tcfg:  cfg.thrift(cfg.IdleTimeout),
		ln:    ln,
		log:   log,
		slots: make(chan struct{}, cfg.MaxConns),
		conns: make(map[net.Conn]struct{}),
	}, nil
}

// Addr returns the bound "host:port".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve answers calls with proc on accepted connections until Close. Temporary accept errors (such as
// running out of file descriptors) are logged and retried with backoff, so
// the server never stops serving silently.
func (s *Server) Serve(proc thrift.TProcessor) error {
	s.mu.Lock()
	s.proc = proc
	s.mu.Unlock()
	backoff := 5 * time.Millisecond
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if s.isClosed() {
				return nil
			}
			s.log.Warn().Err(err).Dur("retry_in", backoff).Msg("accept failed")
			time.Sleep(backoff) // backoff between retries, not synchronisation
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		select {
		case s.slots <- struct{}{}:
		default:
			s.log.Warn().Str("peer", conn.RemoteAddr().String()).Int("max_conns", s.cfg.MaxConns).
				Msg("connection refused: at connection cap")
			conn.Close()
			continue
		}
		if !s.track(conn) {
			<-s.slots
			conn.Close()
			return nil
		}
		go s.handle(conn)
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *Server) track(conn net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[conn] = struct{}{}
	s.wg.Add(1)
	return true
}

func (s *Server) handle(conn net.Conn) {
	defer func() {
		conn.Close()
		// Free the slot before untracking, so that a connection seen gone
		// has really made room for the next.
		<-s.slots
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
		s.wg.Done()
	}()
	s.mu.Lock()
	proc := s.proc
	s.mu.Unlock()
	if tc, ok := conn.(*tls.Conn); ok {
		// Handshake now, within a deadline, so a refused peer is reported
		// as such rather than as a broken connection on its first call.
		tc.SetDeadline(time.Now().Add(s.cfg.ConnectTimeout + s.cfg.IdleTimeout/10))
		if err := tc.Handshake(); err != nil {
			s.log.Warn().Err(err).Str("peer", conn.RemoteAddr().String()).Msg("TLS handshake refused")
			return
		}
		tc.SetDeadline(time.Time{})
	}
	framed := newFramed(thrift.NewTSocketFromConnConf(conn, s.tcfg), s.tcfg)
	prot := newProtocol(framed, s.tcfg)
	ctx := context.Background()
	for {
		// ok means a reply went out and the stream is in step, even when
		// err reports a handler failure; only !ok ends the connection. A
		// handler's error may itself wrap a transport error from some other
		// connection (a relay that failed), so its type says nothing
		// about this one.
		ok, err := proc.Process(ctx, prot, prot)
		if ok {
			if err != nil {
				s.log.Debug().Err(err).Msg("call failed; error sent to the caller")
			}
			continue
		}
		var te thrift.TTransportException
		var pe thrift.TProtocolException
		switch {
		case err == nil, errors.Is(err, net.ErrClosed), s.isClosed():
			// The server is shutting down and closed the connection itself.
		case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
			// The peer went away mid-call; nothing malformed about it.
		case errors.As(err, &te) && (te.TypeId() == thrift.END_OF_FILE || te.TypeId() == thrift.TIMED_OUT):
			// A closed or idle connection ends normally.
		case errors.As(err, &pe):
			s.log.Warn().Err(err).Str("peer", conn.RemoteAddr().String()).Msg("malformed request; closing connection")
		default:
			s.log.Debug().Err(err).Str("peer", conn.RemoteAddr().String()).Msg("closing connection")
		}
		return
	}
}

// Close stops accepting, closes every open connection and waits for their
// goroutines to finish.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	err := s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// ListenAll binds each address, one Server per service, closing those
// already bound if any fails.
func ListenAll(cfg Config, log zerolog.Logger, addrs ...string) ([]*Server, error) {
	servers := make([]*Server, 0, len(addrs))
	for _, a := range addrs {
		s, err := Listen(a, cfg, log)
		if err != nil {
			for _, done := range servers {
				done.Close()
			}
			return nil, err
		}
		servers = append(servers, s)
	}
	return servers, nil
}
