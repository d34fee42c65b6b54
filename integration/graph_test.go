package integration

import (
	"context"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/core/perfmodel"
	"github.com/sparrowfleet/sparrow/core/planner"
)

// graphFleet starts three node monitors advertising the profiles of the
// report's three-machine cluster (planner.Frank) through gossip, and
// returns the nodes a frontend plans over, as LiveGraphNodes reads them from
// gossip, in Frank's order.
func graphFleet(t *testing.T, run client.TaskFunc, onLaunch func(int, client.LaunchedTask)) (*fleet.Fleet, []client.GraphNode) {
	t.Helper()
	frank := planner.Frank()
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: len(frank), Slots: 2, Apps: []string{"app"},
		NodeAttrs: func(i int) map[string]string {
			return map[string]string{perfmodel.ProfileAttr: perfmodel.FormatProfile(frank[i])}
		},
		Run: run, OnLaunch: onLaunch,
	})
	live, err := client.LiveGraphNodes(context.Background(), client.PeekConfig{
		Seeds: []string{f.Schedulers[0].Cluster.Addr()}, Bind: "127.0.3.42:0", Profile: "local",
		Want: len(frank), Wait: 20 * time.Second, Log: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	byHost := map[string]client.GraphNode{}
	for _, n := range live {
		byHost[n.Host] = n
	}
	var nodes []client.GraphNode
	for i := range frank {
		h, _, _ := net.SplitHostPort(f.NodeMonitors[i].InternalAddr())
		n, ok := byHost[h]
		if !ok {
			t.Fatalf("node %d (%s) not among the profiled nodes gossip showed: %v", i, h, live)
		}
		if !n.Profile.Same(frank[i]) {
			t.Fatalf("node %d's gossiped profile %+v, want %+v", i, n.Profile, frank[i])
		}
		nodes = append(nodes, n)
	}
	return f, nodes
}

// joinJob is the report's Join with its inputs on the fleet's nodes.
func joinJob(nodes []client.GraphNode) client.GraphJob {
	p := planner.JoinOnFrank([2]string{"F1", "F2"}, "F3")
	host := map[string]string{}
	for i, m := range planner.Frank() {
		host[m.Name] = nodes[i].Host
	}
	for i := range p.Graph.Tasks {
		for j := range p.Graph.Tasks[i].Inputs {
			p.Graph.Tasks[i].Inputs[j].Machine = host[p.Graph.Tasks[i].Inputs[j].Machine]
		}
	}
	return client.GraphJob{Graph: p.Graph, Models: p.Models,
		Message: func(planner.Task, client.GraphNode) []byte { return []byte("20ms") }}
}

// launchLog records which node launched which graph task, in order.
type launchLog struct {
	mu     sync.Mutex
	byNode map[int][]string
	count  map[string]int
}

func (l *launchLog) launched(node int, t client.LaunchedTask) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byNode[node] = append(l.byNode[node], t.Ref.TaskID)
	l.count[t.Ref.TaskID]++
}

