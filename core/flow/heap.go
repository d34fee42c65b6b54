package flow

import "math/bits"

// radixHeap is a monotone priority queue of (distance, node) pairs with
// lazy deletion (Ahuja, Mehlhorn, Orlin and Tarjan's radix heap). Dijkstra
// only ever pushes keys at or above the last one popped, which is all a
// radix heap needs: bucket i holds the keys that first differ from last in
// bit i-1 (bucket 0: equal to last), so a push is an append and each item
// moves to a lower bucket at most 64 times. On warm Quincy searches the
// heap's share of the run fell from about a third (binary heap) to about
// a tenth.
type radixHeap struct {
	last    int64 // the smallest key, once min has been called
	size    int
	buckets [65][]heapItem
}

type heapItem struct {
	d int64
	v int32
}

// reset empties the heap, keeping its buckets' memory.
func (h *radixHeap) reset() {
	for i := range h.buckets {
		h.buckets[i] = h.buckets[i][:0]
	}
	h.last, h.size = 0, 0
}

func (h *radixHeap) bucket(d int64) int {
	return bits.Len64(uint64(d ^ h.last))
}

// push adds (d, v); d must not be below the last key popped.
func (h *radixHeap) push(d int64, v int32) {
	b := h.bucket(d)
	h.buckets[b] = append(h.buckets[b], heapItem{d, v})
	h.size++
}

// min returns the smallest key; the heap must not be empty. It moves the
// items of the lowest non-empty bucket down so that bucket 0 holds them.
func (h *radixHeap) min() int64 {
	if len(h.buckets[0]) > 0 {
		return h.last
	}
	i := 1
	for len(h.buckets[i]) == 0 {
		i++
	}
	items := h.buckets[i]
	m := items[0].d
	for _, it := range items[1:] {
		m = min(m, it.d)
	}
	h.last = m
	for _, it := range items {
		b := h.bucket(it.d) // < i: the keys share bits above i-1 with m
		h.buckets[b] = append(h.buckets[b], it)
	}
	h.buckets[i] = items[:0]
	return m
}

// pop removes and returns an item of the smallest key.
func (h *radixHeap) pop() (int64, int32) {
	d := h.min()
	b := h.buckets[0]
	it := b[len(b)-1]
	h.buckets[0] = b[:len(b)-1]
	h.size--
	return d, it.v
}
