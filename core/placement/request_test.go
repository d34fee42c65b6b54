package placement

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// letterNodes returns nodes named by single letters, addressed "<L>:1".
func letterNodes(names string) map[string]Node {
	out := make(map[string]Node)
	for i, r := range names {
		name := string(r)
		out[name] = Node{
			Addr:  name + ":1",
			Host:  fmt.Sprintf("10.1.0.%d", i+1),
			Name:  name,
			Attrs: map[string]string{RackAttr: "rack-" + name},
		}
	}
	return out
}

// probesOn builds probes from "A", "A", "B" style names: one reservation
// per occurrence.
func probesOn(nodes map[string]Node, names ...string) []Probe {
	var out []Probe
	for _, n := range names {
		out = append(out, Probe{Node: nodes[n], Count: 1})
	}
	return out
}

type ask struct {
	node   string // node name; its address is name+":1"
	want   int    // task index, or -1 for nothing
	wantOK bool
}

func runAsks(t *testing.T, r *Request, asks []ask) {
	t.Helper()
	for i, a := range asks {
		got, ok := r.Assign(a.node + ":1")
		if ok != a.wantOK || (ok && got != a.want) {
			t.Fatalf("ask %d by %s: Assign = (%d, %v), want (%d, %v)", i, a.node, got, ok, a.want, a.wantOK)
		}
	}
}

func give(task int) ask { return ask{want: task, wantOK: true} }

func TestRequestLateBindingOrder(t *testing.T) {
	nodes := letterNodes("ABCDEFGHIJ")
	r := NewRequest("req", free(4))
	r.AddProbes(probesOn(nodes, "A", "B", "C", "D", "E", "F", "G", "H"))
	if r.Launched() || r.Unlaunched() != 4 {
		t.Fatalf("fresh request: Launched=%v Unlaunched=%d", r.Launched(), r.Unlaunched())
	}
	// Whoever asks first gets the earliest task, whatever order they were
	// probed in.
	order := []string{"G", "C", "H", "A"}
	for i, n := range order {
		got, ok := r.Assign(n + ":1")
		if !ok || got != i {
			t.Fatalf("ask %d by %s: (%d, %v), want task %d", i, n, got, ok, i)
		}
		if !r.IsLaunched(i) {
			t.Fatalf("task %d not marked launched", i)
		}
		if r.Unlaunched() != 4-i-1 {
			t.Fatalf("Unlaunched = %d after %d launches", r.Unlaunched(), i+1)
		}
	}
	if !r.Launched() {
		t.Fatal("all tasks handed out but not Launched")
	}
	// Cancellation targets: the nodes that never asked, in address order.
	want := probesOn(nodes, "B", "D", "E", "F")
	if got := r.Outstanding(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Outstanding = %v, want %v", got, want)
	}
	// Late askers get nothing, and their reservation is used up.
	if _, ok := r.Assign("B:1"); ok {
		t.Fatal("Assign after all launched returned a task")
	}
	if got := r.Outstanding(); len(got) != 3 {
		t.Fatalf("Outstanding after a late ask = %v, want 3 nodes", got)
	}
}

