package racksim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/sparrowfleet/sparrow/core/quincy"
)

type taskState uint8

const (
	pending taskState = iota // not yet submitted (inputs not ready)
	waiting                  // submitted, not running
	running
	done
)

// Byte classes of §5.2's DT.
const (
	local = iota // read from the computer's own disks
	rack         // across its rack switch
	core         // across the core switch
)

// task is one worker.
type task struct {
	id, job, phase, index int
	input                 []quincy.Block
	cpu                   float64
	state                 taskState
	computer              int
	attempt               int
	since                 float64 // entered its current state
	startedAt             float64
	waitedBefore          time.Duration // ν and θ sums as core/quincy keeps them
	ranBefore             time.Duration
	flowsLeft             int
	delay                 float64 // small reads' time, added before CPU
	flowIDs               []int   // the current attempt's network flows
	outOn                 int     // computer holding its output once done
	completions           int     // times it finished (must end at 1)
	// queue-based schedulers' bookkeeping
	qgen         int32
	prefC, prefR []int
}

// job is one admitted instance.
type job struct {
	id         int
	inst       *Instance
	root       int // computer, -1 before admission
	admitted   float64
	finished   float64
	tasks      [][]int // task ids by phase and index
	phaseDone  []int
	live       []int // submitted, not done
	running    int
	partitions [][]int // replicas of each input partition
	ended      bool
	// GFH
	blocked      bool
	blockedSince float64
}

// flowRef maps a network flow to its task and byte class.
type flowRef struct {
	task, class, attempt int
	gather               bool
}

// engine is one run.
type engine struct {
	cfg      Config
	rng      *rand.Rand
	insts    []Instance
	rackOf   []int
	members  [][]int
	net      *Network
	ev       eventHeap
	tasks    []*task
	jobs     []*job
	active   []int // admitted jobs not yet ended, in admission order
	next     int   // next instance to admit
	occupant []int // -1 free, -2 a root, else a task id
	roots    int
	flows    []flowRef
	sched    scheduler
	now      float64
	dirty    bool
	res      Result
	cluster  quincy.Cluster
	lastProg float64
}

// scheduler is a policy: it is told about tasks becoming ready to run and
// computers freeing, and places work when dispatch is called after each
// batch of simultaneous events.
type scheduler interface {
	submitted(tk *task)
	dispatch(t float64) error
	event(e event) error
}

// Link numbering for the network.
func (e *engine) diskLink(m int) int  { return m }
func (e *engine) outLink(m int) int   { return len(e.rackOf) + m }
func (e *engine) inLink(m int) int    { return 2*len(e.rackOf) + m }
func (e *engine) upLink(l int) int    { return 3*len(e.rackOf) + l }
func (e *engine) downLink(l int) int  { return 3*len(e.rackOf) + len(e.members) + l }
func dur(t float64) time.Duration     { return time.Duration(math.Round(t * 1e9)) }
func (e *engine) computers() int      { return len(e.rackOf) }
func (e *engine) workerSlots() int    { return len(e.rackOf) - e.roots }
func (e *engine) free(m int) bool     { return e.occupant[m] == -1 }
func (e *engine) jobOf(tk *task) *job { return e.jobs[tk.job] }

// Run simulates one run of cfg and returns its measurements.
func Run(cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &engine{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))}
	for l, n := range cfg.RackSizes {
		var mem []int
		for range n {
			mem = append(mem, len(e.rackOf))
			e.rackOf = append(e.rackOf, l)
			e.cluster.Computers = append(e.cluster.Computers, quincy.Computer{Rack: l})
		}
		e.members = append(e.members, mem)
	}
	e.cluster.Racks = len(cfg.RackSizes)
	M, L := len(e.rackOf), len(e.members)
	caps := make([]float64, 3*M+2*L)
	for m := range M {
		caps[e.diskLink(m)], caps[e.outLink(m)], caps[e.inLink(m)] = cfg.Disk, cfg.NIC, cfg.NIC
	}
	for l := range L {
		caps[e.upLink(l)], caps[e.downLink(l)] = cfg.Uplink, cfg.Uplink
	}
	e.net = NewNetwork(caps)
	e.occupant = slices.Repeat([]int{-1}, M)
	e.insts = Workload(&cfg)
	for i := range e.insts {
		if err := e.newJob(i); err != nil {
			return nil, err
		}
	}
	if cfg.Policy.Flow() {
		e.sched = newFlowSched(e)
	} else {
		e.sched = newQueueSched(e)
	}
	e.res = Result{Policy: cfg.Policy, K: cfg.K, Seed: cfg.Seed, Uplink: cfg.Uplink}
	if err := e.loop(); err != nil {
		return nil, fmt.Errorf("racksim: %s seed %d at t=%.1f s: %w", cfg.Policy, cfg.Seed, e.now, err)
	}
	if err := e.finish(); err != nil {
		return nil, fmt.Errorf("racksim: %s seed %d: %w", cfg.Policy, cfg.Seed, err)
	}
	return &e.res, nil
}

