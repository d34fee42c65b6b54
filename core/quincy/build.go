package quincy

import "github.com/sparrowfleet/sparrow/core/flow"

// Build constructs the Appendix's flow network for the snapshot under the
// policy. Nodes come in the Appendix's column order: roots, workers, the
// unscheduled nodes U_j, X, the racks R_l, the computers C_m and S, 2J + N
// + L + M + 2 in all when every job has a root. Arcs come task by task (a
// root's, then each worker's), then U_j → S, X → R_l, R_l → C_m and C_m →
// S. Under Q and QF a running worker gets only its arc to its own
// computer: §4.3 sets the capacities of all its other arcs to zero, and an
// arc of capacity zero is left out rather than added.
func Build(s *State, pol Policy, p Params) (*Graph, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	lo, hi, err := allocate(s, pol)
	if err != nil {
		return nil, err
	}
	c := &s.Cluster
	tp := newTopology(c)
	J, L, M := len(s.Jobs), c.Racks, len(c.Computers)
	N, roots := 0, 0
	for _, job := range s.Jobs {
		N += len(job.Tasks)
		if job.Root != nil {
			roots++
		}
	}
	g := &Graph{
		Net:    flow.New(roots + N + J + 1 + L + M + 1),
		Policy: pol, Params: p, State: s,
		RootNode: make([]int, J), TaskNode: make([][]int, J), UnscheduledNode: make([]int, J),
		RackNode: make([]int, L), ComputerNode: make([]int, M),
		RootArcIndex: make([]int, J), TaskArcs: make([][]int, J), taskEnd: make([][]int, J),
		FairArcIndex: make([]int, J), ClusterRackArcIndex: make([]int, L),
		RackComputerArcIndex: make([]int, M), SinkArcIndex: make([]int, M),
		Min: lo, Max: hi, topo: tp, locs: make([][]locality, J),
	}
	// Workers have about 8 arcs each on Quincy-shaped inputs (U, X, two
	// racks, three to six computers); reserving them up front saves the
	// index's regrowth on graphs of a million arcs.
	g.Arcs = make([]ArcInfo, 0, roots+8*N+J+L+2*M)
	// Number the nodes column by column.
	next := 0
	for j, job := range s.Jobs {
		g.RootNode[j] = -1
		if job.Root != nil {
			g.RootNode[j] = next
			next++
		}
	}
	for j, job := range s.Jobs {
		g.TaskNode[j] = make([]int, len(job.Tasks))
		for n := range job.Tasks {
			g.TaskNode[j][n] = next
			next++
		}
	}
	for j := range s.Jobs {
		g.UnscheduledNode[j] = next
		next++
	}
	g.ClusterNode = next
	next++
	for l := range L {
		g.RackNode[l] = next
		next++
	}
	for m := range M {
		g.ComputerNode[m] = next
		next++
	}
	g.SinkNode = next

	net := g.Net
	arc := func(from, to int, lower, upper, cost int64, info ArcInfo) int {
		g.Arcs = append(g.Arcs, info)
		return net.AddArc(from, to, lower, upper, cost)
	}
	var sink int64
	for j := range s.Jobs {
		job := &s.Jobs[j]
		// Root: supply 1, a single arc of cost 0 to its computer if placed
		// (the scheduler has no choice) or to X if not.
		g.RootArcIndex[j] = -1
		if job.Root != nil {
			r := g.RootNode[j]
			net.SetSupply(r, 1)
			sink++
			info := ArcInfo{Kind: RootArc, Job: int32(j), Task: -1, Rack: -1, Computer: -1}
			to := g.ClusterNode
			if m := job.Root.Computer; m >= 0 {
				to = g.ComputerNode[m]
				info.Computer = int32(m)
			}
			g.RootArcIndex[j] = arc(r, to, 0, 1, 0, info)
		}
		g.TaskArcs[j] = make([]int, len(job.Tasks))
		g.taskEnd[j] = make([]int, len(job.Tasks))
		g.locs[j] = make([]locality, len(job.Tasks))
		for n := range job.Tasks {
			g.TaskArcs[j][n] = net.NumArcs()
			g.locs[j][n] = tp.summarize(job.Tasks[n].Input)
			g.addTask(j, n, arc)
			g.taskEnd[j][n] = net.NumArcs()
		}
	}
	// U_j → S carries the workers left unscheduled: at least N_j − F_j and
	// at most N_j − E_j of them. The Appendix ships the lower bound up
	// front (§4.1): U_j supplies F_j − N_j and the arc keeps F_j − E_j.
	for j := range s.Jobs {
		nj, e, f := int64(len(s.Jobs[j].Tasks)), int64(lo[j]), int64(hi[j])
		u := g.UnscheduledNode[j]
		info := ArcInfo{Kind: FairArc, Job: int32(j), Task: -1, Rack: -1, Computer: -1}
		if p.NativeLowerBounds {
			g.FairArcIndex[j] = arc(u, g.SinkNode, nj-f, nj-e, 0, info)
			sink += nj
		} else {
			net.SetSupply(u, f-nj)
			g.FairArcIndex[j] = arc(u, g.SinkNode, 0, f-e, 0, info)
			sink += f
		}
	}
	for l := range L {
		g.ClusterRackArcIndex[l] = arc(g.ClusterNode, g.RackNode[l], 0, int64(tp.rackSlots[l]), 0,
			ArcInfo{Kind: ClusterRackArc, Job: -1, Task: -1, Rack: int32(l), Computer: -1})
	}
	for m, comp := range c.Computers {
		g.RackComputerArcIndex[m] = arc(g.RackNode[comp.Rack], g.ComputerNode[m], 0, int64(comp.slots()), 0,
			ArcInfo{Kind: RackComputerArc, Job: -1, Task: -1, Rack: int32(comp.Rack), Computer: int32(m)})
	}
	// C_m → S: the paper prints no cost for it; 0 (notes §6.4).
	for m, comp := range c.Computers {
		g.SinkArcIndex[m] = arc(g.ComputerNode[m], g.SinkNode, 0, int64(comp.slots()), 0,
			ArcInfo{Kind: SinkArc, Job: -1, Task: -1, Rack: -1, Computer: int32(m)})
	}
	net.SetSupply(g.SinkNode, -sink)
	return g, nil
}

