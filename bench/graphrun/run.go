package graphrun

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/core/perfmodel"
	"github.com/sparrowfleet/sparrow/core/planner"
)

// Config shapes a live run.
type Config struct {
	// Problem is the job and the machines: one node monitor per machine,
	// advertising its profile. Input tables name the problem's machines.
	Problem planner.Problem
	// Scale is wall-clock seconds per model second (0: 0.01).
	Scale float64
	// Runs is how many times each schedule runs (0: 3).
	Runs int
	// PlanTime bounds the planner (0: one second).
	PlanTime time.Duration
	// Progress, if set, receives a line saying what runs, then a line
	// per finished run.
	Progress func(string)
	Log      zerolog.Logger
}

// Run is one schedule's runs.
type Run struct {
	// Schedule is "plan" or "greedy".
	Schedule string `json:"schedule"`
	// Predicted is the schedule's predicted makespan in model seconds;
	// Measured each run's makespan, in model seconds (wall / Scale).
	Predicted float64   `json:"predicted_s"`
	Measured  []float64 `json:"measured_s"`
	// Order is each machine's tasks in the order they ran, first run.
	Order map[string][]string `json:"order"`
}

// Result is a live comparison.
type Result struct {
	Scale float64 `json:"scale"`
	Plan  Run     `json:"plan"`
	// Greedy is Dryad's greedy schedule carried out the same way.
	Greedy Run `json:"greedy"`
	// Proved is whether the planner proved its plan optimal in time.
	Proved bool `json:"proved"`
}

func (c *Config) defaults() {
	if c.Scale <= 0 {
		c.Scale = 0.01
	}
	if c.Runs <= 0 {
		c.Runs = 3
	}
	if c.PlanTime <= 0 {
		c.PlanTime = time.Second
	}
}

// Measure starts the fleet, plans the job over the profiles it gossips,
// and runs the plan and the greedy schedule cfg.Runs times each.
func Measure(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Progress != nil {
		cfg.Progress(fmt.Sprintf("live: %d node monitors with the problem's profiles, %d runs per schedule, scale %g s per model s",
			len(cfg.Problem.Machines), cfg.Runs, cfg.Scale))
	}
	cfg.defaults()
	res := Result{Scale: cfg.Scale}
	if err := cfg.Problem.Validate(); err != nil {
		return res, err
	}
	machines := cfg.Problem.Machines
	var (
		mu      sync.Mutex
		current *client.GraphRun
		order   map[string][]string
		record  bool // the first run of a schedule records its order
	)
	f, err := fleet.Start(ctx, fleet.Config{
		Schedulers: 1, NodeMonitors: len(machines), Slots: 1, Apps: []string{"graph"},
		NodeAttrs: func(i int) map[string]string {
			return map[string]string{perfmodel.ProfileAttr: perfmodel.FormatProfile(machines[i])}
		},
		OnLaunch: func(node int, t client.LaunchedTask) {
			mu.Lock()
			defer mu.Unlock()
			if record {
				order[machines[node].Name] = append(order[machines[node].Name], t.Ref.TaskID)
			}
		},
		Log: cfg.Log,
	})
	if err != nil {
		return res, fmt.Errorf("graph run: start fleet: %w", err)
	}
	defer f.Close()
	fe, err := client.NewFrontend(ctx, client.FrontendConfig{
		App: "graph", Schedulers: f.SchedulerAddrs(), Listen: "127.0.3.60:0", AdvertiseHost: "127.0.3.60",
		Timeout: 5 * time.Second, Log: cfg.Log,
		OnMessage: func(m client.Message) {
			mu.Lock()
			r := current
			mu.Unlock()
			if r != nil {
				r.Deliver(m)
			}
		},
	})
	if err != nil {
		return res, fmt.Errorf("graph run: frontend: %w", err)
	}
	defer fe.Close()
	nodes, job, err := liveJob(ctx, f, cfg)
	if err != nil {
		return res, err
	}
	_, plan, stats, err := client.PlanGraph(job, nodes, client.GraphOptions{PlanTime: cfg.PlanTime})
	if err != nil {
		return res, err
	}
	greedy, err := planner.Greedy(hostProblem(cfg.Problem, nodes))
	if err != nil {
		return res, err
	}
	res.Proved = stats.Proved
	for _, s := range []struct {
		run  *Run
		name string
		plan planner.Plan
	}{{&res.Plan, "plan", plan}, {&res.Greedy, "greedy", greedy}} {
		s.run.Schedule, s.run.Predicted = s.name, s.plan.Makespan
		for i := 0; i < cfg.Runs; i++ {
			mu.Lock()
			if record = i == 0; record {
				order = map[string][]string{}
			}
			mu.Unlock()
			took, err := runOnce(ctx, fe, job, nodes, s.plan, cfg.Scale, func(r *client.GraphRun) {
				mu.Lock()
				current = r
				mu.Unlock()
			})
			if err != nil {
				return res, fmt.Errorf("graph run: %s, run %d: %w", s.name, i+1, err)
			}
			s.run.Measured = append(s.run.Measured, took.Seconds()/cfg.Scale)
			if cfg.Progress != nil {
				cfg.Progress(fmt.Sprintf("%s run %d/%d: %.1f s measured (model), %.1f s predicted", s.name, i+1, cfg.Runs, took.Seconds()/cfg.Scale, s.plan.Makespan))
			}
		}
		mu.Lock()
		s.run.Order = order
		mu.Unlock()
	}
	return res, nil
}

