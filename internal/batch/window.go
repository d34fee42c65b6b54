package batch

import (
	"sync"
	"time"
)

// Windowed sends items per key in batches gathered over a window: a key's
// first item opens a window of length window, and when it closes (or
// sooner, once max items are queued) every item queued for the key goes
// in one send, on the key's own goroutine. Items added while a send runs
// wait for the next window. With a window of 0 or less, a key's first
// item is sent at once, and the items added while a send runs go
// together in the next. Close sends what is queued at once and waits;
// items added after Close are sent at once. Nothing added is dropped.
//
// Lock contract: mu guards pending and closed; send is called without it.
// Safe for concurrent use.
type Windowed[K comparable, V any] struct {
	send   func(key K, items []V)
	window time.Duration
	max    int

	mu      sync.Mutex
	pending map[K]*windowKey[V]
	closed  bool
	flush   chan struct{} // closed by Close
	wg      sync.WaitGroup
}

// windowKey is one key's queue and the channel that ends its window early.
type windowKey[V any] struct {
	items []V
	full  chan struct{} // buffered 1: the queue reached max
}

// NewWindowed returns a Windowed that calls send with each key's batches
// of at most max items (max < 1: no bound). send must not call Add for the
// same key synchronously.
func NewWindowed[K comparable, V any](window time.Duration, max int, send func(key K, items []V)) *Windowed[K, V] {
	return &Windowed[K, V]{send: send, window: window, max: max, pending: make(map[K]*windowKey[V]), flush: make(chan struct{})}
}

// Add queues item for key, opening a window for key if none is open.
func (w *Windowed[K, V]) Add(key K, item V) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := w.pending[key]
	if k == nil {
		k = &windowKey[V]{full: make(chan struct{}, 1)}
		w.pending[key] = k
		w.wg.Add(1)
		go w.run(key, k)
	}
	k.items = append(k.items, item)
	if w.max > 0 && len(k.items) >= w.max {
		select {
		case k.full <- struct{}{}:
		default:
		}
	}
}

// run sends key's batches, one per window, until a window closes with
// nothing queued. With no window, it sends at once, and then what
// queued during the send, until nothing has.
func (w *Windowed[K, V]) run(key K, k *windowKey[V]) {
	defer w.wg.Done()
	var t *time.Timer
	if w.window > 0 {
		t = time.NewTimer(w.window)
		defer t.Stop()
	}
	for {
		if t != nil {
			select {
			case <-t.C:
			case <-k.full:
			case <-w.flush:
			}
		}
		w.mu.Lock()
		items := k.items
		k.items = nil
		if len(items) == 0 {
			delete(w.pending, key)
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		for len(items) > 0 {
			n := len(items)
			if w.max > 0 {
				n = min(n, w.max)
			}
			w.send(key, items[:n:n])
			items = items[n:]
		}
		if t != nil {
			t.Reset(w.window)
		}
	}
}

// Close sends every queued item without waiting for its window, and
// returns once all are sent. Later Adds are sent at once.
func (w *Windowed[K, V]) Close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.flush)
	}
	w.mu.Unlock()
	w.wg.Wait()
}
