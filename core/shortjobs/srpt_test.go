package shortjobs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sparrowfleet/sparrow/core/queue"
)

// oracle is a plain-slice model of SRPT's specification: it recomputes
// every decision from the whole queue and counts each reservation's
// passes over exactly.
type oracle struct {
	limit      int
	seq        int
	q          []oItem
	work       map[string]float64
	long       map[string]bool // requests marked long, while queued
	classFirst bool
}

// rank is 1 for a long request's reservation when classes come first.
func (o *oracle) rank(id string) int {
	if o.classFirst && o.long[id] {
		return 1
	}
	return 0
}

func (o *oracle) longQueued() int {
	n := 0
	for _, it := range o.q {
		if o.long[it.r.RequestID] {
			n++
		}
	}
	return n
}

type oItem struct {
	r        queue.Reservation
	seq      int
	sticky   bool
	passedBy int // younger reservations served while this one was queued
	pops     int // pops while queued
}

func (o *oracle) push(r queue.Reservation, sticky bool) {
	o.q = append(o.q, oItem{r: r, seq: o.seq, sticky: sticky})
	o.seq++
}

func (o *oracle) workOf(id string) float64 {
	if w, ok := o.work[id]; ok {
		return w
	}
	return math.Inf(1)
}

func (o *oracle) pop() (queue.Reservation, bool) {
	if len(o.q) == 0 {
		return queue.Reservation{}, false
	}
	pick := -1
	if o.q[0].pops >= o.limit { // o.q is in arrival order
		pick = 0
	}
	for i := range o.q {
		if pick < 0 && o.q[i].sticky {
			pick = i
		}
	}
	if pick < 0 {
		for i, it := range o.q {
			if pick < 0 {
				pick = i
				continue
			}
			b := o.q[pick]
			if it.r.Priority != b.r.Priority {
				if it.r.Priority < b.r.Priority {
					pick = i
				}
				continue
			}
			if ri, rb := o.rank(it.r.RequestID), o.rank(b.r.RequestID); ri != rb {
				if ri < rb {
					pick = i
				}
				continue
			}
			if wi, wb := o.workOf(it.r.RequestID), o.workOf(b.r.RequestID); wi < wb {
				pick = i
			}
		}
	}
	got := o.q[pick]
	for i := range o.q {
		o.q[i].pops++
		if o.q[i].seq < got.seq {
			o.q[i].passedBy++
		}
	}
	o.q = slices.Delete(o.q, pick, pick+1)
	o.forget(got.r.RequestID)
	return got.r, true
}

func (o *oracle) forget(id string) {
	for _, it := range o.q {
		if it.r.RequestID == id {
			return
		}
	}
	delete(o.work, id)
	delete(o.long, id)
}

func (o *oracle) removeIf(f func(queue.Reservation) bool) int {
	n := len(o.q)
	var ids []string
	o.q = slices.DeleteFunc(o.q, func(it oItem) bool {
		if f(it.r) {
			ids = append(ids, it.r.RequestID)
			return true
		}
		return false
	})
	for _, id := range ids {
		o.forget(id)
	}
	return n - len(o.q)
}

func (o *oracle) maxPassed() int {
	m := 0
	for _, it := range o.q {
		m = max(m, it.passedBy)
	}
	return m
}

