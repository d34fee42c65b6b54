package batch

import "sync"

// Batcher sends items per key. Safe for concurrent use.
type Batcher[K comparable, V any] struct {
	send func(key K, items []V)

	mu      sync.Mutex
	pending map[K][]V
	wg      sync.WaitGroup
}

// New returns a Batcher that calls send, on its own goroutine per key, with
// each batch. send must not call Add for the same key synchronously.
func New[K comparable, V any](send func(key K, items []V)) *Batcher[K, V] {
	return &Batcher[K, V]{send: send, pending: make(map[K][]V)}
}

// Add queues item for key, starting a sender for key if none is running.
func (b *Batcher[K, V]) Add(key K, item V) {
	b.mu.Lock()
	defer b.mu.Unlock()
	list, running := b.pending[key]
	b.pending[key] = append(list, item)
	if !running {
		b.wg.Add(1)
		go b.flush(key)
	}
}

// SendAll queues items for key together, so that they go in one batch
// (with whatever else is queued for key); if no sender is running for key, the calling goroutine sends the batch holding them
// itself, sparing a goroutine's start and hand-over, and returns once it
// is sent, leaving what queued meanwhile to a sender of its own. A caller
// that waits for its items' outcome anyway loses nothing by it.
func (b *Batcher[K, V]) SendAll(key K, items ...V) {
	b.mu.Lock()
	list, running := b.pending[key]
	if running {
		b.pending[key] = append(list, items...)
		b.mu.Unlock()
		return
	}
	b.pending[key] = items[:0:0] // present: a sender runs for key
	b.wg.Add(1)
	b.mu.Unlock()
	b.send(key, items)
	b.mu.Lock()
	if len(b.pending[key]) == 0 {
		delete(b.pending, key)
		b.mu.Unlock()
		b.wg.Done()
		return
	}
	b.mu.Unlock()
	go b.flush(key)
}

// flush sends key's batches until none is pending. A key present in
// pending (even with an empty list) means its sender is running.
func (b *Batcher[K, V]) flush(key K) {
	defer b.wg.Done()
	for {
		b.mu.Lock()
		items := b.pending[key]
		if len(items) == 0 {
			delete(b.pending, key)
			b.mu.Unlock()
			return
		}
		b.pending[key] = items[:0:0]
		b.mu.Unlock()
		b.send(key, items)
	}
}

// Wait blocks until every queued item has been sent.
func (b *Batcher[K, V]) Wait() { b.wg.Wait() }