func runGraph(t *testing.T, fe *client.Frontend, runs chan *client.GraphRun, job client.GraphJob, nodes []client.GraphNode) (*client.GraphRun, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	run, err := fe.NewGraphRun(job, nodes, client.GraphOptions{PlanTime: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	runs <- run
	return run, ctx
}

func graphFrontend(t *testing.T, f *fleet.Fleet) (*client.Frontend, chan *client.GraphRun) {
	t.Helper()
	runs := make(chan *client.GraphRun, 1)
	var cur *client.GraphRun
	var mu sync.Mutex
	fe, err := client.NewFrontend(context.Background(), client.FrontendConfig{
		App: "app", Schedulers: f.SchedulerAddrs(), Listen: "127.0.3.41:0", AdvertiseHost: "127.0.3.41",
		Timeout: 5 * time.Second, Log: testLogger(t),
		OnMessage: func(m client.Message) {
			mu.Lock()
			defer mu.Unlock()
			if cur == nil {
				cur = <-runs
			}
			cur.Deliver(m)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fe.Close() })
	return fe, runs
}

// TestTaskGraphRunsItsPlan plans the report's Join over three node
// monitors whose profiles come from gossip, runs it, and checks that every
// task ran exactly once, on its planned node, each node's tasks in the
// plan's order.
func TestTaskGraphRunsItsPlan(t *testing.T) {
	log := &launchLog{byNode: map[int][]string{}, count: map[string]int{}}
	f, nodes := graphFleet(t, fleet.SleepTask, log.launched)
	fe, runs := graphFrontend(t, f)
	job := joinJob(nodes)
	run, ctx := runGraph(t, fe, runs, job, nodes)
	res, err := run.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stats.Proved {
		t.Logf("plan not proved optimal within the limit (makespan %.1f s)", res.Plan.Makespan)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, task := range job.Graph.Tasks {
		if log.count[task.Name] != 1 {
			t.Errorf("task %s launched %d times", task.Name, log.count[task.Name])
		}
	}
	for m, order := range res.Plan.Order {
		var want []string
		for _, ti := range order {
			want = append(want, job.Graph.Tasks[ti].Name)
		}
		if !slices.Equal(log.byNode[m], want) && !(len(want) == 0 && len(log.byNode[m]) == 0) {
			t.Errorf("node %d ran %v, plan orders %v", m, log.byNode[m], want)
		}
	}
	for _, gt := range res.Tasks {
		if gt.Fallback || gt.Attempts != 1 {
			t.Errorf("task %s: fallback %v after %d attempts on a healthy fleet", gt.Name, gt.Fallback, gt.Attempts)
		}
	}
}

// TestTaskGraphFallsBackWhenANodeDies kills the node running the first
// task of the plan while it runs: the fleet reports the task lost, and it
// and the node's other tasks finish on the nodes that are left, each once.
func TestTaskGraphFallsBackWhenANodeDies(t *testing.T) {
	log := &launchLog{byNode: map[int][]string{}, count: map[string]int{}}
	started := make(chan int, 16)
	block := make(chan struct{})
	var once sync.Once
	run := func(ctx context.Context, lt client.LaunchedTask) ([]byte, error) {
		first := false
		once.Do(func() { first = true })
		if first {
			<-block // held until its node is killed
			return nil, context.Canceled
		}
		return fleet.SleepTask(ctx, lt)
	}
	f, nodes := graphFleet(t, run, func(node int, lt client.LaunchedTask) {
		log.launched(node, lt)
		select {
		case started <- node:
		default:
		}
	})
	fe, runs := graphFrontend(t, f)
	job := joinJob(nodes)
	gr, ctx := runGraph(t, fe, runs, job, nodes)
	type outcome struct {
		res client.GraphResult
		err error
	}
	waited := make(chan outcome, 1)
	go func() {
		res, err := gr.Wait(ctx)
		waited <- outcome{res, err}
	}()
	victim := <-started
	// Killing closes the node's executors, which waits for the held task:
	// it is let go once the node monitor no longer answers.
	killed := make(chan struct{})
	go func() { f.KillNodeMonitor(victim); close(killed) }()
	waitFor(t, "the killed node monitor to stop answering", 10*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", f.NodeMonitors[victim].InternalAddr(), 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	close(block)
	<-killed
	out := <-waited
	res, err := out.res, out.err
	if err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	fallbacks := 0
	for _, gt := range res.Tasks {
		if gt.Node == nodes[victim].Host && !gt.Finished.IsZero() && gt.Fallback {
			t.Errorf("task %s fell back onto the dead node", gt.Name)
		}
		if gt.Fallback {
			fallbacks++
		}
	}
	if fallbacks == 0 {
		t.Errorf("node %d died while running a task, yet no task fell back", victim)
	}
	for _, task := range job.Graph.Tasks {
		n := log.count[task.Name]
		if n < 1 || n > 2 {
			t.Errorf("task %s launched %d times (once, or twice if it ran on the dead node)", task.Name, n)
		}
	}
}
