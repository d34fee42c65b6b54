package queue

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sparrowfleet/sparrow/core/cmmf"
)

func TestChoosyQuotaOrder(t *testing.T) {
	tests := []struct {
		name    string
		running map[string]float64
		alloc   map[string]float64
		here    []string // Launched calls before the snapshot: tasks running here
		push    []string
		want    []string
	}{
		{
			name: "a user under its quota goes before a lower share over it",
			// 4 slots in use once this one is placed: a's quota 3 (has 3),
			// b's 1 (has 0). b is served although its share is higher.
			running: map[string]float64{"a": 10, "b": 40},
			alloc:   map[string]float64{"a": 3, "b": 1},
			here:    []string{"a", "a", "a"},
			push:    []string{"a1", "b1"},
			want:    []string{"b1", "a1"},
		},
		{
			name:    "among users under quota, the lowest share",
			running: map[string]float64{"a": 10, "b": 4},
			alloc:   map[string]float64{"a": 1, "b": 1},
			push:    []string{"a1", "b1"},
			want:    []string{"b1", "a1"},
		},
		{
			name: "a user allocated nothing here waits behind allocated users",
			// h's share 6 is lower than a's 10, but not starved (< 5).
			running: map[string]float64{"a": 10, "h": 6},
			alloc:   map[string]float64{"a": 4},
			push:    []string{"h1", "a1", "a2"},
			want:    []string{"a1", "a2", "h1"},
		},
		{
			name: "a starved user allocated nothing here goes first",
			// h's share 4 < Starved x a's 10.
			running: map[string]float64{"a": 10, "h": 4},
			alloc:   map[string]float64{"a": 4},
			push:    []string{"a1", "h1"},
			want:    []string{"h1", "a1"},
		},
		{
			name: "a user the guidance does not know yet counts as under quota",
			// n is new (share 0); a is under quota too (share 10).
			running: map[string]float64{"a": 10},
			alloc:   map[string]float64{"a": 4},
			push:    []string{"a1", "n1"},
			want:    []string{"n1", "a1"},
		},
		{
			name: "everyone over quota: lowest share",
			// 3 running + 1 = 4 in use: a's quota 2 (has 2), b's 2 (has 2
			// after... ) here a, a, b; quotas a 2, b 2: a at 2 (over), b at 1
			// (under). b first; then with b at 1 still (no launch), b again.
			running: map[string]float64{"a": 1, "b": 9},
			alloc:   map[string]float64{"a": 1, "b": 1},
			here:    []string{"a", "a", "b"},
			push:    []string{"a1", "b1"},
			want:    []string{"b1", "a1"},
		},
		{
			name:    "no allocation: share alone",
			running: map[string]float64{"a": 10, "b": 4},
			here:    []string{"b", "b", "b"},
			push:    []string{"a1", "b1"},
			want:    []string{"b1", "a1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustChoosy(t, 1, nil)
			for _, u := range tt.here {
				c.Launched(u)
			}
			if ok, err := c.SetGuidance(1, tt.running, tt.alloc); !ok || err != nil {
				t.Fatalf("SetGuidance = %v, %v", ok, err)
			}
			pushAll(c, rvs(tt.push...))
			if got := drain(t, c); !slices.Equal(got, tt.want) {
				t.Fatalf("order %v, want %v", got, tt.want)
			}
		})
	}
}

func TestChoosySetGuidanceRejects(t *testing.T) {
	for _, bad := range []float64{math.NaN(), math.Inf(1), -1} {
		c := mustChoosy(t, 1, nil)
		if ok, err := c.SetGuidance(1, nil, map[string]float64{"a": bad}); ok || err == nil {
			t.Fatalf("allocation %v accepted", bad)
		}
		if _, ok := c.Coordinated(); ok {
			t.Fatalf("allocation %v: a snapshot is in force after the error", bad)
		}
	}
	c := mustChoosy(t, 1, nil)
	c.SetGuidance(1, map[string]float64{"a": 1}, map[string]float64{"a": 2, "b": 0})
	if q, ok := c.Quota("b"); !ok || q != 0 {
		t.Fatalf("quota of a user allocated 0 = %v %v, want 0 true", q, ok)
	}
	if q, _ := c.Quota("a"); q != 1 {
		t.Fatalf("quota of the only allocated user on an idle node = %v, want 1 (the slot being placed)", q)
	}
	c.ClearShares()
	if _, ok := c.Quota("a"); ok {
		t.Fatal("quota reported after ClearShares")
	}
}