// TestSRPTAgainstOracle runs random operation sequences on SRPT and the
// oracle, comparing every answer, and checks that no reservation is
// passed over more than the limit.
func TestSRPTAgainstOracle(t *testing.T) {
	for _, limit := range []int{1, 2, 5, 32} {
		for seed := range uint64(40) {
			classFirst := seed%2 == 1
			t.Run(fmt.Sprintf("limit%d/seed%d/classFirst=%v", limit, seed, classFirst), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 7))
				q := NewSRPT(limit)
				q.SetClassFirst(classFirst)
				o := &oracle{limit: limit, work: map[string]float64{}, long: map[string]bool{}, classFirst: classFirst}
				worst := 0
				for step := range 400 {
					req := fmt.Sprintf("r%d", rng.IntN(12))
					r := queue.Reservation{RequestID: req, App: fmt.Sprintf("a%d", rng.IntN(3)), User: "u", Priority: int32(rng.IntN(2))}
					switch op := rng.IntN(10); {
					case op < 4:
						q.Push(r)
						o.push(r, false)
					case op == 4:
						q.PushSticky(r)
						o.push(r, true)
					case op == 5:
						w := float64(rng.IntN(5))
						q.SetWork(req, w)
						if slices.ContainsFunc(o.q, func(it oItem) bool { return it.r.RequestID == req }) {
							o.work[req] = w
						}
					case op == 6 && step%5 == 1:
						q.SetLong(req)
						if slices.ContainsFunc(o.q, func(it oItem) bool { return it.r.RequestID == req }) {
							o.long[req] = true
						}
					case op == 6 && step%5 == 0:
						if a, b := q.RemoveRequest(req), o.removeIf(func(x queue.Reservation) bool { return x.RequestID == req }); a != b {
							t.Fatalf("step %d: RemoveRequest %d, oracle %d", step, a, b)
						}
					case op == 7 && step%17 == 0:
						if a, b := q.RemoveApp(r.App), o.removeIf(func(x queue.Reservation) bool { return x.App == r.App }); a != b {
							t.Fatalf("step %d: RemoveApp %d, oracle %d", step, a, b)
						}
					default:
						a, okA := q.Pop()
						b, okB := o.pop()
						if okA != okB || a != b {
							t.Fatalf("step %d: Pop %+v %v, oracle %+v %v", step, a, okA, b, okB)
						}
					}
					if q.Len() != len(o.q) || q.LongQueued() != o.longQueued() {
						t.Fatalf("step %d: Len %d, LongQueued %d; oracle %d, %d", step, q.Len(), q.LongQueued(), len(o.q), o.longQueued())
					}
					worst = max(worst, o.maxPassed())
					if worst > limit {
						t.Fatalf("step %d: a reservation was passed over %d times, limit %d", step, worst, limit)
					}
				}
				for q.Len() > 0 {
					a, _ := q.Pop()
					b, _ := o.pop()
					if a != b {
						t.Fatalf("drain: Pop %+v, oracle %+v", a, b)
					}
					if o.maxPassed() > limit {
						t.Fatalf("drain: passed over %d times, limit %d", o.maxPassed(), limit)
					}
				}
				if len(q.work) != 0 || len(q.byReq) != 0 || len(q.long) != 0 || q.LongQueued() != 0 {
					t.Fatalf("empty queue keeps %d estimates, %d requests", len(q.work), len(q.byReq))
				}
			})
		}
	}
}

func TestSRPTOrder(t *testing.T) {
	res := func(id string) queue.Reservation { return queue.Reservation{RequestID: id, User: "u"} }
	tests := []struct {
		name  string
		setup func(q *SRPT)
		want  []string
	}{
		{"arrival order without estimates", func(q *SRPT) {
			q.Push(res("a"))
			q.Push(res("b"))
		}, []string{"a", "b"}},
		{"shortest remaining work first", func(q *SRPT) {
			q.Push(res("a"))
			q.Push(res("b"))
			q.Push(res("c"))
			q.SetWork("a", 100)
			q.SetWork("b", 5)
			q.SetWork("gone", 1)
		}, []string{"b", "a", "c"}},
		{"estimate set after queueing reorders", func(q *SRPT) {
			q.Push(res("a"))
			q.Push(res("b"))
			q.SetWork("b", 1)
		}, []string{"b", "a"}},
		{"sticky first", func(q *SRPT) {
			q.Push(res("a"))
			q.SetWork("a", 1)
			q.PushSticky(res("s"))
		}, []string{"s", "a"}},
		{"priority above work", func(q *SRPT) {
			q.Push(res("a"))
			q.SetWork("a", 1)
			q.Push(queue.Reservation{RequestID: "p", Priority: -1})
		}, []string{"p", "a"}},
		{"starving reservation served after limit passes", func(q *SRPT) {
			q.Push(res("long"))
			q.SetWork("long", 1000)
			for i := range 4 {
				id := fmt.Sprint("s", i)
				q.Push(res(id))
				q.SetWork(id, 1)
			}
		}, []string{"s0", "s1", "long", "s2", "s3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := NewSRPT(2)
			tc.setup(q)
			var got []string
			for {
				r, ok := q.Pop()
				if !ok {
					break
				}
				got = append(got, r.RequestID)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("served %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSRPTUsers(t *testing.T) {
	q := NewSRPT(0)
	q.Push(queue.Reservation{RequestID: "a", User: "x"})
	q.PushSticky(queue.Reservation{RequestID: "b", User: "y"})
	q.Push(queue.Reservation{RequestID: "c", User: "x"})
	q.Pop()
	out := map[string]int{}
	q.QueuedByUser(out)
	if out["x"]+out["y"] != 2 || q.Len() != 2 {
		t.Fatalf("%v, len %d", out, q.Len())
	}
}
