package gen

import (
	"math/rand/v2"

	"github.com/sparrowfleet/sparrow/core/flow"
)

// Params shapes a Quincy graph. Costs are in units of one MB read across a
// rack switch (ψ = 1 per MB); a core-switch MB costs Xi, a second of waiting
// costs Omega units (Quincy's ω = 0.5 per second, where 1 GB across a rack
// costs 1: 0.5 × 1000 = 500), and each second a task has run is worth 1000.
type Params struct {
	Computers int // M
	Racks     int // L; computers are spread evenly
	Jobs      int // J; each job has one root task, already running
	Tasks     int // N, worker tasks in all, spread evenly over jobs
	Xi        int64
	Omega     int64
	// Fair selects QFP's fairness (E_j = F_j = the fair share A_j);
	// otherwise Q's (E_j = 1, F_j = N_j).
	Fair bool
}

// Default returns Quincy's constants (ξ = 2, ω = 0.5) with QFP fairness for
// a cluster of the given size, with 30 computers per rack.
func Default(computers, jobs, tasks int) Params {
	racks := max(1, (computers+29)/30)
	return Params{Computers: computers, Racks: racks, Jobs: jobs, Tasks: tasks, Xi: 2, Omega: 500, Fair: true}
}

// Graph is a Quincy-shaped network with enough bookkeeping to let tasks
// finish and arrive (Churn), as they do between two solves.
type Graph struct {
	Net    *flow.Network
	p      Params
	rng    *rand.Rand
	sink   int
	x      int
	rack   []int // rack node per rack
	comp   []int // computer node per computer
	unsch  []int // U_j node per job
	f      []int64
	n      []int64 // live workers per job
	tasks  []task
	alive  []int // indices into tasks of live workers
	busy   []bool
	rackOf []int
}

type task struct {
	job  int
	node int
	arcs []int
	on   int // computer it runs on, or -1
}

// Quincy builds a Quincy-shaped graph from p, drawing data placement, wait
// and run times from rng. Each job's first F_j workers run on computers
// chosen at random, the rest wait.
func Quincy(p Params, rng *rand.Rand) *Graph {
	g := &Graph{Net: flow.New(0), p: p, rng: rng}
	net := g.Net
	g.sink = net.AddNode()
	g.x = net.AddNode()
	for l := 0; l < p.Racks; l++ {
		g.rack = append(g.rack, net.AddNode())
	}
	perRack := make([]int64, p.Racks)
	for m := 0; m < p.Computers; m++ {
		l := m * p.Racks / p.Computers
		g.rackOf = append(g.rackOf, l)
		c := net.AddNode()
		g.comp = append(g.comp, c)
		perRack[l]++
		net.AddArc(g.rack[l], c, 0, 1, 0)
		net.AddArc(c, g.sink, 0, 1, 0)
	}
	for l := range p.Racks {
		net.AddArc(g.x, g.rack[l], 0, perRack[l], 0)
	}
	g.busy = make([]bool, p.Computers)
	// Roots run on distinct computers, pinned there.
	free := rng.Perm(p.Computers)
	var sinkDemand int64
	rootsFree := p.Computers - p.Jobs
	for j := 0; j < p.Jobs; j++ {
		r := net.AddNode()
		net.SetSupply(r, 1)
		m := free[j]
		g.busy[m] = true
		net.AddArc(r, g.comp[m], 0, 1, 0)
		g.unsch = append(g.unsch, net.AddNode())
		nj := int64(p.Tasks / p.Jobs)
		if j < p.Tasks%p.Jobs {
			nj++
		}
		var e, f int64
		if p.Fair {
			a := min(int64(rootsFree/p.Jobs), nj)
			e, f = a, a
		} else {
			e, f = min(1, nj), nj
		}
		g.f = append(g.f, f)
		g.n = append(g.n, 0)
		net.AddArc(g.unsch[j], g.sink, 0, f-e, 0)
		sinkDemand += f + 1
		for k := int64(0); k < nj; k++ {
			g.addTask(j, k < f)
		}
	}
	net.SetSupply(g.sink, -sinkDemand)
	return g
}