// liveJob reads the fleet's profiled nodes from gossip, in the problem's
// machine order, and returns the job with its input tables on their hosts.
func liveJob(ctx context.Context, f *fleet.Fleet, cfg Config) ([]client.GraphNode, client.GraphJob, error) {
	live, err := client.LiveGraphNodes(ctx, client.PeekConfig{
		Seeds: []string{f.Schedulers[0].Cluster.Addr()}, Bind: "127.0.3.61:0", Profile: "local",
		Want: len(cfg.Problem.Machines), Wait: 20 * time.Second, Log: cfg.Log,
	})
	if err != nil {
		return nil, client.GraphJob{}, err
	}
	byHost := map[string]client.GraphNode{}
	for _, n := range live {
		byHost[n.Host] = n
	}
	var nodes []client.GraphNode
	for i := range cfg.Problem.Machines {
		h, _, _ := net.SplitHostPort(f.NodeMonitors[i].InternalAddr())
		n, ok := byHost[h]
		if !ok {
			return nil, client.GraphJob{}, fmt.Errorf("graph run: node %d (%s) not seen through gossip", i, h)
		}
		nodes = append(nodes, n)
	}
	p := hostProblem(cfg.Problem, nodes)
	return nodes, client.GraphJob{Graph: p.Graph, Models: p.Models}, nil
}

// hostProblem renames the problem's machines to the nodes' hosts.
func hostProblem(p planner.Problem, nodes []client.GraphNode) planner.Problem {
	host := map[string]string{}
	out := planner.Problem{Models: p.Models, Graph: planner.Graph{Arcs: p.Graph.Arcs}}
	for i, m := range p.Machines {
		host[m.Name] = nodes[i].Host
		m.Name = nodes[i].Host
		out.Machines = append(out.Machines, m)
	}
	for _, t := range p.Graph.Tasks {
		t.Inputs = append([]planner.Input(nil), t.Inputs...)
		for j := range t.Inputs {
			t.Inputs[j].Machine = host[t.Inputs[j].Machine]
		}
		out.Graph.Tasks = append(out.Graph.Tasks, t)
	}
	return out
}

// runOnce carries plan out; each task sleeps its predicted duration in
// plan times scale.
func runOnce(ctx context.Context, fe *client.Frontend, job client.GraphJob, nodes []client.GraphNode, plan planner.Plan, scale float64, started func(*client.GraphRun)) (time.Duration, error) {
	index := map[string]int{}
	for i, t := range job.Graph.Tasks {
		index[t.Name] = i
	}
	job.Message = func(t planner.Task, _ client.GraphNode) []byte {
		i := index[t.Name]
		d := time.Duration((plan.Finish[i] - plan.Start[i]) * scale * float64(time.Second))
		return []byte(d.String())
	}
	r, err := fe.NewGraphRun(job, nodes, client.GraphOptions{Plan: &plan})
	if err != nil {
		return 0, err
	}
	started(r) // before Wait submits anything: messages can come back at once
	res, err := r.Wait(ctx)
	if err != nil {
		return 0, err
	}
	return res.Makespan, nil
}
