package rpc

import (
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/rs/zerolog"
)

// Server serves one Thrift service on one listener. It runs its own accept
// loop rather than thrift's TSimpleServer, which stops serving silently on
// an accept error and has no connection cap, and it applies the
// connection policy described in the package comment.
//
// Serve runs in one goroutine and each connection in another; Close and
// Stats may be called from any goroutine, Close once or more.
type Server struct {
	cfg    Config
	tcfg   *thrift.TConfiguration
	ln     net.Listener
	proc   thrift.TProcessor
	log    zerolog.Logger
	budget *Budget
	done   chan struct{} // closed by Close; wakes budget waiters

	mu     sync.Mutex
	conns  map[*serverConn]struct{}
	byHost map[string]int
	closed bool
	wg     sync.WaitGroup

	stats                                                        serverCounters
	hostLog, capLog, evictLog, budgetLog, frameLog, malformedLog rateLog
}

// serverCounters are a Server's event counts.
type serverCounters struct {
	refusedHost, refusedCap, evicted, idleClosed, frameTimeouts, budgetRefused atomic.Int64
}

// Stats is a snapshot of a Server's connections and refusals, for metrics
// and tests.
type Stats struct {
	// Open is the number of connections being served.
	Open int
	// RefusedPerHost and RefusedAtCap count connections refused at the
	// per-host cap and at the global cap with no idle connection to close.
	RefusedPerHost, RefusedAtCap int64
	// Evicted counts idle connections closed at the global cap to admit a
	// new one; IdleClosed those closed by the opt-in IdleTimeout.
	Evicted, IdleClosed int64
	// FrameTimeouts counts connections closed because a frame, once
	// begun, was not finished within FrameTimeout.
	FrameTimeouts int64
	// BudgetRefused counts requests refused because decode memory stayed
	// taken for BudgetWait.
	BudgetRefused int64
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
	budget := cfg.Budget
	if budget == nil {
		budget = NewBudget(cfg.MemoryBudget)
	}
	return &Server{
		cfg:    cfg,
		tcfg:   cfg.thrift(0),
		ln:     ln,
		log:    log,
		budget: budget,
		done:   make(chan struct{}),
		conns:  make(map[*serverConn]struct{}),
		byHost: make(map[string]int),
	}, nil
}

// Addr returns the bound "host:port".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Stats returns a snapshot of the server's connection counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	open := len(s.conns)
	s.mu.Unlock()
	return Stats{
		Open:           open,
		RefusedPerHost: s.stats.refusedHost.Load(),
		RefusedAtCap:   s.stats.refusedCap.Load(),
		Evicted:        s.stats.evicted.Load(),
		IdleClosed:     s.stats.idleClosed.Load(),
		FrameTimeouts:  s.stats.frameTimeouts.Load(),
		BudgetRefused:  s.stats.budgetRefused.Load(),
	}
}

// Serve answers calls with proc on accepted connections until Close.
// Temporary accept errors (such as running out of file descriptors) are
// logged and retried with backoff, so the server never stops serving
// silently.
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
		sc, err := s.admit(conn)
		if err == errServerClosed {
			conn.Close()
			return nil
		}
		if err != nil {
			conn.Close()
			continue
		}
		go s.serveConn(sc)
	}
}

var errServerClosed = fmt.Errorf("rpc server closed")

// errRefused means admit turned a connection away; the reason is logged
// and counted there.
var errRefused = fmt.Errorf("connection refused")

// remoteHost is the key of the per-host cap: the peer's IP.
func remoteHost(conn net.Conn) string {
	addr := conn.RemoteAddr()
	if ta, ok := addr.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	if h, _, err := net.SplitHostPort(addr.String()); err == nil {
		return h
	}
	return addr.String()
}

// admit tracks a new connection, or refuses it at the per-host cap, or at
// the global cap when no idle connection can be closed to make room.
func (s *Server) admit(conn net.Conn) (*serverConn, error) {
	host := remoteHost(conn)
	now := time.Now()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errServerClosed
	}
	if s.byHost[host] >= s.cfg.MaxConnsPerHost {
		s.mu.Unlock()
		s.stats.refusedHost.Add(1)
		s.hostLog.event(s.log, now, "connections refused: one host at its connection cap", func(e *zerolog.Event) {
			e.Str("host", host).Int("max_conns_per_host", s.cfg.MaxConnsPerHost)
		})
		return nil, errRefused
	}
	var victim *serverConn
	if len(s.conns) >= s.cfg.MaxConns {
		victim = s.evictLocked()
		if victim == nil {
			s.mu.Unlock()
			s.stats.refusedCap.Add(1)
			s.capLog.event(s.log, now, "connections refused: at the connection cap and none idle", func(e *zerolog.Event) {
				e.Str("last_peer", conn.RemoteAddr().String()).Int("max_conns", s.cfg.MaxConns)
			})
			return nil, errRefused
		}
	}
	sc := &serverConn{conn: conn, host: host}
	s.conns[sc] = struct{}{}
	s.byHost[host]++
	s.wg.Add(1)
	s.mu.Unlock()
	if victim != nil {
		s.stats.evicted.Add(1)
		victim.conn.Close()
		s.evictLog.event(s.log, now, "idle connections closed to admit new ones: at the connection cap (overload)", func(e *zerolog.Event) {
			e.Int("max_conns", s.cfg.MaxConns).Str("closed_peer", victim.conn.RemoteAddr().String())
		})
	}
	return sc, nil
}

// evictLocked picks the connection idle the longest, marks it evicted and
// untracks it; its goroutine sees the mark or the closed connection and
// ends. It returns nil when no connection is idle. Called with s.mu held.
func (s *Server) evictLocked() *serverConn {
	for range 3 { // a candidate may turn busy under us; try the next
		var oldest *serverConn
		var oldestSince int64
		for c := range s.conns {
			if since, ok := c.idleSince(); ok && (oldest == nil || since < oldestSince) {
				oldest, oldestSince = c, since
			}
		}
		if oldest == nil {
			return nil
		}
		if oldest.state.CompareAndSwap(connIdle, connEvicted) {
			s.untrackLocked(oldest)
			return oldest
		}
	}
	return nil
}

// untrackLocked forgets c; false if it was already forgotten (evicted).
func (s *Server) untrackLocked(c *serverConn) bool {
	if _, ok := s.conns[c]; !ok {
		return false
	}
	delete(s.conns, c)
	if s.byHost[c.host]--; s.byHost[c.host] <= 0 {
		delete(s.byHost, c.host)
	}
	return true
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
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
	close(s.done)
	err := s.ln.Close()
	for c := range s.conns {
		c.conn.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// ListenAll binds each address, one Server per service, closing those
// already bound if any fails. The servers share one decode Budget unless
// cfg names one.
func ListenAll(cfg Config, log zerolog.Logger, addrs ...string) ([]*Server, error) {
	if cfg.Budget == nil {
		cfg.Budget = NewBudget(cfg.withDefaults().MemoryBudget)
	}
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

// Add returns the sum of two snapshots, for a daemon serving several
// services.
func (a Stats) Add(b Stats) Stats {
	return Stats{
		Open:           a.Open + b.Open,
		RefusedPerHost: a.RefusedPerHost + b.RefusedPerHost,
		RefusedAtCap:   a.RefusedAtCap + b.RefusedAtCap,
		Evicted:        a.Evicted + b.Evicted,
		IdleClosed:     a.IdleClosed + b.IdleClosed,
		FrameTimeouts:  a.FrameTimeouts + b.FrameTimeouts,
		BudgetRefused:  a.BudgetRefused + b.BudgetRefused,
	}
}
