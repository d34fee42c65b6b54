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
