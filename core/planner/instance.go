package planner

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/sparrowfleet/sparrow/core/perfmodel"
)

// inArc is an arc as its consumer sees it.
type inArc struct {
	from    int
	bytes   float64
	pipe    bool
	channel int
}

// instance is a validated problem compiled to indices.
type instance struct {
	p       Problem
	n, m    int
	models  []perfmodel.Model // per task
	in      [][]inArc         // per task, its in-arcs
	succ    [][]int           // per task, its consumers
	inputs  [][]perfmodel.Part
	inputCh [][]int
	write   [][]float64 // per task, bytes per write channel; nil: scale with input
	prio    []int       // tasks in priority (branching) order, topological
	rank    []int       // rank[t] = position of t in prio
	class   []int       // identical-task class: the lowest task index of the class
	mclass  []int       // identical-machine class: lowest machine index with the same profile
	holds   []bool      // machine holds an input table (breaks its symmetry)
	lbDur   [][]float64 // per task, per machine: a lower bound of its isolated run time

	cache map[string]*placed // runs per task, machine and producers' machines
	key   []byte             // scratch for cache keys
}

// placed is a task's run on a machine with its producers placed.
type placed struct {
	steps  []perfmodel.Step
	iso    float64            // isolated run time
	demand []perfmodel.Demand // all its steps' demands
}

// maxCache bounds the runs cache; past it the cache starts over.
const maxCache = 1 << 20

func compile(p Problem) (*instance, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	g := p.Graph
	in := &instance{p: p, n: len(g.Tasks), m: len(p.Machines)}
	mindex := map[string]int{}
	for i, m := range p.Machines {
		mindex[m.Name] = i
	}
	tindex := map[string]int{}
	for i, t := range g.Tasks {
		tindex[t.Name] = i
	}
	in.models = make([]perfmodel.Model, in.n)
	in.in = make([][]inArc, in.n)
	in.succ = make([][]int, in.n)
	in.inputs = make([][]perfmodel.Part, in.n)
	in.inputCh = make([][]int, in.n)
	in.write = make([][]float64, in.n)
	in.holds = make([]bool, in.m)
	for i, t := range g.Tasks {
		in.models[i] = p.Models[t.Type]
		for _, x := range t.Inputs {
			in.inputs[i] = append(in.inputs[i], perfmodel.Part{Machine: mindex[x.Machine], Bytes: x.Bytes})
			in.inputCh[i] = append(in.inputCh[i], x.Channel)
			in.holds[mindex[x.Machine]] = true
		}
		if len(t.Output) > 0 {
			in.write[i] = append([]float64(nil), t.Output...)
		}
	}
	for _, a := range g.Arcs {
		f, t := tindex[a.From], tindex[a.To]
		in.in[t] = append(in.in[t], inArc{from: f, bytes: a.Bytes, pipe: a.Pipelined, channel: a.ReadChannel})
		in.succ[f] = append(in.succ[f], t)
		if a.Bytes == 0 {
			continue
		}
		w := in.write[f]
		for len(w) <= a.WriteChannel {
			w = append(w, 0)
		}
		w[a.WriteChannel] += a.Bytes
		in.write[f] = w
	}
	in.mclass = make([]int, in.m)
	for i := range in.m {
		in.mclass[i] = i
		for j := range i {
			if !in.holds[i] && !in.holds[j] && p.Machines[i].Same(p.Machines[j]) {
				in.mclass[i] = in.mclass[j]
				break
			}
		}
	}
	if err := in.bounds(); err != nil {
		return nil, err
	}
	in.classes()
	in.priority()
	return in, nil
}

// binding returns task t's binding on machine mach with its producers on
// the machines in assign.
func (in *instance) binding(t, mach int, assign []int) perfmodel.Binding {
	b := perfmodel.Binding{Machine: mach, Write: in.write[t]}
	add := func(ch int, part perfmodel.Part) {
		for len(b.Read) <= ch {
			b.Read = append(b.Read, nil)
		}
		b.Read[ch] = append(b.Read[ch], part)
	}
	for j, part := range in.inputs[t] {
		add(in.inputCh[t][j], part)
	}
	for _, a := range in.in[t] {
		if a.bytes == 0 {
			continue // a pure precedence
		}
		add(a.channel, perfmodel.Part{Machine: assign[a.from], Bytes: a.bytes, Pipe: a.pipe})
	}
	return b
}

// steps returns task t's steps on machine mach given its producers' machines.
func (in *instance) steps(t, mach int, assign []int) ([]perfmodel.Step, error) {
	r, err := in.run(t, mach, assign)
	if err != nil {
		return nil, err
	}
	return r.steps, nil
}

