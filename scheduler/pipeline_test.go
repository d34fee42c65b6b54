package scheduler

import (
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// pipelineNodes are ten node monitors nm0..nm9, in racks r0 (even) and
// r1 (odd), hosting app.
func pipelineNodes() []placement.Node {
	out := make([]placement.Node, 10)
	for i := range out {
		out[i] = placement.Node{
			Addr: fmt.Sprintf("10.0.0.%d:20502", i), Host: fmt.Sprintf("10.0.0.%d", i), Name: fmt.Sprintf("nm%d", i),
			Attrs: map[string]string{placement.RackAttr: fmt.Sprintf("r%d", i%2)},
		}
	}
	return out
}

// shortOnlyOf returns the indexes of nodes in the short-only share at
// share, computed by the core policy itself.
func shortOnlyOf(nodes []placement.Node, share float64) []int {
	hashes := make([]uint64, len(nodes))
	for i, n := range nodes {
		hashes[i] = shortjobs.NodeHash(n.Name)
	}
	part := shortjobs.NewPartition(slices.Clone(hashes), share)
	var out []int
	for i, h := range hashes {
		if part.ShortOnly(h) {
			out = append(out, i)
		}
	}
	return out
}

// indexesOf returns the indexes, in nodes, of the nodes in got, sorted.
func indexesOf(nodes, got []placement.Node) []int {
	var out []int
	for _, g := range got {
		out = append(out, slices.IndexFunc(nodes, func(n placement.Node) bool { return n.Addr == g.Addr }))
	}
	slices.Sort(out)
	return out
}

// except returns 0..n-1 without drop, sorted.
func except(n int, drop ...int) []int {
	var out []int
	for i := range n {
		if !slices.Contains(drop, i) {
			out = append(out, i)
		}
	}
	return out
}

// Each stage of the pipeline, alone and in order, on fakes: what
// candidates it leaves and that the plan stays within them.
func TestPlacementPipelineStages(t *testing.T) {
	nodes := pipelineNodes()
	policy := &shortjobs.Config{Cutoff: 10, ShortShare: 0.3, StarveLimit: 4}
	shortOnly := shortOnlyOf(nodes, policy.ShortShare)
	if len(shortOnly) != 3 {
		t.Fatalf("short-only nodes %v, want 3 of 10 at share 0.3", shortOnly)
	}
	general := except(10, shortOnly...)
	free := func(m int) []placement.Task {
		out := make([]placement.Task, m)
		for i := range out {
			out[i] = placement.Task{ID: fmt.Sprint(i)}
		}
		return out
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		policy  *shortjobs.Config
		busy    []int // node monitors advertising long work
		steer   time.Duration
		served  []int // node monitors that served the user just before now
		class   shortjobs.Class
		failed  []int
		cons    []placement.Constraint
		holds   []int // node monitors holding reservations of the request
		tasks   []placement.Task
		opts    placeOptions
		want    []int // candidates left for the plan
		wantErr error
	}{
		{name: "the view: every live node hosting the app", tasks: free(2), want: except(10)},
		{name: "failed nodes dropped", failed: []int{3, 7}, tasks: free(2), want: except(10, 3, 7)},
		{name: "constraints", tasks: free(2), want: []int{0, 2, 4, 6, 8},
			cons: []placement.Constraint{{Key: placement.RackAttr, Op: placement.OpEq, Values: []string{"r0"}}}},
		{name: "no node meets the constraints: the plan has no candidates", tasks: free(2), wantErr: placement.ErrNoCandidates,
			cons: []placement.Constraint{{Key: placement.RackAttr, Op: placement.OpEq, Values: []string{"r9"}}}},
		{name: "a long job avoids the short-only share", policy: policy, class: shortjobs.Long, tasks: free(2), want: general},
		{name: "a short job avoids long work", policy: policy, class: shortjobs.Short, busy: []int{0, 1, 2, 3, 4},
			tasks: free(2), want: []int{5, 6, 7, 8, 9}},
		{name: "the policy off: nothing steered", busy: []int{0, 1, 2, 3, 4}, tasks: free(2), want: except(10)},
		{name: "holders kept", holds: []int{1, 2}, tasks: free(2), want: except(10)},
		{name: "holders last: those holding none", holds: []int{1, 2}, tasks: free(2),
			opts: placeOptions{holders: holdersLast}, want: except(10, 1, 2)},
		{name: "holders last: every one holds, so all", holds: except(10), tasks: free(2),
			opts: placeOptions{holders: holdersLast}, want: except(10)},
		{name: "holders dropped", holds: []int{1, 2}, tasks: free(2),
			opts: placeOptions{holders: holdersDropped}, want: except(10, 1, 2)},
		{name: "class before holders: a long job on every general node gets none", policy: policy, class: shortjobs.Long,
			holds: general, tasks: free(2), opts: placeOptions{holders: holdersDropped}, wantErr: placement.ErrNoCandidates},
		{name: "user serving: only the nodes serving the user lately", steer: time.Second, served: []int{4, 5}, holds: []int{5},
			tasks: free(2), opts: placeOptions{holders: holdersDropped, user: userServing, now: now}, want: []int{4}},
		{name: "user serving with steering off: nothing", served: []int{4}, tasks: free(2),
			opts: placeOptions{user: userServing, now: now}, wantErr: placement.ErrNoCandidates},
		{name: "user spread with no history: every node", steer: time.Second, tasks: free(2),
			opts: placeOptions{user: userSpread, now: now}, want: except(10)},
		{name: "feasible given: view, failed and constraints skipped, class applied", policy: policy, class: shortjobs.Long,
			failed: []int{general[0]}, tasks: free(1),
			opts: placeOptions{feasible: []placement.Node{nodes[general[0]], nodes[shortOnly[0]]}}, want: []int{general[0]}},
		{name: "every stage at once", policy: policy, class: shortjobs.Long, failed: []int{general[0]}, holds: []int{general[1]},
			cons:  []placement.Constraint{{Key: placement.RackAttr, Op: placement.OpExists}},
			tasks: free(2), opts: placeOptions{holders: holdersDropped}, want: general[2:]},
		{name: "widened: a task with nowhere new to go is starved, not an error", holds: except(10, 2), tasks: []placement.Task{
			{ID: "a", Nodes: []string{"nm1"}}, {ID: "b", Nodes: []string{"nm2"}}},
			opts: placeOptions{holders: holdersDropped, widened: true}, want: []int{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			view := &busyView{fakeView: &fakeView{byApp: map[string][]placement.Node{app: nodes}}, busy: map[string]bool{}}
			for _, i := range tt.busy {
				view.busy[nodes[i].Addr] = true
			}
			short, err := newShortPolicy(tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			steer := newSteerBook(tt.steer)
			user := &sparrowrpc.TUserGroupInfo{User: "u"}
			for _, i := range tt.served {
				steer.steer.Served(user.User, nodes[i].Addr, now.Add(-time.Millisecond))
			}
			pipe := placementPipeline{view: view, short: short, steer: &steer, rand: &placer{rng: mrand.New(mrand.NewPCG(1, 2))}}
			r := &request{Request: placement.NewRequest("r", tt.tasks), app: app, cons: tt.cons, user: user, ratio: 2,
				short: shortJob{class: tt.class}, failed: map[string]bool{}}
			for _, i := range tt.failed {
				r.failed[nodes[i].Addr] = true
			}
			for _, i := range tt.holds {
				r.AddProbes([]placement.Probe{{Node: nodes[i], Count: 1}})
			}
			o := tt.opts
			o.tasks, o.ratio = tt.tasks, 2
			if got := indexesOf(nodes, pipe.stages(r, o)); !slices.Equal(got, tt.want) {
				t.Fatalf("candidates %v, want %v", got, tt.want)
			}
			probes, starved, err := pipe.place(r, o)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("plan error %v, want %v", err, tt.wantErr)
			}
			placed := len(starved)
			for _, p := range probes {
				if i := indexesOf(nodes, []placement.Node{p.Node}); !slices.Contains(tt.want, i[0]) {
					t.Fatalf("probe on nm%d, not a candidate %v", i[0], tt.want)
				}
				placed += p.Count
			}
			if tt.wantErr == nil && len(starved) == 0 && placed < len(tt.tasks) {
				t.Fatalf("%d reservations for %d tasks", placed, len(tt.tasks))
			}
			if o.widened && len(starved) != 1 {
				t.Fatalf("starved %v, want the task whose only new node is taken", starved)
			}
		})
	}
}

// feasible refuses an app nobody hosts, and constraints nobody meets,
// with the refusals submitJob gives.
func TestPlacementPipelineFeasible(t *testing.T) {
	nodes := pipelineNodes()
	pipe := placementPipeline{view: &fakeView{byApp: map[string][]placement.Node{app: nodes}}}
	tests := []struct {
		name    string
		app     string
		cons    []placement.Constraint
		want    int
		wantErr string
	}{
		{name: "every host", app: app, want: 10},
		{name: "constrained", app: app, want: 5,
			cons: []placement.Constraint{{Key: placement.RackAttr, Op: placement.OpEq, Values: []string{"r1"}}}},
		{name: "unknown app", app: "nobody", wantErr: `no live node monitor hosts app "nobody"`},
		{name: "unknown app with constraints", app: "nobody", wantErr: `no live node monitor hosts app "nobody"`,
			cons: []placement.Constraint{{Key: placement.RackAttr, Op: placement.OpExists}}},
		{name: "constraints nobody meets", app: app, wantErr: `no live node monitor satisfies constraint`,
			cons: []placement.Constraint{{Key: "gpu", Op: placement.OpExists}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pipe.feasible(tt.app, tt.cons)
			if tt.wantErr != "" {
				var ire *sparrowrpc.IncompleteRequestException
				if !errors.As(err, &ire) || !strings.Contains(ire.Message, tt.wantErr) {
					t.Fatalf("feasible = %v, want a refusal saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(got) != tt.want {
				t.Fatalf("feasible = %d nodes, %v; want %d", len(got), err, tt.want)
			}
		})
	}
}
