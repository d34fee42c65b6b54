package nodemonitor

import (
	"context"
	"io"
	"slices"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// fakeHolder holds connections to executors in memory: a live executor's
// connection lasts until it is killed (or, with closeAtOnce, ends as soon
// as it opened, as a server that closes idle connections does); a dead
// one refuses connects.
type fakeHolder struct {
	mu          sync.Mutex
	dead        map[string]bool
	closeAtOnce bool
	ends        map[string]chan struct{} // closed to end addr's held connections
	connects    map[string]int           // connects tried, by address
}

func newFakeHolder() *fakeHolder {
	return &fakeHolder{dead: map[string]bool{}, ends: map[string]chan struct{}{}, connects: map[string]int{}}
}

func (f *fakeHolder) Hold(ctx context.Context, addr string, opened func()) error {
	f.mu.Lock()
	f.connects[addr]++
	if f.dead[addr] {
		f.mu.Unlock()
		return &rpc.DialError{Addr: addr, Err: syscall.ECONNREFUSED}
	}
	end, ok := f.ends[addr]
	if !ok {
		end = make(chan struct{})
		f.ends[addr] = end
	}
	closeAtOnce := f.closeAtOnce
	f.mu.Unlock()
	opened()
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

// kill ends addr's held connections and refuses its connects from now on.
func (f *fakeHolder) kill(addr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dead[addr] = true
	if end, ok := f.ends[addr]; ok {
		close(end)
		delete(f.ends, addr)
	}
}

func (f *fakeHolder) connectsTo(addr string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.connects[addr]
}

// startWatch watches h's executors through holder, until the test ends.
func startWatch(t *testing.T, h *harness, holder *fakeHolder, retry time.Duration) *executorWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := newExecutorWatch(ctx, h.nm, holder, retry)
	t.Cleanup(func() {
		cancel()
		w.wait()
	})
	w.sync()
	synctest.Wait() // every watch holds its connection
	return w
}

func TestExecutorWatch(t *testing.T) {
	const retry = time.Second
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, h *harness, holder *fakeHolder, w *executorWatch)
	}{
		{"a live executor costs one connection however long it runs", func(t *testing.T, h *harness, holder *fakeHolder, w *executorWatch) {
			time.Sleep(time.Hour)
			if n := holder.connectsTo(backend); n != 1 {
				t.Errorf("%d connects to a live executor in an hour; want 1", n)
			}
			if !slices.Equal(h.lastApps(), []string{"app"}) {
				t.Errorf("advertising %v; want [app]", h.lastApps())
			}
		}},
		{"a dead executor is lost after a refused connect and one retry", func(t *testing.T, h *harness, holder *fakeHolder, w *executorWatch) {
			h.sched.script("r", "a")
			h.enqueue(t, "app", "r", 1)
			time.Sleep(time.Minute) // the executor ran a while
			holder.kill(backend)
			time.Sleep(retry / 2)
			synctest.Wait()
			if !slices.Equal(h.lastApps(), []string{"app"}) {
				t.Errorf("one refused connect withdrew the app: advertising %v", h.lastApps())
			}
			time.Sleep(retry)
			synctest.Wait()
			if apps := h.lastApps(); len(apps) != 0 {
				t.Errorf("still advertising %v after two refused connects", apps)
			}
			if st := h.nm.State(); st.Running != 0 || st.Free != 1 {
				t.Errorf("%d running, %d free after the executor was lost; want 0 and 1", st.Running, st.Free)
			}
		}},
		{"a replaced executor's watch ends and the new one is watched", func(t *testing.T, h *harness, holder *fakeHolder, w *executorWatch) {
			const next = "127.0.0.1:10"
			h.nm.RegisterBackend(t.Context(), "app", next)
			w.sync()
			holder.kill(backend)
			time.Sleep(time.Minute)
			synctest.Wait()
			if n := holder.connectsTo(backend); n != 1 {
				t.Errorf("%d connects to the replaced executor; want only the first", n)
			}
			if n := holder.connectsTo(next); n != 1 {
				t.Errorf("%d connects to the new executor; want 1", n)
			}
			if !slices.Equal(h.lastApps(), []string{"app"}) {
				t.Errorf("advertising %v; want [app]", h.lastApps())
			}
		}},
		{"an executor that closes idle connections is connected to once per retry", func(t *testing.T, h *harness, holder *fakeHolder, w *executorWatch) {
			holder.mu.Lock()
			holder.closeAtOnce = true
			close(holder.ends[backend]) // and the connection held now
			holder.mu.Unlock()
			time.Sleep(10*retry + retry/2)
			if n := holder.connectsTo(backend); n > 12 {
				t.Errorf("%d connects in 10 retry intervals; want at most 12", n)
			}
			if !slices.Equal(h.lastApps(), []string{"app"}) {
				t.Errorf("advertising %v; want [app]", h.lastApps())
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, opts{})
				holder := newFakeHolder()
				w := startWatch(t, h, holder, retry)
				tc.run(t, h, holder, w)
			})
		})
	}
}