// newJob creates instance i's job and tasks and places its input data.
func (e *engine) newJob(i int) error {
	in := &e.insts[i]
	j := &job{id: i, inst: in, root: -1, tasks: make([][]int, len(in.Phases)), phaseDone: make([]int, len(in.Phases))}
	for k, p := range in.Phases {
		if k > 0 && !p.Gather && !p.Pipe && len(p.Read) == 0 {
			return fmt.Errorf("racksim: %s phase %d reads nothing", in.Name, k)
		}
		if p.Pipe && k > 0 && in.Phases[k-1].Tasks != p.Tasks {
			return fmt.Errorf("racksim: %s phase %d pipes %d tasks from %d", in.Name, k, p.Tasks, in.Phases[k-1].Tasks)
		}
		for n := range p.Tasks {
			cpu := p.CPU * (1 + e.cfg.CPUJitter*(2*e.rng.Float64()-1))
			tk := &task{id: len(e.tasks), job: i, phase: k, index: n, cpu: cpu, computer: -1, outOn: -1}
			e.tasks = append(e.tasks, tk)
			j.tasks[k] = append(j.tasks[k], tk.id)
		}
	}
	parts := 0
	for _, p := range in.Phases {
		if len(p.Read) > 0 {
			parts = max(parts, p.Tasks)
		}
	}
	j.partitions = e.place(in.Layout, parts)
	e.jobs = append(e.jobs, j)
	return nil
}

// place returns the replica lists of n partitions laid out as l.
func (e *engine) place(l Layout, n int) [][]int {
	M, L := e.computers(), len(e.members)
	out := make([][]int, n)
	// hdfs puts the other two copies on two computers of one other rack
	// (the same rack when there is only one, fewer copies when racks are
	// that small).
	hdfs := func(first int) []int {
		own := e.rackOf[first]
		other := own
		if L > 1 {
			other = e.rng.IntN(L - 1)
			if other >= own {
				other++
			}
		}
		var cands []int
		for _, m := range e.members[other] {
			if m != first {
				cands = append(cands, m)
			}
		}
		reps := []int{first}
		for range min(2, len(cands)) {
			k := e.rng.IntN(len(cands))
			reps = append(reps, cands[k])
			cands = slices.Delete(cands, k, k+1)
		}
		return reps
	}
	switch l {
	case Spread:
		for i := range out {
			out[i] = hdfs(e.rng.IntN(M))
		}
	case OnePerComputer:
		for i := range out {
			out[i] = hdfs(i % M)
		}
	case Join40:
		perm := e.rng.Perm(M)
		for i := range out {
			out[i] = []int{perm[i%M]}
		}
	case Join5:
		mem := e.members[e.rng.IntN(L)]
		perm := e.rng.Perm(len(mem))
		for i := range out {
			out[i] = []int{mem[perm[i%min(5, len(mem))]]}
		}
	}
	return out
}

// loop runs events until every job has ended.
func (e *engine) loop() error {
	e.admit()
	if err := e.dispatch(); err != nil {
		return err
	}
	for {
		tNet := e.net.Next()
		tEv := math.Inf(1)
		if e.ev.len() > 0 {
			tEv = e.ev.top().t
		}
		t := min(tNet, tEv)
		if math.IsInf(t, 1) {
			break
		}
		e.now = t
		if tNet <= t {
			for _, id := range e.net.Finished(t) {
				e.flowDone(id, e.net.flows[id].bytes)
			}
		}
		for e.ev.len() > 0 && e.ev.top().t <= t {
			ev := e.ev.pop()
			if err := e.handle(ev); err != nil {
				return err
			}
		}
		if err := e.dispatch(); err != nil {
			return err
		}
		if e.cfg.Progress != nil && t-e.lastProg >= 100 {
			e.lastProg = t
			e.cfg.Progress(t)
		}
	}
	for _, j := range e.jobs {
		if !j.ended {
			return fmt.Errorf("job %s never ended (%d of %d workers running)", j.inst.Name, j.running, len(j.live))
		}
	}
	return nil
}

func (e *engine) dispatch() error {
	if !e.dirty {
		return nil
	}
	e.dirty = false
	return e.sched.dispatch(e.now)
}

func (e *engine) handle(ev event) error {
	switch ev.kind {
	case evJobReady:
		j := e.jobs[ev.a]
		for _, id := range j.tasks[0] {
			e.submit(e.tasks[id])
		}
	case evCPUDone:
		tk := e.tasks[ev.a]
		if tk.state == running && tk.attempt == ev.b {
			e.complete(tk)
		}
	case evJobEnd:
		j := e.jobs[ev.a]
		j.ended, j.finished = true, e.now
		e.occupant[j.root] = -1
		e.roots--
		e.active = slices.DeleteFunc(e.active, func(x int) bool { return x == j.id })
		e.dirty = true
		e.admit()
	default:
		return e.sched.event(ev)
	}
	return nil
}

