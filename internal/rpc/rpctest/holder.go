// Package rpctest holds fakes of the rpc package's parts for other
// packages' tests.
package rpctest

import (
	"context"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// Holder holds connections in memory as rpc.Pool.Hold does: a live peer's
// connection lasts until the peer is killed (or, with CloseAtOnce, ends
// as soon as it opened, as a server that closes idle connections does);
// a dead peer refuses connects with an *rpc.DialError. Safe for
// concurrent use; with testing/synctest, a held connection is durably
// blocked.
type Holder struct {
	mu          sync.Mutex
	dead        map[string]bool
	silent      map[string]bool // connects time out
	closeAtOnce bool
	ends        map[string]chan struct{} // closed to end addr's held connections
	connects    map[string]int           // connects tried, by address
}

// NewHolder returns a Holder whose peers are all live.
func NewHolder() *Holder {
	return &Holder{dead: map[string]bool{}, silent: map[string]bool{}, ends: map[string]chan struct{}{}, connects: map[string]int{}}
}

// Hold implements rpc.Pool.Hold's contract in memory.
func (f *Holder) Hold(ctx context.Context, addr string, opened func()) error {
	f.mu.Lock()
	f.connects[addr]++
	if f.dead[addr] {
		f.mu.Unlock()
		return &rpc.DialError{Addr: addr, Err: syscall.ECONNREFUSED}
	}
	if f.silent[addr] {
		f.mu.Unlock()
		return &rpc.DialError{Addr: addr, Err: os.ErrDeadlineExceeded}
	}
	end, ok := f.ends[addr]
	if !ok {
		end = make(chan struct{})
		f.ends[addr] = end
	}
	closeAtOnce := f.closeAtOnce
	f.mu.Unlock()
	if opened != nil {
		opened()
	}
	if closeAtOnce {
		return io.EOF
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-end:
		return io.EOF
	}
}

// Kill ends addr's held connections and refuses its connects from now on.
func (f *Holder) Kill(addr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dead[addr] = true
	if end, ok := f.ends[addr]; ok {
		close(end)
		delete(f.ends, addr)
	}
}

// Silence ends addr's held connections and makes its connects time out
// from now on, as a host gone from the network does.
func (f *Holder) Silence(addr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.silent[addr] = true
	if end, ok := f.ends[addr]; ok {
		close(end)
		delete(f.ends, addr)
	}
}

// Revive makes addr accept connects again.
func (f *Holder) Revive(addr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.dead, addr)
	delete(f.silent, addr)
}

// CloseAtOnce makes every connection opened from now on end as soon as
// it opened, and ends those held now; with on false, connections last
// again.
func (f *Holder) CloseAtOnce(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closeAtOnce = on
	if on {
		for addr, end := range f.ends {
			close(end)
			delete(f.ends, addr)
		}
	}
}

// Connects returns how many connects to addr were tried.
func (f *Holder) Connects(addr string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.connects[addr]
}