// addTask adds worker n of job j: its unit of supply and its arcs, priced
// as the Appendix says.
func (g *Graph) addTask(j, n int, arc func(from, to int, lower, upper, cost int64, info ArcInfo) int) {
	s, p, tp := g.State, &g.Params, g.topo
	t := &s.Jobs[j].Tasks[n]
	loc := &g.locs[j][n]
	w := g.TaskNode[j][n]
	g.Net.SetSupply(w, 1)
	psi, xi := p.RackCost, p.coreCost(g.Policy)
	capped := func(c int64) int64 { return min(c, p.MaxCost) }
	info := func(k ArcKind, rack, comp int) ArcInfo {
		return ArcInfo{Kind: k, Job: int32(j), Task: int32(n), Rack: int32(rack), Computer: int32(comp)}
	}
	running := t.State == Running
	if running && !g.Policy.Preempts() {
		// Q and QF: every other arc has capacity zero (§4.3).
		arc(w, g.ComputerNode[t.Computer], 0, 1, g.runningCost(j, n), info(RunningArc, -1, t.Computer))
		return
	}
	// Unscheduled: υ = ω·ν (unscheduledCost).
	arc(w, g.UnscheduledNode[j], 0, 1, g.unscheduledCost(j, n), info(UnscheduledArc, -1, -1))
	// AnyComputer: α, the data cost on the worst computer in the cluster.
	arc(w, g.ClusterNode, 0, 1, capped(dataCost(loc.worst(tp, psi, xi, p.GB), psi, xi, p.GB)), info(ClusterArc, -1, -1))
	// WithinRack: ρ_l for each rack holding more than δ^r of the input.
	for _, r := range loc.racks {
		if preferred(r.bytes, loc.total, p.PreferRack) {
			arc(w, g.RackNode[r.id], 0, 1, capped(dataCost(loc.inRack(tp, r.id), psi, xi, p.GB)), info(RackArc, r.id, -1))
		}
	}
	// Computer: γ_m for each computer holding more than δ^c; the one it
	// runs on, if preferred, gets the running cost instead.
	onPreferred := false
	for _, a := range loc.comps {
		if !preferred(a.bytes, loc.total, p.PreferComputer) {
			continue
		}
		if running && a.id == t.Computer {
			onPreferred = true
			arc(w, g.ComputerNode[a.id], 0, 1, g.runningCost(j, n), info(RunningArc, -1, a.id))
			continue
		}
		arc(w, g.ComputerNode[a.id], 0, 1, capped(dataCost(loc.onComputer(tp, a.id), psi, xi, p.GB)), info(ComputerArc, -1, a.id))
	}
	if running && !onPreferred {
		arc(w, g.ComputerNode[t.Computer], 0, 1, g.runningCost(j, n), info(RunningArc, -1, t.Computer))
	}
}

// unscheduledCost is υ = ω·ν for worker n of job j: ν is the total time it
// has spent waiting (frozen while it runs). Capped at Ω for
// starvation-freedom (Appendix); we cap running tasks' costs too, which
// changes nothing below Ω and keeps every cost a bounded int64.
func (g *Graph) unscheduledCost(j, n int) int64 {
	t := &g.State.Jobs[j].Tasks[n]
	return min(timeCost(t.waited(g.State.Now), g.Params.TimeGrain, g.Params.WaitCost), g.Params.MaxCost)
}

// runningCost is the cost d* − p* of the arc from worker n of job j to the
// computer it runs on: its data cost there less the time it has run, so
// that keeping it gets cheaper the longer it has run (Appendix). θ is in
// seconds, weighted by RunCost. d* is capped at Ω like every data cost and
// the result floored at −2Ω.
func (g *Graph) runningCost(j, n int) int64 {
	s, p, tp := g.State, &g.Params, g.topo
	t := &s.Jobs[j].Tasks[n]
	loc := &g.locs[j][n]
	psi, xi := p.RackCost, p.coreCost(g.Policy)
	m := t.Computer
	var d pair
	switch {
	case p.ExactRunningCost || preferred(find(loc.comps, m), loc.total, p.PreferComputer):
		d = loc.onComputer(tp, m)
	case preferred(find(loc.racks, tp.rackOf(m)), loc.total, p.PreferRack):
		d = loc.inRack(tp, tp.rackOf(m))
	default:
		// A rack off the preferred list is approximated by (𝒳^X/P, 𝒳^X),
		// P being the number of racks (Appendix).
		x := loc.worst(tp, psi, xi, p.GB).core
		d = pair{rack: x / int64(s.Cluster.Racks), core: x}
	}
	dstar := min(dataCost(d, psi, xi, p.GB), p.MaxCost)
	pstar := min(timeCost(t.ran(s.Now), p.TimeGrain, p.RunCost), 4*p.MaxCost)
	return max(dstar-pstar, -2*p.MaxCost)
}