// addTask adds a worker of job j with random input placement; if run, it
// is placed running on a random idle computer (if any).
func (g *Graph) addTask(j int, run bool) {
	p, net, rng := g.p, g.Net, g.rng
	w := net.AddNode()
	net.SetSupply(w, 1)
	g.n[j]++
	net.SetSupply(g.unsch[j], g.f[j]-g.n[j])
	t := task{job: j, node: w, on: -1}
	// Input: 3 blocks of 100..1400 MB on random computers.
	// Ordered slices, not maps, so that arcs are added in a seeded order.
	var total int64
	var on []holding     // bytes per computer holding input
	var byRack []holding // bytes per rack holding input
	for range 3 {
		m := rng.IntN(p.Computers)
		b := 100 + rng.Int64N(1300)
		on = add(on, m, b)
		byRack = add(byRack, g.rackOf[m], b)
		total += b
	}
	rackBytes := func(l int) int64 { return get(byRack, l) }
	cost := func(rackBytes, coreBytes int64) int64 { return rackBytes + p.Xi*coreBytes }
	wait := int64(rng.IntN(600)) * p.Omega
	t.arcs = append(t.arcs, net.AddArc(w, g.unsch[j], 0, 1, wait))
	// Worst computer: one in the rack holding least of the input.
	worst := int64(0)
	for l := range p.Racks {
		worst = max(worst, cost(rackBytes(l), total-rackBytes(l)))
	}
	t.arcs = append(t.arcs, net.AddArc(w, g.x, 0, 1, worst))
	for _, h := range byRack {
		if l, b := h.at, h.bytes; b*10 > total {
			t.arcs = append(t.arcs, net.AddArc(w, g.rack[l], 0, 1, cost(b, total-b)))
		}
	}
	if run {
		if m := g.idle(); m >= 0 {
			t.on = m
			g.busy[m] = true
		}
	}
	for _, h := range on {
		if m, b := h.at, h.bytes; b*10 > total && m != t.on {
			l := g.rackOf[m]
			t.arcs = append(t.arcs, net.AddArc(w, g.comp[m], 0, 1, cost(rackBytes(l)-b, total-rackBytes(l))))
		}
	}
	if t.on >= 0 {
		l := g.rackOf[t.on]
		d := cost(rackBytes(l)-get(on, t.on), total-rackBytes(l))
		ran := int64(rng.IntN(120)) * 1000
		t.arcs = append(t.arcs, net.AddArc(w, g.comp[t.on], 0, 1, d-ran))
	}
	g.alive = append(g.alive, len(g.tasks))
	g.tasks = append(g.tasks, t)
}

// idle returns a random idle computer, or -1.
func (g *Graph) idle() int {
	for range 8 {
		if m := g.rng.IntN(g.p.Computers); !g.busy[m] {
			return m
		}
	}
	for m, b := range g.busy {
		if !b {
			return m
		}
	}
	return -1
}

// Churn makes k workers finish (their node and arcs are zeroed, freeing
// their computer) and k new ones arrive in random jobs, keeping every job
// above its F_j so that the fairness bounds stay feasible.
func (g *Graph) Churn(k int) {
	net := g.Net
	for done := 0; done < k && len(g.alive) > 0; {
		i := g.rng.IntN(len(g.alive))
		t := &g.tasks[g.alive[i]]
		if g.n[t.job] <= g.f[t.job]+1 {
			done++ // would break the job's fairness bounds; skip it
			continue
		}
		g.alive[i] = g.alive[len(g.alive)-1]
		g.alive = g.alive[:len(g.alive)-1]
		net.SetSupply(t.node, 0)
		for _, a := range t.arcs {
			net.SetArcBounds(a, 0, 0)
		}
		if t.on >= 0 {
			g.busy[t.on] = false
		}
		g.n[t.job]--
		net.SetSupply(g.unsch[t.job], g.f[t.job]-g.n[t.job])
		done++
	}
	for range k {
		g.addTask(g.rng.IntN(g.p.Jobs), false)
	}
}

// holding is an amount of a task's input held at a computer or rack.
type holding struct {
	at    int
	bytes int64
}

func add(hs []holding, at int, b int64) []holding {
	for i := range hs {
		if hs[i].at == at {
			hs[i].bytes += b
			return hs
		}
	}
	return append(hs, holding{at, b})
}

func get(hs []holding, at int) int64 {
	for _, h := range hs {
		if h.at == at {
			return h.bytes
		}
	}
	return 0
}

// Tasks returns the number of live worker tasks.
func (g *Graph) Tasks() int { return len(g.alive) }