func TestRequestAssignRefusals(t *testing.T) {
	nodes := letterNodes("ABC")
	tests := []struct {
		name   string
		tasks  []Task
		probes []Probe
		asks   []ask
	}{
		{
			name:  "unknown node",
			tasks: free(2), probes: probesOn(nodes, "A", "B"),
			asks: []ask{{node: "Z", want: -1}, {node: "", want: -1}, {node: "A", want: 0, wantOK: true}},
		},
		{
			name:  "reservations used up",
			tasks: free(3), probes: probesOn(nodes, "A", "A", "B"),
			asks: []ask{{node: "A", want: 0, wantOK: true}, {node: "A", want: 1, wantOK: true}, {node: "A", want: -1}, {node: "B", want: 2, wantOK: true}},
		},
		{
			name:  "all launched",
			tasks: free(1), probes: probesOn(nodes, "A", "B", "C"),
			asks: []ask{{node: "B", want: 0, wantOK: true}, {node: "A", want: -1}, {node: "C", want: -1}, {node: "A", want: -1}},
		},
		{
			name:  "no remaining task allows the node",
			tasks: []Task{{ID: "x", Nodes: []string{"A"}}}, probes: probesOn(nodes, "A", "B"),
			asks: []ask{{node: "B", want: -1}, {node: "A", want: 0, wantOK: true}},
		},
		{
			name:  "no tasks",
			tasks: nil, probes: probesOn(nodes, "A"),
			asks: []ask{{node: "A", want: -1}},
		},
		{
			name:   "zero and negative counts ignored",
			tasks:  free(1),
			probes: []Probe{{Node: nodes["A"], Count: 0}, {Node: nodes["B"], Count: -3}},
			asks:   []ask{{node: "A", want: -1}, {node: "B", want: -1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRequest("req", tt.tasks)
			r.AddProbes(tt.probes)
			runAsks(t, r, tt.asks)
		})
	}
}

func TestRequestUnknownNodeChangesNothing(t *testing.T) {
	nodes := letterNodes("AB")
	r := NewRequest("req", free(2))
	r.AddProbes(probesOn(nodes, "A", "B"))
	before := r.Outstanding()
	if _, ok := r.Assign("nobody:1"); ok {
		t.Fatal("unknown node got a task")
	}
	if r.Unlaunched() != 2 || !reflect.DeepEqual(r.Outstanding(), before) {
		t.Fatalf("unknown node's ask changed the request: unlaunched %d, outstanding %v", r.Unlaunched(), r.Outstanding())
	}
}

func TestRequestConstrained(t *testing.T) {
	nodes := letterNodes("ABCDEF")
	paper := []Task{
		{ID: "task0", Nodes: []string{"A", "B", "C"}},
		{ID: "task1", Nodes: []string{"C", "D", "E"}},
	}
	tests := []struct {
		name   string
		tasks  []Task
		probes []string
		asks   []ask
	}{
		{
			// Paper §4.1: A and B were probed for task 0 but are loaded; C and
			// D were probed for task 1 and are idle. C runs task 0, D task 1.
			name:   "paper example",
			tasks:  paper,
			probes: []string{"A", "B", "C", "D"},
			asks:   []ask{{node: "C", want: 0, wantOK: true}, {node: "D", want: 1, wantOK: true}, {node: "A", want: -1}, {node: "B", want: -1}},
		},
		{
			name:   "paper example, D first",
			tasks:  paper,
			probes: []string{"A", "B", "C", "D"},
			asks:   []ask{{node: "D", want: 1, wantOK: true}, {node: "C", want: 0, wantOK: true}, {node: "A", want: -1}},
		},
		{
			name:   "paper example, A first",
			tasks:  paper,
			probes: []string{"A", "B", "C", "D"},
			asks:   []ask{{node: "A", want: 0, wantOK: true}, {node: "B", want: -1}, {node: "C", want: 1, wantOK: true}, {node: "D", want: -1}},
		},
		{
			name:   "node not allowed skips to unconstrained task",
			tasks:  []Task{{ID: "c", Nodes: []string{"A"}}, {ID: "f"}},
			probes: []string{"A", "B"},
			asks:   []ask{{node: "B", want: 1, wantOK: true}, {node: "A", want: 0, wantOK: true}},
		},
		{
			name:   "constrained before unconstrained",
			tasks:  []Task{{ID: "f0"}, {ID: "c", Racks: []string{"rack-A"}}, {ID: "f1"}},
			probes: []string{"A", "A", "B"},
			asks:   []ask{{node: "A", want: 1, wantOK: true}, {node: "A", want: 0, wantOK: true}, {node: "B", want: 2, wantOK: true}},
		},
		{
			name:   "by host",
			tasks:  []Task{{ID: "c", Nodes: []string{"10.1.0.2"}}}, // B's host
			probes: []string{"A", "B"},
			asks:   []ask{{node: "A", want: -1}, {node: "B", want: 0, wantOK: true}},
		},
		{
			name:   "earliest allowed constrained task first",
			tasks:  []Task{{ID: "c0", Nodes: []string{"A"}}, {ID: "c1", Nodes: []string{"B"}}, {ID: "c2", Nodes: []string{"B"}}},
			probes: []string{"B", "B", "A"},
			asks:   []ask{{node: "B", want: 1, wantOK: true}, {node: "B", want: 2, wantOK: true}, {node: "A", want: 0, wantOK: true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRequest("req", tt.tasks)
			r.AddProbes(probesOn(nodes, tt.probes...))
			runAsks(t, r, tt.asks)
		})
	}
}

func TestRequestDropNodeAndUncovered(t *testing.T) {
	nodes := letterNodes("ABCD")
	ids := func(ts []Task) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return out
	}
	tests := []struct {
		name      string
		tasks     []Task
		probes    []string
		asks      []string // assigned before dropping
		drop      []string
		wantDrops []int
		want      []string // Uncovered task IDs
	}{
		{
			name:  "nothing dropped",
			tasks: free(2), probes: []string{"A", "B"},
			want: nil,
		},
		{
			name:  "surplus absorbs a drop",
			tasks: free(2), probes: []string{"A", "B", "C", "D"},
			drop: []string{"A", "B"}, wantDrops: []int{1, 1},
			want: nil,
		},
		{
			name:  "short by one",
			tasks: free(3), probes: []string{"A", "B", "C", "D"},
			drop: []string{"A", "B"}, wantDrops: []int{1, 1},
			want: []string{"t0"},
		},
		{
			name:  "multiple reservations dropped at once",
			tasks: free(3), probes: []string{"A", "A", "A", "B"},
			drop: []string{"A"}, wantDrops: []int{3},
			want: []string{"t0", "t1"},
		},
		{
			name:  "launched tasks are not uncovered",
			tasks: free(3), probes: []string{"A", "B", "C"},
			asks: []string{"A"}, drop: []string{"B", "C"}, wantDrops: []int{1, 1},
			want: []string{"t1", "t2"},
		},
		{
			name:  "unknown and repeated drops",
			tasks: free(1), probes: []string{"A"},
			drop: []string{"Z", "A", "A"}, wantDrops: []int{0, 1, 0},
			want: []string{"t0"},
		},
		{
			name: "constrained task loses its only allowed node",
			tasks: []Task{
				{ID: "c0", Nodes: []string{"A", "B"}},
				{ID: "c1", Nodes: []string{"C"}},
			},
			probes: []string{"A", "B", "C", "C"},
			drop:   []string{"C"}, wantDrops: []int{2},
			want: []string{"c1"},
		},
		{
			name: "constrained task still covered by a shared node",
			tasks: []Task{
				{ID: "c0", Nodes: []string{"A", "B"}},
				{ID: "c1", Nodes: []string{"B", "C"}},
			},
			probes: []string{"A", "B", "C", "C"},
			drop:   []string{"C"}, wantDrops: []int{2},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRequest("req", tt.tasks)
			r.AddProbes(probesOn(nodes, tt.probes...))
			for _, a := range tt.asks {
				if _, ok := r.Assign(a + ":1"); !ok {
					t.Fatalf("setup ask by %s got nothing", a)
				}
			}
			for i, d := range tt.drop {
				if got := r.DropNode(d + ":1"); got != tt.wantDrops[i] {
					t.Fatalf("DropNode(%s) = %d, want %d", d, got, tt.wantDrops[i])
				}
				if _, ok := r.Assign(d + ":1"); ok {
					t.Fatalf("dropped node %s still got a task", d)
				}
				for _, p := range r.Outstanding() {
					if p.Node.Name == d {
						t.Fatalf("dropped node %s still outstanding", d)
					}
				}
			}
			if got := ids(r.Uncovered()); !slices.Equal(got, tt.want) {
				t.Fatalf("Uncovered = %v, want %v", got, tt.want)
			}
		})
	}
}