// TestChoosyWorkConserving: whatever the guidance and whatever runs here,
// a node whose slots are free and whose queue holds reservations serves
// one: no slot idles while a queued reservation could run on it. Each
// pop hands out exactly one queued reservation.
func TestChoosyWorkConserving(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	users := []string{"a", "b", "c", "d", "e"}
	for trial := range 200 {
		c := mustChoosy(t, 1, map[string]float64{"b": 2})
		slots := 1 + rng.IntN(6)
		var running []string
		queued := map[string]int{}
		version := uint64(0)
		for step := range 300 {
			switch op := rng.IntN(10); {
			case op < 4:
				u := users[rng.IntN(len(users))]
				c.Push(Reservation{User: u, RequestID: u, App: "app", Scheduler: "s"})
				queued[u]++
			case op < 6 && len(running) > 0:
				i := rng.IntN(len(running))
				c.Finished(running[i])
				running = slices.Delete(running, i, i+1)
			case op < 7:
				version++
				run, alloc := map[string]float64{}, map[string]float64{}
				for _, u := range users {
					if rng.IntN(3) > 0 {
						run[u] = float64(rng.IntN(30))
					}
					if rng.IntN(2) == 0 {
						alloc[u] = float64(rng.IntN(8))
					}
				}
				if _, err := c.SetGuidance(version, run, alloc); err != nil {
					t.Fatal(err)
				}
			case op < 8:
				c.ClearShares()
			}
			for len(running) < slots && c.Len() > 0 {
				r, ok := c.Pop()
				if !ok {
					t.Fatalf("trial %d step %d: Pop failed with %d queued and %d of %d slots free", trial, step, c.Len(), slots-len(running), slots)
				}
				if queued[r.User] == 0 {
					t.Fatalf("trial %d step %d: served %s, which had nothing queued", trial, step, r.User)
				}
				queued[r.User]--
				c.Launched(r.User)
				running = append(running, r.User)
			}
			if n := sumCounts(queued); n != c.Len() {
				t.Fatalf("trial %d step %d: Len %d, want %d", trial, step, c.Len(), n)
			}
		}
	}
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// mesosFleet is the Choosy paper's §7.3 cluster, four machine types of
// nodes with slots each, and its four users, every one backlogged on every
// node it may use: a small model of a fleet of Choosy node monitors with
// a coordinator refreshing counts every period.
type mesosFleet struct {
	types  []string
	users  []string
	elig   map[string][]string // user -> types
	nodes  int                 // per type
	slots  int                 // per node
	queues []*Choosy
	ntype  []int
	// running[n] are the users of the tasks on node n, with their end
	// times.
	running [][]fleetTask
}

type fleetTask struct {
	user string
	end  int
}

func newMesosFleet(t *testing.T, users []string) *mesosFleet {
	all := map[string][]string{
		"hadoop": {"S", "H", "C", "G"}, "spark": {"H"}, "cuda": {"G"}, "mpi": {"C", "G"},
	}
	f := &mesosFleet{types: []string{"S", "H", "C", "G"}, users: users, elig: map[string][]string{}, nodes: 4, slots: 4}
	for _, u := range users {
		f.elig[u] = all[u]
	}
	for ti, ty := range f.types {
		for range f.nodes {
			q := mustChoosy(t, 1, nil)
			for _, u := range users {
				if slices.Contains(f.elig[u], ty) {
					// A deep backlog: every user stays queued everywhere it
					// may run.
					for range 1000 {
						q.Push(Reservation{User: u, RequestID: u, App: "app", Scheduler: "s"})
					}
				}
			}
			f.queues = append(f.queues, q)
			f.ntype = append(f.ntype, ti)
			f.running = append(f.running, nil)
		}
	}
	return f
}

// solve returns the CMMF targets and per-type allocations: the oracle.
func (f *mesosFleet) solve(t *testing.T) (map[string]float64, map[string]map[string]float64) {
	p := &cmmf.Problem{}
	for _, ty := range f.types {
		p.Types = append(p.Types, cmmf.MachineType{Name: ty, Slots: int64(f.nodes * f.slots)})
	}
	for _, u := range f.users {
		p.Users = append(p.Users, cmmf.User{Name: u, Weight: 1, Demand: cmmf.Unlimited, Types: f.elig[u]})
	}
	a, err := cmmf.Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	target, alloc := map[string]float64{}, map[string]map[string]float64{}
	for i, u := range f.users {
		target[u] = a.Total[i]
		for ti, x := range a.Matrix[i] {
			if x > cmmf.Tolerance {
				if alloc[f.types[ti]] == nil {
					alloc[f.types[ti]] = map[string]float64{}
				}
				alloc[f.types[ti]][u] = x
			}
		}
	}
	return target, alloc
}

// run steps the fleet in ticks; tasks last 15-25 ticks; the coordinator
// installs the counts (and, with quotas, the allocations) every period
// ticks. It returns each user's mean running count per period, from the
// first period on.
func (f *mesosFleet) run(t *testing.T, rng *rand.Rand, quotas bool, periods, period int) map[string][]float64 {
	_, alloc := f.solve(t)
	means := map[string][]float64{}
	sum := map[string]int{}
	for tick := range periods * period {
		if tick%period == 0 {
			count := map[string]float64{}
			for _, ts := range f.running {
				for _, x := range ts {
					count[x.user]++
				}
			}
			for _, u := range f.users {
				if tick > 0 {
					means[u] = append(means[u], float64(sum[u])/float64(period))
				}
				sum[u] = 0
				count[u] += 0 // every user is known to the coordinator
			}
			for n, q := range f.queues {
				var a map[string]float64
				if quotas {
					a = alloc[f.types[f.ntype[n]]]
				}
				if _, err := q.SetGuidance(uint64(tick+1), count, a); err != nil {
					t.Fatal(err)
				}
			}
		}
		for n, q := range f.queues {
			kept := f.running[n][:0]
			for _, x := range f.running[n] {
				if x.end <= tick {
					q.Finished(x.user)
					q.Push(Reservation{User: x.user, RequestID: x.user, App: "app", Scheduler: "s"})
				} else {
					kept = append(kept, x)
				}
			}
			f.running[n] = kept
			for len(f.running[n]) < f.slots {
				r, ok := q.Pop()
				if !ok {
					t.Fatal("a backlogged node has nothing to serve")
				}
				q.Launched(r.User)
				f.running[n] = append(f.running[n], fleetTask{user: r.User, end: tick + 15 + rng.IntN(11)})
			}
		}
		for _, ts := range f.running {
			for _, x := range ts {
				sum[x.user]++
			}
		}
	}
	return means
}

// TestChoosyQuotasHoldTheCMMFSplit runs the model fleet with the four
// users (CMMF: a quarter of the cluster each, every user on its own type)
// and with hadoop, spark and mpi (spark a quarter, hadoop and mpi 3/8),
// against the CMMF solver as the oracle. With node quotas every user's
// per-period mean stays within 0.03 of the cluster of its CMMF share
// once converged, and swings less than 0.1 between periods. It logs the
// same figures for ranking by share alone.
func TestChoosyQuotasHoldTheCMMFSplit(t *testing.T) {
	const periods, period, settle = 30, 50, 3
	quotaSwing := map[int]float64{}
	for _, users := range [][]string{{"hadoop", "spark", "cuda", "mpi"}, {"hadoop", "spark", "mpi"}} {
		for _, quotas := range []bool{true, false} {
			f := newMesosFleet(t, users)
			target, _ := f.solve(t)
			total := float64(len(f.types) * f.nodes * f.slots)
			means := f.run(t, rand.New(rand.NewPCG(5, 6)), quotas, periods, period)
			worst := 0.0
			for _, u := range users {
				dev, swing := 0.0, 0.0
				m := means[u][settle:]
				for i, x := range m {
					dev += math.Abs(x-target[u]) / total
					if i > 0 {
						swing = max(swing, math.Abs(x-m[i-1])/total)
					}
				}
				dev /= float64(len(m))
				t.Logf("users %v quotas %v: %s target %.3f mean |share - CMMF| %.4f, largest swing %.4f", users, quotas, u, target[u]/total, dev, swing)
				if quotas && (dev > 0.03 || swing > 0.1) {
					t.Errorf("users %v: %s deviates %.4f (> 0.03) or swings %.4f (> 0.1) from its CMMF share %.3f", users, u, dev, swing, target[u]/total)
				}
				worst = max(worst, swing)
			}
			if quotas {
				quotaSwing[len(users)] = worst
			} else if worst < quotaSwing[len(users)] {
				t.Errorf("users %v: ranking by share alone swings %.4f at most, less than with quotas (%.4f)", users, worst, quotaSwing[len(users)])
			}
		}
	}
}

// TestChoosyOwedDecidesNearTheLowestShare: on a node with other tasks
// running, among the users under quota whose shares lie within Band of
// the lowest, the one this node owes most goes first; further apart, or
// with nothing running here (a node of one slot placing its only task),
// the lowest share does.
func TestChoosyOwedDecidesNearTheLowestShare(t *testing.T) {
	tests := []struct {
		name    string
		running map[string]float64
		events  []string // after the guidance: "+u" launches, "-u" finishes a task of u here
		want    string
	}{
		{
			// With a allocated 3 of 4, the second launch of a (1 slot in
			// use) leaves a owed 0.75 - 1 and b 0.25; both are under their
			// quotas of 3 slots (2.25 and 0.75). b's share 10 is within
			// 9 x 1.5 + 0.5 of a's (7 + its 2 launches).
			name:    "owed most, within the band",
			running: map[string]float64{"a": 7, "b": 10},
			events:  []string{"+a", "+a"},
			want:    "b",
		},
		{
			name:    "lowest share, outside the band",
			running: map[string]float64{"a": 7, "b": 20},
			events:  []string{"+a", "+a"},
			want:    "a",
		},
		{
			name:    "lowest share, with nothing running here",
			running: map[string]float64{"a": 7, "b": 10},
			events:  []string{"+a", "+a", "-a", "-a"},
			want:    "a",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustChoosy(t, 1, nil)
			if _, err := c.SetGuidance(1, tt.running, map[string]float64{"a": 3, "b": 1}); err != nil {
				t.Fatal(err)
			}
			for _, e := range tt.events {
				if e[0] == '+' {
					c.Launched(e[1:])
				} else {
					c.Finished(e[1:])
				}
			}
			pushAll(c, rvs("a1", "b1"))
			if r, _ := c.Pop(); r.User != tt.want {
				t.Fatalf("served %s first, want %s", r.User, tt.want)
			}
		})
	}
}
