package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func benchNodes(n int) []Node {
	nodes := make([]Node, n)
	for i := range nodes {
		addr := fmt.Sprintf("10.0.%d.%d:20502", i/250, i%250)
		nodes[i] = Node{Addr: addr, Host: addr[:len(addr)-6], Attrs: map[string]string{RackAttr: fmt.Sprint(i % 40)}}
	}
	return nodes
}

func benchTasks(m int) []Task {
	tasks := make([]Task, m)
	for i := range tasks {
		tasks[i] = Task{ID: fmt.Sprint(i)}
	}
	return tasks
}

// BenchmarkPlace500TaskJob is the scheduler's submit path for a 500-task
// job on 10,000 nodes: batch sampling of 1,000 reservations.
func BenchmarkPlace500TaskJob(b *testing.B) {
	nodes, tasks := benchNodes(10000), benchTasks(500)
	rng := rand.New(rand.NewPCG(1, 2))
	var s Sampler
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Plan(rng, nodes, tasks, 2); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLateBind500TaskJob is the whole life of a 500-task job's request
// book: place, then answer every reservation's getTask (1,000 calls, half
// of them empty once the tasks are out), then list cancellation targets.
func BenchmarkLateBind500TaskJob(b *testing.B) {
	nodes, tasks := benchNodes(10000), benchTasks(500)
	rng := rand.New(rand.NewPCG(1, 2))
	var s Sampler
	probes, err := s.Plan(rng, nodes, tasks, 2)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r := NewRequest("r", tasks)
		r.AddProbes(probes)
		for _, p := range probes {
			for c := 0; c < p.Count; c++ {
				r.Assign(p.Node.Addr)
			}
		}
		if !r.Launched() {
			b.Fatal("not all tasks launched")
		}
		_ = r.Outstanding()
	}
}

// BenchmarkPlaceConstrained500TaskJob: every task prefers 3 nodes (per-task
// sampling, as for data-local tasks).
func BenchmarkPlaceConstrained500TaskJob(b *testing.B) {
	nodes, tasks := benchNodes(10000), benchTasks(500)
	for i := range tasks {
		tasks[i].Nodes = []string{nodes[i*3].Host, nodes[i*3+1].Host, nodes[i*3+2].Host}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var s Sampler
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Plan(rng, nodes, tasks, 2); err != nil {
			b.Fatal(err)
		}
	}
}