// Greedy sharing can use up every reservation a constrained task could run
// on (task 0 takes C, task 1 takes D, task 2 allowed only on C and D is left
// with nothing), even though per-task sampling with d=2 placed two probes on
// task 2's nodes. This layout is reachable from Plan. Request reports the
// stranded task through Uncovered, so its owner can probe again; see
// scheduler.TestStrandedConstrainedTaskIsProbedAgain for how the scheduler
// recovers.
func TestRequestSharingStrandReportedByUncovered(t *testing.T) {
	nodes := letterNodes("ABCD")
	tasks := []Task{
		{ID: "t0", Nodes: []string{"A", "B", "C"}},
		{ID: "t1", Nodes: []string{"A", "B", "D"}},
		{ID: "t2", Nodes: []string{"C", "D"}},
	}
	r := NewRequest("req", tasks)
	r.AddProbes(probesOn(nodes, "A", "B", "A", "B", "C", "D"))
	runAsks(t, r, []ask{
		{node: "C", want: 0, wantOK: true},
		{node: "D", want: 1, wantOK: true},
	})
	if got := r.Uncovered(); len(got) != 1 || got[0].ID != "t2" {
		t.Fatalf("Uncovered = %v, want [t2]", got)
	}
	runAsks(t, r, []ask{{node: "A", want: -1}, {node: "B", want: -1}, {node: "A", want: -1}, {node: "B", want: -1}})
	if r.Launched() || len(r.Outstanding()) != 0 {
		t.Fatalf("want t2 unlaunched with no reservations left; Launched=%v Outstanding=%v", r.Launched(), r.Outstanding())
	}
}