// admit starts instances until K run (§5.1: the first K start, and each
// completion starts the next). A root takes a free computer if there is
// one, else a random computer without a root, whose worker is killed
// (§3.1).
func (e *engine) admit() {
	for len(e.active) < e.cfg.K && e.next < len(e.jobs) {
		j := e.jobs[e.next]
		e.next++
		var freeC, other []int
		for m, o := range e.occupant {
			switch {
			case o == -1:
				freeC = append(freeC, m)
			case o >= 0:
				other = append(other, m)
			}
		}
		var m int
		if len(freeC) > 0 {
			m = freeC[e.rng.IntN(len(freeC))]
		} else {
			m = other[e.rng.IntN(len(other))]
			e.kill(e.tasks[e.occupant[m]])
		}
		e.occupant[m] = -2
		e.roots++
		j.root, j.admitted = m, e.now
		e.active = append(e.active, j.id)
		e.ev.push(e.now+e.cfg.JobStartup, evJobReady, j.id, 0)
		e.dirty = true
	}
}

// submit makes a worker ready: it builds its input list from its
// partition and its predecessors' outputs and hands it to the scheduler.
func (e *engine) submit(tk *task) {
	j := e.jobOf(tk)
	p := &j.inst.Phases[tk.phase]
	var in []quincy.Block
	for _, b := range p.Read {
		in = append(in, quincy.Block{Bytes: int64(b), Replicas: j.partitions[tk.index]})
	}
	if tk.phase > 0 {
		prev := &j.inst.Phases[tk.phase-1]
		switch {
		case p.Gather:
			// One bucket of every previous output, merged per computer.
			per := map[int]int64{}
			var order []int
			for _, id := range j.tasks[tk.phase-1] {
				src := e.tasks[id].outOn
				if _, ok := per[src]; !ok {
					order = append(order, src)
				}
				per[src] += int64(prev.Output / float64(p.Tasks))
			}
			slices.Sort(order)
			for _, m := range order {
				in = append(in, quincy.Block{Bytes: per[m], Replicas: []int{m}})
			}
		case p.Pipe:
			src := e.tasks[j.tasks[tk.phase-1][tk.index]].outOn
			in = append(in, quincy.Block{Bytes: int64(prev.Output), Replicas: []int{src}})
		}
	}
	tk.input = in
	tk.state, tk.since = waiting, e.now
	j.live = append(j.live, tk.id)
	e.dirty = true
	e.sched.submitted(tk)
}

// complete finishes worker tk and submits the workers its output unblocks.
func (e *engine) complete(tk *task) {
	j := e.jobOf(tk)
	tk.outOn = tk.computer
	tk.completions++
	e.stop(tk)
	tk.state = done
	j.live = slices.DeleteFunc(j.live, func(x int) bool { return x == tk.id })
	j.phaseDone[tk.phase]++
	e.dirty = true
	k := tk.phase
	if k+1 < len(j.inst.Phases) {
		next := &j.inst.Phases[k+1]
		switch {
		case next.Pipe:
			e.submit(e.tasks[j.tasks[k+1][tk.index]])
		case j.phaseDone[k] == len(j.tasks[k]):
			for _, id := range j.tasks[k+1] {
				e.submit(e.tasks[id])
			}
		}
		return
	}
	if j.phaseDone[k] == len(j.tasks[k]) && (k == 0 || allDone(j)) {
		e.ev.push(e.now+e.cfg.JobFinish, evJobEnd, j.id, 0)
	}
}

func allDone(j *job) bool {
	for k, n := range j.phaseDone {
		if n != len(j.tasks[k]) {
			return false
		}
	}
	return true
}

// finish fills in the result and checks that every worker finished
// exactly once and every network flow ended.
func (e *engine) finish() error {
	r := &e.res
	for _, j := range e.jobs {
		r.Jobs = append(r.Jobs, JobResult{
			Name: j.inst.Name, NW: j.inst.NW, Admitted: j.admitted, Finished: j.finished,
			Time: j.finished - j.admitted, Ideal: j.inst.Ideal, Tasks: j.inst.Tasks(),
		})
		r.Makespan = max(r.Makespan, j.finished)
	}
	for _, tk := range e.tasks {
		if tk.completions != 1 || tk.state != done {
			return fmt.Errorf("task %d (%s phase %d #%d) finished %d times, state %d",
				tk.id, e.jobs[tk.job].inst.Name, tk.phase, tk.index, tk.completions, tk.state)
		}
		r.Completed++
	}
	r.Tasks = len(e.tasks)
	if n := e.net.Active(); n != 0 {
		return fmt.Errorf("%d network flows still active", n)
	}
	return nil
}
