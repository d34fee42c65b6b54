package racksim

import (
	"slices"

	"github.com/sparrowfleet/sparrow/core/quincy"
)

// qentry is a task in a queue; it is stale once the task left the waiting
// state or was queued again (gen differs).
type qentry struct{ task, gen int32 }

// fifo is a queue with lazy deletion.
type fifo struct {
	items []qentry
	head  int
}

func (q *fifo) push(e qentry) { q.items = append(q.items, e) }

// queueSched is §3's queue-based scheduler: a FIFO per computer (C_m), per
// rack (R_l) and for the cluster (X). A task joins the queues of its
// preferred computers and racks (holding more than 10% of its input) and
// X, and leaves them all when matched. A free computer takes the first
// ready task of its own queue, else of its rack's, else of X (G, §3.2).
// Under GF a job running at least its fair share A_j (§3.3) is blocked:
// its tasks are not ready. GFP also kills a job's tasks over A_j, most
// recently started first (§3.4). GFH is GF whose blocked jobs unblock only
// below A_j − M_H running, or Δ_H seconds after they were blocked (§3.5).
type queueSched struct {
	e      *engine
	comp   []fifo
	rack   []fifo
	x      fifo
	fresh  []int // tasks queued since the last dispatch
	shares []int // A_j by job id (fair policies)
	fair   bool
	kill   bool
	hyst   bool
}

func newQueueSched(e *engine) *queueSched {
	p := e.cfg.Policy
	return &queueSched{
		e: e, comp: make([]fifo, e.computers()), rack: make([]fifo, len(e.members)),
		shares: make([]int, len(e.jobs)),
		fair:   p == GF || p == GFP || p == GFH, kill: p == GFP, hyst: p == GFH,
	}
}

// event wakes the scheduler when a GFH job's Δ_H has passed, so that it
// can unblock even if nothing else happens.
func (s *queueSched) event(ev event) error {
	if ev.kind == evWake {
		s.e.dirty = true
	}
	return nil
}

// block marks job j blocked from t (GFH) and sets its wake-up.
func (s *queueSched) block(j *job, t float64) {
	j.blocked, j.blockedSince = true, t
	s.e.ev.push(t+s.e.cfg.HysteresisDelay, evWake, j.id, 0)
}

// submitted queues tk "as though it had just been submitted" (§3.1).
func (s *queueSched) submitted(tk *task) {
	if tk.prefC == nil && tk.prefR == nil {
		tk.prefC, tk.prefR = s.preferred(tk)
	}
	tk.qgen++
	en := qentry{int32(tk.id), tk.qgen}
	for _, m := range tk.prefC {
		s.comp[m].push(en)
	}
	for _, l := range tk.prefR {
		s.rack[l].push(en)
	}
	s.x.push(en)
	s.fresh = append(s.fresh, tk.id)
}

// preferred returns tk's preferred computers and racks (§2.3: more than
// δ = 0.1 of its input), with empty non-nil slices for none.
func (s *queueSched) preferred(tk *task) ([]int, []int) {
	var total int64
	byC, byR := map[int]int64{}, map[int]int64{}
	for _, b := range tk.input {
		total += b.Bytes
		seenR := map[int]bool{}
		for _, m := range b.Replicas {
			byC[m] += b.Bytes
			if l := s.e.rackOf[m]; !seenR[l] {
				seenR[l] = true
				byR[l] += b.Bytes
			}
		}
	}
	pc, pr := []int{}, []int{}
	for m, v := range byC {
		if v*10 > total {
			pc = append(pc, m)
		}
	}
	for l, v := range byR {
		if v*10 > total {
			pr = append(pr, l)
		}
	}
	slices.Sort(pc)
	slices.Sort(pr)
	return pc, pr
}

// ready reports whether tk may start now.
func (s *queueSched) ready(tk *task) bool {
	if tk.state != waiting {
		return false
	}
	if !s.fair {
		return true
	}
	j := s.e.jobOf(tk)
	if s.hyst {
		return !j.blocked
	}
	return j.running < s.shares[j.id]
}

// valid reports whether a queue entry still stands for a waiting task.
func (s *queueSched) valid(en qentry) bool {
	tk := s.e.tasks[en.task]
	return tk.state == waiting && tk.qgen == en.gen
}