// checker replays Assign/DropNode calls and checks the Request's invariants.
type checker struct {
	t        testing.TB
	r        *Request
	nodes    map[string]Node // addr -> node
	held     map[string]int  // our own count of reservations per addr
	consumed int             // reservations consumed by Assign
	assigned map[int]string  // task -> addr it went to
}

func newChecker(t testing.TB, r *Request, probes []Probe) *checker {
	c := &checker{t: t, r: r, nodes: make(map[string]Node), held: make(map[string]int), assigned: make(map[int]string)}
	for _, p := range probes {
		if p.Count > 0 {
			c.nodes[p.Node.Addr] = p.Node
			c.held[p.Node.Addr] += p.Count
		}
	}
	r.AddProbes(probes)
	return c
}

func (c *checker) assign(addr string) {
	t := c.t
	t.Helper()
	hadReservation := c.held[addr] > 0
	before := c.r.Unlaunched()
	task, ok := c.r.Assign(addr)
	if hadReservation {
		c.held[addr]--
		c.consumed++
	}
	if !ok {
		if c.r.Unlaunched() != before {
			t.Fatalf("Assign(%s) gave nothing but Unlaunched went %d -> %d", addr, before, c.r.Unlaunched())
		}
		return
	}
	if !hadReservation {
		t.Fatalf("Assign(%s) gave task %d to a node with no reservation", addr, task)
	}
	tasks := c.r.Tasks()
	if task < 0 || task >= len(tasks) {
		t.Fatalf("Assign(%s) gave out-of-range task %d", addr, task)
	}
	if prev, dup := c.assigned[task]; dup {
		t.Fatalf("task %d assigned twice: to %s and %s", task, prev, addr)
	}
	if !tasks[task].Allows(c.nodes[addr]) {
		t.Fatalf("task %d (%+v) assigned to %s, which it does not allow", task, tasks[task], addr)
	}
	c.assigned[task] = addr
	if !c.r.IsLaunched(task) {
		t.Fatalf("task %d assigned but not IsLaunched", task)
	}
	if c.r.Unlaunched() != before-1 {
		t.Fatalf("Unlaunched went %d -> %d on a launch", before, c.r.Unlaunched())
	}
	c.check()
}

func (c *checker) drop(addr string) {
	c.t.Helper()
	if got := c.r.DropNode(addr); got != c.held[addr] {
		c.t.Fatalf("DropNode(%s) = %d, want %d", addr, got, c.held[addr])
	}
	c.held[addr] = 0
	c.check()
}

func (c *checker) check() {
	t := c.t
	t.Helper()
	if len(c.assigned) > c.consumed {
		t.Fatalf("%d tasks assigned from only %d consumed reservations", len(c.assigned), c.consumed)
	}
	if c.r.Unlaunched() != len(c.r.Tasks())-len(c.assigned) {
		t.Fatalf("Unlaunched = %d, but %d of %d tasks assigned", c.r.Unlaunched(), len(c.assigned), len(c.r.Tasks()))
	}
	if c.r.Launched() != (c.r.Unlaunched() == 0) {
		t.Fatalf("Launched = %v with %d unlaunched", c.r.Launched(), c.r.Unlaunched())
	}
	want := make(map[string]int)
	for a, n := range c.held {
		if n > 0 {
			want[a] = n
		}
	}
	got := make(map[string]int)
	prev := ""
	for _, p := range c.r.Outstanding() {
		if p.Node.Addr <= prev && prev != "" {
			t.Fatalf("Outstanding not in address order: %q after %q", p.Node.Addr, prev)
		}
		prev = p.Node.Addr
		got[p.Node.Addr] = p.Count
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Outstanding = %v, want %v", got, want)
	}
	// Every unlaunched constrained task that Uncovered does not list must
	// have an outstanding reservation on a node it allows.
	listed := make(map[string]bool)
	for _, u := range c.r.Uncovered() {
		listed[u.ID] = true
	}
	for i, task := range c.r.Tasks() {
		if c.r.IsLaunched(i) || !task.Constrained() || listed[task.ID] {
			continue
		}
		covered := false
		for a, n := range want {
			covered = covered || (n > 0 && task.Allows(c.nodes[a]))
		}
		if !covered {
			t.Fatalf("constrained task %s has no reservation on an allowed node but Uncovered omits it", task.ID)
		}
	}
}

