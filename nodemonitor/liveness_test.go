package nodemonitor

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/internal/rpc/rpctest"
)

// startWatch watches h's executors through holder, until the test ends.
func startWatch(t *testing.T, h *harness, holder *rpctest.Holder, retry time.Duration) *executorWatch {
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
		run  func(t *testing.T, h *harness, holder *rpctest.Holder, w *executorWatch)
	}{
		{"a live executor costs one connection however long it runs", func(t *testing.T, h *harness, holder *rpctest.Holder, w *executorWatch) {
			time.Sleep(time.Hour)
			if n := holder.Connects(backend); n != 1 {
				t.Errorf("%d connects to a live executor in an hour; want 1", n)
			}
			if !slices.Equal(h.lastApps(), []string{"app"}) {
				t.Errorf("advertising %v; want [app]", h.lastApps())
			}
		}},
		{"a dead executor is lost after a refused connect and one retry", func(t *testing.T, h *harness, holder *rpctest.Holder, w *executorWatch) {
			h.sched.script("r", "a")
			h.enqueue(t, "app", "r", 1)
			time.Sleep(time.Minute) // the executor ran a while
			holder.Kill(backend)
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
		{"a replaced executor's watch ends and the new one is watched", func(t *testing.T, h *harness, holder *rpctest.Holder, w *executorWatch) {
			const next = "127.0.0.1:10"
			h.nm.RegisterBackend(t.Context(), "app", next)
			w.sync()
			holder.Kill(backend)
			time.Sleep(time.Minute)
			synctest.Wait()
			if n := holder.Connects(backend); n != 1 {
				t.Errorf("%d connects to the replaced executor; want only the first", n)
			}
			if n := holder.Connects(next); n != 1 {
				t.Errorf("%d connects to the new executor; want 1", n)
			}
			if !slices.Equal(h.lastApps(), []string{"app"}) {
				t.Errorf("advertising %v; want [app]", h.lastApps())
			}
		}},
		{"an executor that closes idle connections is connected to once per retry", func(t *testing.T, h *harness, holder *rpctest.Holder, w *executorWatch) {
			holder.CloseAtOnce(true)
			time.Sleep(10*retry + retry/2)
			if n := holder.Connects(backend); n > 12 {
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
				holder := rpctest.NewHolder()
				w := startWatch(t, h, holder, retry)
				tc.run(t, h, holder, w)
			})
		})
	}
}
