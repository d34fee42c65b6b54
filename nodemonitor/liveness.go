package nodemonitor

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// connHolder holds a connection to an executor open until it ends
// (rpc.Pool.Hold): it returns an *rpc.DialError when none could be
// opened, ctx's error when ctx ended, and otherwise what ended the
// connection. opened is called once the connection is open.
type connHolder interface {
	Hold(ctx context.Context, addr string, opened func()) error
}

// executorWatch keeps each registered executor's liveness watched: one
// connection held open to each, which costs nothing while the executor
// lives and ends as soon as its process does. When a held connection
// ends, the executor is dialed again at once; a refused or timed-out
// connect counts as a failed check (executorRegistry.checked), and
// connects are then retried every retry until the executor is lost or
// answers again. A connection that ends soon after it opened (a server
// that closes idle connections) is opened again no more often than every
// retry, so a watch never costs more than the polling it replaces.
//
// Lock contract: mu guards watching; the per-executor goroutines take it
// only to remove themselves, and never call out while holding it.
type executorWatch struct {
	nm    *NodeMonitor
	hold  connHolder
	retry time.Duration

	mu       sync.Mutex
	ctx      context.Context
	watching map[string]*watched // app -> its executor's watch
	wg       sync.WaitGroup
}

// watched is one executor's watch: the address watched and how to end it.
type watched struct {
	addr   string
	cancel context.CancelFunc
}

func newExecutorWatch(ctx context.Context, nm *NodeMonitor, hold connHolder, retry time.Duration) *executorWatch {
	return &executorWatch{nm: nm, hold: hold, retry: retry, ctx: ctx, watching: map[string]*watched{}}
}

// sync starts a watch for each registered executor not watched yet, and
// ends the watches of executors replaced or no longer registered. The
// daemon calls it whenever the registered executors may have changed.
func (w *executorWatch) sync() {
	want := w.nm.execs.snapshot()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx.Err() != nil {
		return
	}
	for app, cur := range w.watching {
		if want[app] != cur.addr {
			cur.cancel()
			delete(w.watching, app)
		}
	}
	for app, addr := range want {
		if _, ok := w.watching[app]; ok {
			continue
		}
		ctx, cancel := context.WithCancel(w.ctx)
		me := &watched{addr: addr, cancel: cancel}
		w.watching[app] = me
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.watch(ctx, app, addr)
			w.mu.Lock()
			if w.watching[app] == me {
				delete(w.watching, app)
			}
			w.mu.Unlock()
			cancel()
		}()
	}
}

// wait returns once every watch has ended, after the context given to
// newExecutorWatch ended.
func (w *executorWatch) wait() { w.wg.Wait() }

// watch watches app's executor at addr until it is lost, replaced, or ctx
// ends.
func (w *executorWatch) watch(ctx context.Context, app, addr string) {
	for {
		opened := time.Time{}
		err := w.hold.Hold(ctx, addr, func() {
			opened = time.Now()
			w.nm.execs.checked(app, addr, nil)
		})
		if ctx.Err() != nil {
			return
		}
		var de *rpc.DialError
		if errors.As(err, &de) {
			if w.nm.execs.checked(app, addr, err) {
				w.nm.executorLost(app, addr, nil, err)
				return
			}
		} else if time.Since(opened) >= w.retry {
			continue // held a while, then ended: look again at once
		}
		t := time.NewTimer(w.retry)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