// randomScenario builds random nodes and tasks. Task IDs are unique.
func randomScenario(rng *rand.Rand) ([]Node, []Task) {
	nodes := make([]Node, 1+rng.IntN(12))
	for i := range nodes {
		host := fmt.Sprintf("h%d", i)
		nodes[i] = Node{Addr: host + ":7", Host: host, Name: fmt.Sprintf("n%d", i)}
		if rng.IntN(4) > 0 {
			nodes[i].Attrs = map[string]string{RackAttr: fmt.Sprintf("r%d", rng.IntN(3))}
		}
	}
	tasks := make([]Task, rng.IntN(16))
	for i := range tasks {
		tasks[i].ID = fmt.Sprintf("t%d", i)
		if rng.IntN(2) == 0 {
			continue
		}
		for range rng.IntN(3) {
			j := rng.IntN(len(nodes) + 2) // sometimes a node that is not live
			if rng.IntN(2) == 0 {
				tasks[i].Nodes = append(tasks[i].Nodes, fmt.Sprintf("h%d", j))
			} else {
				tasks[i].Nodes = append(tasks[i].Nodes, fmt.Sprintf("n%d", j))
			}
		}
		if rng.IntN(3) == 0 {
			tasks[i].Racks = append(tasks[i].Racks, fmt.Sprintf("r%d", rng.IntN(4)))
		}
	}
	return nodes, tasks
}

func TestRequestProperties(t *testing.T) {
	var s Sampler
	for iter := range 3000 {
		rng := newRNG(uint64(iter))
		nodes, tasks := randomScenario(rng)
		d := 1 + rng.Float64()*2
		probes, err := s.Plan(rng, nodes, tasks, d)
		if err != nil {
			// Only a constrained task with no live allowed node may fail.
			ok := false
			for _, task := range tasks {
				if !task.Constrained() {
					continue
				}
				any := false
				for _, n := range nodes {
					any = any || task.Allows(n)
				}
				ok = ok || !any
			}
			if !ok {
				t.Fatalf("iter %d: Plan failed although every task has a node: %v", iter, err)
			}
			continue
		}
		total := 0
		for _, p := range probes {
			total += p.Count
		}
		unconstrained := 0
		for _, task := range tasks {
			if !task.Constrained() {
				unconstrained++
			}
		}
		if want := Reservations(d, unconstrained) + (len(tasks)-unconstrained)*Reservations(d, 1); total != want {
			t.Fatalf("iter %d: %d reservations, want %d", iter, total, want)
		}

		r := NewRequest(fmt.Sprint(iter), tasks)
		c := newChecker(t, r, probes)
		c.check()
		for range total + 5 {
			switch k := rng.IntN(20); {
			case k == 0:
				c.drop(nodes[rng.IntN(len(nodes))].Addr)
			case k == 1:
				c.assign("not-a-node:7")
			default:
				c.assign(nodes[rng.IntN(len(nodes))].Addr)
			}
		}
		// Drain every remaining reservation.
		for _, p := range r.Outstanding() {
			for range p.Count {
				c.assign(p.Node.Addr)
			}
		}
		if len(r.Outstanding()) != 0 {
			t.Fatalf("iter %d: reservations left after draining: %v", iter, r.Outstanding())
		}
	}
}

