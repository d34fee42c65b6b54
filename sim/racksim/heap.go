package racksim

// Event kinds.
const (
	evJobReady = iota // a job's root has started: submit its first workers
	evCPUDone         // a worker finished computing (a: task, b: attempt)
	evJobEnd          // a job's root has wrapped up (a: job)
	evSolve           // a flow policy's solve is due
	evWake            // GFH: a blocked job's Δ_H has passed
)

// event is one scheduled occurrence; seq breaks ties in insertion order so
// that runs are deterministic.
type event struct {
	t    float64
	seq  uint64
	kind int
	a, b int
}

// eventHeap is a binary min-heap of events by (t, seq).
type eventHeap struct {
	items []event
	seq   uint64
}

func (h *eventHeap) less(i, j int) bool {
	a, b := &h.items[i], &h.items[j]
	return a.t < b.t || (a.t == b.t && a.seq < b.seq)
}

func (h *eventHeap) push(t float64, kind, a, b int) {
	h.seq++
	h.items = append(h.items, event{t: t, seq: h.seq, kind: kind, a: a, b: b})
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *eventHeap) len() int { return len(h.items) }

func (h *eventHeap) top() *event { return &h.items[0] }

func (h *eventHeap) pop() event {
	e := h.items[0]
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	h.items = h.items[:n]
	i := 0
	for {
		l, r, s := 2*i+1, 2*i+2, i
		if l < n && h.less(l, s) {
			s = l
		}
		if r < n && h.less(r, s) {
			s = r
		}
		if s == i {
			break
		}
		h.items[i], h.items[s] = h.items[s], h.items[i]
		i = s
	}
	return e
}
