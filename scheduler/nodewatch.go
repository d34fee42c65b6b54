package scheduler

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"time"

	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// Node watch bounds.
const (
	// nodeWatchRetry is how soon a watch opens its connection again after
	// it ended quickly, and the first wait after a failed connect; each
	// further failed connect doubles the wait, up to nodeWatchRetryMax.
	nodeWatchRetry    = time.Second
	nodeWatchRetryMax = 30 * time.Second
)

// connHolder holds a connection open until it ends (rpc.Pool.Hold): it
// returns an *rpc.DialError when none could be opened, ctx's error when
// ctx ended, and otherwise what ended the connection. opened is called
// once the connection is open.
type connHolder interface {
	Hold(ctx context.Context, addr string, opened func()) error
}

// nodeWatch holds one idle connection open to each node monitor in the
// scheduler's view, so that a node monitor whose process ends leaves
// placement within a connect, not at the scheduler's next call to it
// (with d·m reservations a second spread over a thousand node monitors,
// seconds away) nor at gossip's verdict (its suspicion timeout). A held
// connection costs nothing while both processes live. When one ends, the
// node monitor is connected to again at once: a refused connect (its host
// answers, its process does not) takes it out of placement (down, which
// also tells the other schedulers); a connect that succeeds holds again.
// A connect that times out is not taken as a death: it is what a busy
// host or network looks like too, and a live node monitor taken out for
// it would lose its reservations to the others; calls and gossip judge
// that case, and the watch tries again later. A
// server may close connections it finds idle, so a connection that ended
// soon after it opened is opened again no sooner than nodeWatchRetry,
// and connects that keep failing are spaced out up to nodeWatchRetryMax:
// the watch never costs more than polling would. A machine that vanishes
// without closing its connections (power, network) is not seen here;
// calls and gossip find it.
//
// Lock contract: mu guards ctx, watching and closed; the per-node
// goroutines take it only to remove themselves, and nothing is called
// while holding it.
type nodeWatch struct {
	hold connHolder
	down func(addr string, err error)

	mu       sync.Mutex
	ctx      context.Context
	cancel   context.CancelFunc
	watching map[string]context.CancelFunc // node monitor address -> its watch's end
	wg       sync.WaitGroup
}

func newNodeWatch(hold connHolder, down func(addr string, err error)) *nodeWatch {
	ctx, cancel := context.WithCancel(context.Background())
	return &nodeWatch{hold: hold, down: down, ctx: ctx, cancel: cancel, watching: map[string]context.CancelFunc{}}
}

// watch starts watching the node monitor at addr, unless it is watched
// already or the watch is closed.
func (w *nodeWatch) watch(addr string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.watching[addr]; ok || w.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(w.ctx)
	w.watching[addr] = cancel
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.run(ctx, addr)
	}()
}

// unwatch ends the watch of the node monitor at addr, if any.
func (w *nodeWatch) unwatch(addr string) {
	w.mu.Lock()
	cancel, ok := w.watching[addr]
	delete(w.watching, addr)
	w.mu.Unlock()
	if ok {
		cancel()
	}
}

// watched returns how many node monitors are watched.
func (w *nodeWatch) watched() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.watching)
}

// close ends every watch and waits for them.
func (w *nodeWatch) close() {
	w.mu.Lock()
	w.cancel()
	w.watching = map[string]context.CancelFunc{}
	w.mu.Unlock()
	w.wg.Wait()
}

// run holds a connection to addr, again and again, until ctx ends.
func (w *nodeWatch) run(ctx context.Context, addr string) {
	failing := time.Duration(0) // the wait after the last failed connect
	for {
		var opened time.Time
		err := w.hold.Hold(ctx, addr, func() { opened = time.Now() })
		if ctx.Err() != nil {
			return
		}
		pause := nodeWatchRetry
		var dial *rpc.DialError
		switch {
		case errors.As(err, &dial):
			if errors.Is(err, syscall.ECONNREFUSED) {
				w.down(addr, err)
			}
			failing = min(max(2*failing, nodeWatchRetry), nodeWatchRetryMax)
			pause = failing
		case time.Since(opened) >= nodeWatchRetry:
			failing = 0
			continue // held a while, then ended: look again at once
		default:
			failing = 0
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