// pick returns the first ready task of q, or nil, dropping stale entries
// at its head.
func (s *queueSched) pick(q *fifo) *task {
	for q.head < len(q.items) && !s.valid(q.items[q.head]) {
		q.head++
	}
	if q.head > 64 && q.head*2 > len(q.items) {
		q.items = append(q.items[:0], q.items[q.head:]...)
		q.head = 0
	}
	for i := q.head; i < len(q.items); i++ {
		en := q.items[i]
		if !s.valid(en) {
			continue
		}
		if tk := s.e.tasks[en.task]; s.ready(tk) {
			return tk
		}
	}
	return nil
}

// updateShares recomputes A_j over the computers free of roots, and GFH's
// blocking.
func (s *queueSched) updateShares(t float64) {
	e := s.e
	demand := make([]int, len(e.active))
	for i, id := range e.active {
		demand[i] = len(e.jobs[id].live)
	}
	a := quincy.FairShares(e.workerSlots(), demand)
	for i, id := range e.active {
		s.shares[id] = a[i]
	}
	if !s.hyst {
		return
	}
	for _, id := range e.active {
		j := e.jobs[id]
		switch {
		case !j.blocked && j.running >= s.shares[id]:
			s.block(j, t)
		case j.blocked && (j.running < s.shares[id]-e.cfg.HysteresisMargin || t-j.blockedSince >= e.cfg.HysteresisDelay):
			j.blocked = false
		}
	}
}

// dispatch enforces GFP's quotas, then places newly queued tasks on idle
// computers (a preferred computer, else one in a preferred rack, else any),
// then lets every idle computer take from its queues.
func (s *queueSched) dispatch(t float64) error {
	e := s.e
	if s.fair {
		s.updateShares(t)
	}
	if s.kill {
		for _, id := range e.active {
			j := e.jobs[id]
			over := j.running - s.shares[id]
			if over <= 0 {
				continue
			}
			var run []*task
			for _, tid := range j.live {
				if tk := e.tasks[tid]; tk.state == running {
					run = append(run, tk)
				}
			}
			slices.SortFunc(run, func(a, b *task) int {
				if a.startedAt != b.startedAt {
					if a.startedAt > b.startedAt {
						return -1
					}
					return 1
				}
				return b.id - a.id
			})
			for _, tk := range run[:over] {
				e.kill(tk)
			}
		}
	}
	idle := make([]int, 0, e.computers())
	for m := range e.computers() {
		if e.free(m) {
			idle = append(idle, m)
		}
	}
	fresh := s.fresh
	s.fresh = nil
	for _, id := range fresh {
		if len(idle) == 0 {
			break
		}
		tk := e.tasks[id]
		if !s.ready(tk) {
			continue
		}
		m := s.idleFor(tk, idle)
		if err := s.run(tk, m, t); err != nil {
			return err
		}
		idle = slices.DeleteFunc(idle, func(x int) bool { return x == m })
	}
	e.rng.Shuffle(len(idle), func(i, j int) { idle[i], idle[j] = idle[j], idle[i] })
	for _, m := range idle {
		tk := s.pick(&s.comp[m])
		if tk == nil {
			tk = s.pick(&s.rack[e.rackOf[m]])
		}
		if tk == nil {
			tk = s.pick(&s.x)
		}
		if tk == nil {
			continue
		}
		if err := s.run(tk, m, t); err != nil {
			return err
		}
	}
	return nil
}

// idleFor chooses an idle computer for a newly queued task.
func (s *queueSched) idleFor(tk *task, idle []int) int {
	for _, m := range tk.prefC {
		if s.e.free(m) {
			return m
		}
	}
	var inRack []int
	for _, m := range idle {
		if slices.Contains(tk.prefR, s.e.rackOf[m]) {
			inRack = append(inRack, m)
		}
	}
	if len(inRack) > 0 {
		return inRack[s.e.rng.IntN(len(inRack))]
	}
	return idle[s.e.rng.IntN(len(idle))]
}

// run starts tk on m and keeps GFH's blocking current.
func (s *queueSched) run(tk *task, m int, t float64) error {
	if err := s.e.start(tk, m); err != nil {
		return err
	}
	if s.hyst {
		if j := s.e.jobOf(tk); !j.blocked && j.running >= s.shares[j.id] {
			s.block(j, t)
		}
	}
	return nil
}
