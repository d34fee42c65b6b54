package sim

// event is one scheduled occurrence. Events are small values held directly
// in the heap's slice, so scheduling one allocates nothing once the slice
// has grown to the working set.
type event struct {
	t    float64 // simulated time, ms
	seq  uint64  // scheduling order: ties at equal t run first-scheduled first
	kind uint8
	node int32 // node index, or -1
	slot int32 // job slot, or -1
	task int32 // task index within the job, or -1
	jseq int32 // job sequence number, to detect a reused slot
}

func (a *event) before(b *event) bool {
	return a.t < b.t || (a.t == b.t && a.seq < b.seq)
}

// eventHeap is a 4-ary min-heap on (t, seq). The sequence tie-break makes
// the processing order, and so every result, a function of the seed alone.
type eventHeap struct {
	ev  []event
	seq uint64
}

func (h *eventHeap) len() int { return len(h.ev) }

func (h *eventHeap) push(e event) {
	e.seq = h.seq
	h.seq++
	h.ev = append(h.ev, e)
	ev := h.ev
	i := len(ev) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !e.before(&ev[p]) {
			break
		}
		ev[i] = ev[p]
		i = p
	}
	ev[i] = e
}

func (h *eventHeap) pop() event {
	ev := h.ev
	top := ev[0]
	n := len(ev) - 1
	last := ev[n]
	h.ev = ev[:n]
	if n == 0 {
		return top
	}
	ev = ev[:n]
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		best := c
		end := min(c+4, n)
		for k := c + 1; k < end; k++ {
			if ev[k].before(&ev[best]) {
				best = k
			}
		}
		if !ev[best].before(&last) {
			break
		}
		ev[i] = ev[best]
		i = best
	}
	ev[i] = last
	return top
}
