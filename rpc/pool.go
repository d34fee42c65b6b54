package rpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
)

// maxIdlePerAddr bounds the idle connections a Pool keeps to one peer.
const maxIdlePerAddr = 64

// Pool keeps Thrift clients of one service type to many peers. Thrift
// clients are not safe for concurrent calls, so a Pool hands each call its
// own connection and returns it afterwards. Safe for concurrent use.
type Pool[C any] struct {
	cfg       Config
	tcfg      *thrift.TConfiguration
	newClient func(thrift.TClient) C

	mu     sync.Mutex
	idle   map[string][]*pooled[C]
	closed bool
}

type pooled[C any] struct {
	trans    thrift.TTransport
	client   C
	lastUsed time.Time
}

// NewPool returns a pool that wraps connections with newClient, for example
// sparrowrpc.NewGetTaskServiceClient.
func NewPool[C any](cfg Config, newClient func(thrift.TClient) C) *Pool[C] {
	cfg = cfg.withDefaults()
	return &Pool[C]{
		cfg:       cfg,
		tcfg:      cfg.thrift(cfg.CallTimeout),
		newClient: newClient,
		idle:      make(map[string][]*pooled[C]),
	}
}

// DialError means a call was never sent: its connection could not be
// opened. Unlike a failure after sending, the call certainly had no effect.
type DialError struct {
	Addr string
	Err  error
}

func (e *DialError) Error() string { return fmt.Sprintf("connect to %s: %v", e.Addr, e.Err) }
func (e *DialError) Unwrap() error { return e.Err }

// ErrClosed is returned by calls on a closed Pool.
var ErrClosed = errors.New("rpc pool closed")

// Call runs fn with a client connected to addr. A transport or protocol
// error closes that connection, since its stream may be out of step; other
// errors (the service's declared exceptions) keep it for reuse. Calls are
// never retried here: a retried getTask or launchTask could act twice.
func (p *Pool[C]) Call(ctx context.Context, addr string, fn func(ctx context.Context, c C) error) error {
	pc, err := p.get(addr)
	if err != nil {
		return err
	}
	err = fn(ctx, pc.client)
	if err != nil && isConnError(err) {
		pc.trans.Close()
		return fmt.Errorf("call %s: %w", addr, err)
	}
	p.put(addr, pc)
	return err
}

func isConnError(err error) bool {
	var te thrift.TTransportException
	var pe thrift.TProtocolException
	if errors.As(err, &te) || errors.As(err, &pe) {
		return true
	}
	// A server answers an unknown method, or arguments it could not read,
	// with an application exception and then closes the connection; only a
	// handler's own error (INTERNAL_ERROR) leaves the stream usable.
	var ae thrift.TApplicationException
	return errors.As(err, &ae) && ae.TypeId() != thrift.INTERNAL_ERROR
}

func (p *Pool[C]) get(addr string) (*pooled[C], error) {
	now := time.Now()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	for list := p.idle[addr]; len(list) > 0; list = p.idle[addr] {
		pc := list[len(list)-1]
		p.idle[addr] = list[:len(list)-1]
		// Servers close connections idle for IdleTimeout; don't race them.
		if now.Sub(pc.lastUsed) < p.cfg.IdleTimeout/2 {
			p.mu.Unlock()
			return pc, nil
		}
		pc.trans.Close()
	}
	p.mu.Unlock()
	return p.dial(addr)
}

func (p *Pool[C]) dial(addr string) (*pooled[C], error) {
	var sock thrift.TTransport
	if p.cfg.TLS != nil {
		sock = thrift.NewTSSLSocketConf(addr, p.tcfg)
	} else {
		sock = thrift.NewTSocketConf(addr, p.tcfg)
	}
	if err := sock.Open(); err != nil {
		return nil, &DialError{Addr: addr, Err: err}
	}
	framed := thrift.NewTFramedTransportConf(sock, p.tcfg)
	prot := newProtocol(framed, p.tcfg)
	return &pooled[C]{trans: framed, client: p.newClient(thrift.NewTStandardClient(prot, prot))}, nil
}

func (p *Pool[C]) put(addr string, pc *pooled[C]) {
	pc.lastUsed = time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle[addr]) >= maxIdlePerAddr {
		pc.trans.Close()
		return
	}
	p.idle[addr] = append(p.idle[addr], pc)
}

// Forget closes the idle connections to addr, e.g. when the peer left.
func (p *Pool[C]) Forget(addr string) {
	p.mu.Lock()
	list := p.idle[addr]
	delete(p.idle, addr)
	p.mu.Unlock()
	for _, pc := range list {
		pc.trans.Close()
	}
}

// Close closes every idle connection; connections in use close when their
// calls return.
func (p *Pool[C]) Close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, list := range idle {
		for _, pc := range list {
			pc.trans.Close()
		}
	}
}
