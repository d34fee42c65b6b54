package scheduler

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/internal/rpc/rpctest"
)

// downLog records the node monitors a watch took out of placement.
type downLog struct {
	mu    sync.Mutex
	downs map[string][]time.Time
}

func (l *downLog) down(addr string, err error) {
	var dial *rpc.DialError
	if !errors.As(err, &dial) {
		panic("down without a failed connect: " + err.Error())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.downs[addr] = append(l.downs[addr], time.Now())
}

func (l *downLog) of(addr string) []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.downs[addr]...)
}

func TestNodeWatch(t *testing.T) {
	const a, b = "10.0.0.1:20502", "10.0.0.2:20502"
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, w *nodeWatch, holder *rpctest.Holder, log *downLog)
	}{
		{"a live node monitor costs one connection however long it runs", func(t *testing.T, w *nodeWatch, holder *rpctest.Holder, log *downLog) {
			time.Sleep(time.Hour)
			if n := holder.Connects(a); n != 1 {
				t.Errorf("%d connects in an hour; want 1", n)
			}
			if d := log.of(a); len(d) != 0 {
				t.Errorf("taken out of placement %d times", len(d))
			}
		}},
		{"a killed node monitor leaves placement at once", func(t *testing.T, w *nodeWatch, holder *rpctest.Holder, log *downLog) {
			time.Sleep(time.Minute)
			killed := time.Now()
			holder.Kill(a)
			synctest.Wait()
			d := log.of(a)
			if len(d) != 1 || !d[0].Equal(killed) {
				t.Fatalf("taken out at %v; want once, at the kill (%v)", d, killed)
			}
			if len(log.of(b)) != 0 {
				t.Errorf("the live node monitor was taken out")
			}
		}},
		{"connects that time out do not take it out, and are spaced out", func(t *testing.T, w *nodeWatch, holder *rpctest.Holder, log *downLog) {
			holder.Silence(a)
			time.Sleep(10 * time.Minute)
			if d := log.of(a); len(d) != 0 {
				t.Errorf("taken out of placement %d times for connects that timed out", len(d))
			}
			if n := holder.Connects(a); n < 20 || n > 27 {
				t.Errorf("%d connects in 10 minutes; want about 25", n)
			}
		}},
		{"connects to a dead node monitor are spaced out, doubling", func(t *testing.T, w *nodeWatch, holder *rpctest.Holder, log *downLog) {
			holder.Kill(a)
			time.Sleep(10 * time.Minute)
			d := log.of(a)
			// 0, 1, 3, 7, 15, 31, then every 30 s: 6 + (600-31)/30 connects.
			if len(d) < 20 || len(d) > 26 {
				t.Errorf("%d failed connects in 10 minutes; want about 25", len(d))
			}
			for i := 2; i < len(d); i++ {
				if gap := d[i].Sub(d[i-1]); gap < d[i-1].Sub(d[i-2]) || gap > nodeWatchRetryMax {
					t.Fatalf("gap %d is %v after %v", i, gap, d[i-1].Sub(d[i-2]))
				}
			}
		}},
		{"a node monitor back again is held again", func(t *testing.T, w *nodeWatch, holder *rpctest.Holder, log *downLog) {
			holder.Kill(a)
			time.Sleep(5 * time.Second)
			holder.Revive(a)
			time.Sleep(time.Hour)
			n := holder.Connects(a)
			if n > 6 {
				t.Errorf("%d connects; want the failed ones and one that holds", n)
			}
			downs := len(log.of(a))
			holder.Kill(a)
			synctest.Wait()
			if len(log.of(a)) != downs+1 {
				t.Errorf("a second kill was not seen at once")
			}
		}},
		{"a node monitor that closes idle connections is connected to once per retry", func(t *testing.T, w *nodeWatch, holder *rpctest.Holder, log *downLog) {
			holder.CloseAtOnce(true)
			time.Sleep(10*nodeWatchRetry + nodeWatchRetry/2)
			if n := holder.Connects(a); n > 12 {
				t.Errorf("%d connects in 10 retry intervals; want at most 12", n)
			}
			if d := log.of(a); len(d) != 0 {
				t.Errorf("taken out of placement %d times", len(d))
			}
		}},
		{"an unwatched node monitor's watch ends", func(t *testing.T, w *nodeWatch, holder *rpctest.Holder, log *downLog) {
			w.unwatch(a)
			w.watch(b) // watched already: no second watch
			synctest.Wait()
			holder.Kill(a)
			time.Sleep(time.Minute)
			if len(log.of(a)) != 0 || holder.Connects(a) != 1 {
				t.Errorf("an unwatched node monitor was connected to %d times", holder.Connects(a))
			}
			if w.watched() != 1 || holder.Connects(b) != 1 {
				t.Errorf("%d watched, %d connects to b; want 1 and 1", w.watched(), holder.Connects(b))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				holder := rpctest.NewHolder()
				log := &downLog{downs: map[string][]time.Time{}}
				w := newNodeWatch(holder, log.down)
				w.watch(a)
				w.watch(b)
				synctest.Wait() // both held
				tc.run(t, w, holder, log)
				w.close()
				if w.watched() != 0 {
					t.Errorf("%d watched after close", w.watched())
				}
				w.watch(a) // closed: no new watch
				if w.watched() != 0 {
					t.Errorf("watching after close")
				}
			})
		})
	}
}