// run returns task t's run on mach given its producers' machines, from the
// cache when it has been computed before: the search asks for the same few
// combinations many times.
func (in *instance) run(t, mach int, assign []int) (*placed, error) {
	in.key = binary.AppendUvarint(binary.AppendUvarint(in.key[:0], uint64(t)), uint64(mach))
	for _, a := range in.in[t] {
		if a.bytes > 0 {
			in.key = binary.AppendUvarint(in.key, uint64(assign[a.from]))
		}
	}
	if r, ok := in.cache[string(in.key)]; ok {
		return r, nil
	}
	s, err := in.models[t].Steps(in.p.Machines, in.binding(t, mach, assign))
	if err != nil {
		return nil, fmt.Errorf("task %q on %q: %w", in.p.Graph.Tasks[t].Name, in.p.Machines[mach].Name, err)
	}
	r := &placed{steps: s}
	for _, st := range s {
		r.iso += st.Isolated(in.p.Machines)
		r.demand = append(r.demand, st.Demands...)
	}
	if in.cache == nil || len(in.cache) >= maxCache {
		in.cache = map[string]*placed{}
	}
	in.cache[string(in.key)] = r
	return r, nil
}

// bounds computes lbDur: the task's time on each machine if every byte it
// reads could use the machine's disk and network interface together and
// pipelined bytes cost nothing — below its isolated time wherever its
// producers run, and contention only adds time.
func (in *instance) bounds() error {
	in.lbDur = make([][]float64, in.n)
	for t := range in.n {
		in.lbDur[t] = make([]float64, in.m)
		for mach := range in.m {
			assign := make([]int, in.n)
			for i := range assign {
				assign[i] = mach // every producer local: reads hit only this machine's disk
			}
			steps, err := in.steps(t, mach, assign)
			if err != nil {
				return err
			}
			mm := in.p.Machines[mach]
			total := 0.0
			for _, s := range steps {
				var cpu, rd, wr float64
				for _, d := range s.Demands {
					switch d.Resource {
					case perfmodel.CPU:
						cpu += d.Amount
					case perfmodel.DiskRead:
						rd += d.Amount
					case perfmodel.DiskWrite:
						wr += d.Amount
					}
				}
				total += s.Delay + max(cpu, wr/mm.DiskWrite, rd/(mm.DiskRead+mm.Net))
			}
			in.lbDur[t][mach] = total
		}
	}
	return nil
}

// classes groups identical tasks: same type, inputs, outputs, in-arcs and
// consumers, so that swapping two of them maps every plan to one of equal
// makespan.
func (in *instance) classes() {
	g := in.p.Graph
	key := make([]string, in.n)
	for t := range in.n {
		arcs := slices.Clone(in.in[t])
		slices.SortFunc(arcs, func(a, b inArc) int { return cmp.Compare(a.from, b.from) })
		succ := slices.Clone(in.succ[t])
		slices.Sort(succ)
		outs := []string{}
		for _, a := range g.Arcs {
			if a.From == g.Tasks[t].Name {
				outs = append(outs, fmt.Sprintf("%s/%v/%v/%d/%d", a.To, a.Bytes, a.Pipelined, a.WriteChannel, a.ReadChannel))
			}
		}
		slices.Sort(outs)
		key[t] = fmt.Sprintf("%s|%v|%v|%v|%v|%v|%v", g.Tasks[t].Type, in.inputs[t], in.inputCh[t], g.Tasks[t].Output, arcs, succ, outs)
	}
	in.class = make([]int, in.n)
	for t := range in.n {
		in.class[t] = t
		for u := range t {
			if key[u] == key[t] {
				in.class[t] = in.class[u]
				break
			}
		}
	}
}

// priority orders tasks topologically, longest remaining path first (a
// task's fastest time plus its consumers'), identical tasks adjacent.
func (in *instance) priority() {
	best := make([]float64, in.n)
	for t := range in.n {
		best[t] = slices.Min(in.lbDur[t])
	}
	level := make([]float64, in.n)
	// Reverse topological order by Kahn's algorithm on out-degrees.
	outdeg := make([]int, in.n)
	var preds = make([][]int, in.n)
	for t := range in.n {
		outdeg[t] = len(in.succ[t])
		for _, a := range in.in[t] {
			preds[t] = append(preds[t], a.from)
		}
	}
	var queue []int
	for t := range in.n {
		if outdeg[t] == 0 {
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		lv := 0.0
		for _, s := range in.succ[t] {
			lv = max(lv, level[s])
		}
		level[t] = best[t] + lv
		for _, p := range preds[t] {
			if outdeg[p]--; outdeg[p] == 0 {
				queue = append(queue, p)
			}
		}
	}
	indeg := make([]int, in.n)
	for t := range in.n {
		indeg[t] = len(in.in[t])
	}
	var ready []int
	for t := range in.n {
		if indeg[t] == 0 {
			ready = append(ready, t)
		}
	}
	less := func(a, b int) int {
		if c := cmp.Compare(level[b], level[a]); c != 0 {
			return c
		}
		if c := cmp.Compare(in.class[a], in.class[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	in.prio = in.prio[:0]
	for len(ready) > 0 {
		slices.SortFunc(ready, less)
		t := ready[0]
		ready = ready[1:]
		in.prio = append(in.prio, t)
		for _, s := range in.succ[t] {
			if indeg[s]--; indeg[s] == 0 {
				ready = append(ready, s)
			}
		}
	}
	in.rank = make([]int, in.n)
	for i, t := range in.prio {
		in.rank[t] = i
	}
}