func TestRequestUnconstrainedAlwaysLaunches(t *testing.T) {
	var s Sampler
	for iter := range 500 {
		rng := newRNG(uint64(iter))
		nodes := mkNodes(1 + rng.IntN(30))
		m := 1 + rng.IntN(40)
		d := 1 + rng.Float64()*2
		probes, err := s.Plan(rng, nodes, free(m), d)
		if err != nil {
			t.Fatal(err)
		}
		r := NewRequest("r", free(m))
		c := newChecker(t, r, probes)
		// Nodes ask in random order until every reservation is used.
		var queue []string
		for _, p := range probes {
			for range p.Count {
				queue = append(queue, p.Node.Addr)
			}
		}
		rng.Shuffle(len(queue), func(i, j int) { queue[i], queue[j] = queue[j], queue[i] })
		for _, a := range queue {
			c.assign(a)
		}
		if !r.Launched() {
			t.Fatalf("iter %d: %d of %d tasks never launched with %d reservations", iter, r.Unlaunched(), m, len(queue))
		}
	}
}

// FuzzRequest interprets data as a scenario: node and task layout, then a
// sequence of Assign / DropNode calls. It checks the same invariants as
// TestRequestProperties.
func FuzzRequest(f *testing.F) {
	f.Add([]byte{3, 4, 0, 1, 2, 7, 1, 1, 1, 0, 0, 1, 2, 3, 4, 5})
	f.Add([]byte{5, 2, 0xff, 0x01, 0x10, 3, 3, 3, 0, 1, 2, 3, 4, 0x80, 0x81})
	f.Add([]byte{1, 0, 9, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(b)
		}
		nNodes := 1 + next()%8
		nodes := make([]Node, nNodes)
		for i := range nodes {
			nodes[i] = Node{Addr: fmt.Sprintf("n%d:1", i), Host: fmt.Sprintf("h%d", i), Name: fmt.Sprintf("n%d", i)}
			if i%2 == 0 {
				nodes[i].Attrs = map[string]string{RackAttr: fmt.Sprintf("r%d", i%3)}
			}
		}
		tasks := make([]Task, next()%10)
		for i := range tasks {
			tasks[i].ID = fmt.Sprintf("t%d", i)
			mask := next() // bit j: node j by host (j<8)
			for j := range nNodes {
				if mask&(1<<j) != 0 {
					if j%2 == 0 {
						tasks[i].Nodes = append(tasks[i].Nodes, nodes[j].Host)
					} else {
						tasks[i].Nodes = append(tasks[i].Nodes, nodes[j].Name)
					}
				}
			}
			if mask&0x80 != 0 && nNodes < 8 {
				tasks[i].Racks = []string{fmt.Sprintf("r%d", mask%3)}
			}
		}
		var probes []Probe
		for _, n := range nodes {
			probes = append(probes, Probe{Node: n, Count: next() % 4})
		}
		r := NewRequest("fuzz", tasks)
		c := newChecker(t, r, probes)
		c.check()
		for len(data) > 0 {
			op := next()
			addr := nodes[op%nNodes].Addr
			switch {
			case op >= 0xf0:
				c.drop(addr)
			case op >= 0xe0:
				c.assign("stranger:1")
			default:
				c.assign(addr)
			}
		}
	})
}

// TestRequestDecline: a declined reservation is used up with no task
// handed out, by address or by handle; the tasks go to the reservations
// left, and what they no longer cover shows in Uncovered.
func TestRequestDecline(t *testing.T) {
	nodes := letterNodes("ABC")
	r := NewRequest("r", free(2))
	r.AddProbes(probesOn(nodes, "A", "A", "B", "C"))
	if !r.Decline("A:1") || !r.DeclineAt(1) {
		t.Fatal("A's two reservations were not declined")
	}
	if r.Decline("A:1") || r.Holds("A:1") || r.Decline("D:1") || r.DeclineAt(9) {
		t.Fatal("a node with no reservation left declined one")
	}
	if r.Unlaunched() != 2 {
		t.Fatalf("%d tasks unlaunched after declines, want 2", r.Unlaunched())
	}
	if u := r.Uncovered(); len(u) != 0 {
		t.Fatalf("uncovered %v with B and C holding one reservation each", u)
	}
	runAsks(t, r, []ask{{node: "A", want: -1}, {node: "B", want: 0, wantOK: true}})
	if !r.Decline("C:1") {
		t.Fatal("C's reservation was not declined")
	}
	if u := r.Uncovered(); len(u) != 1 || u[0].ID != "t1" {
		t.Fatalf("uncovered %v, want [t1]: no reservation is left for it", u)
	}
}
