package scheduler

import (
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"reflect"
	"testing"

	"github.com/sparrowfleet/sparrow/core/placement"
)

// TestPlacer: the plans of a pipeline drawing from a placer are a
// function of the placer's seed (two placers of one seed place alike,
// call after call), with d·m reservations over the candidates, and its
// jitter stays in [0, n).
func TestPlacer(t *testing.T) {
	nodes := func(n int) []placement.Node {
		out := make([]placement.Node, n)
		for i := range out {
			out[i] = placement.Node{Addr: fmt.Sprintf("10.0.0.%d:20502", i+1), Host: fmt.Sprintf("10.0.0.%d", i+1)}
		}
		return out
	}
	tasks := func(m int) []placement.Task {
		out := make([]placement.Task, m)
		for i := range out {
			out[i] = placement.Task{ID: fmt.Sprint(i)}
		}
		return out
	}
	tests := []struct {
		name    string
		nodes   int
		tasks   int
		ratio   float64
		want    int // reservations placed
		wantErr error
	}{
		{name: "d·m over many nodes", nodes: 20, tasks: 3, ratio: 2, want: 6},
		{name: "more reservations than nodes", nodes: 2, tasks: 3, ratio: 2, want: 6},
		{name: "a fractional ratio rounds up", nodes: 20, tasks: 3, ratio: 1.5, want: 5},
		{name: "no candidates", nodes: 0, tasks: 1, ratio: 2, wantErr: placement.ErrNoCandidates},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newPlacer := func() *placer { return &placer{rng: mrand.New(mrand.NewPCG(7, 11))} }
			a, b := newPlacer(), newPlacer()
			view := &fakeView{byApp: map[string][]placement.Node{app: nodes(tt.nodes)}}
			plan := func(p *placer) ([]placement.Probe, error) {
				pipe := placementPipeline{view: view, steer: &steerBook{}, rand: p}
				r := &request{Request: placement.NewRequest("r", tasks(tt.tasks)), app: app}
				probes, _, err := pipe.place(r, placeOptions{tasks: tasks(tt.tasks), ratio: tt.ratio})
				return probes, err
			}
			for round := range 3 {
				pa, errA := plan(a)
				pb, errB := plan(b)
				if !errors.Is(errA, tt.wantErr) || !errors.Is(errB, tt.wantErr) {
					t.Fatalf("round %d: errors %v, %v; want %v", round, errA, errB, tt.wantErr)
				}
				if !reflect.DeepEqual(pa, pb) {
					t.Fatalf("round %d: one seed placed %v and %v", round, pa, pb)
				}
				total := 0
				for _, p := range pa {
					total += p.Count
				}
				if total != tt.want {
					t.Fatalf("round %d: %d reservations placed, want %d", round, total, tt.want)
				}
				if j := a.int63n(int64(tt.want) + 1); j < 0 || j > int64(tt.want) {
					t.Fatalf("round %d: jitter %d outside [0, %d]", round, j, tt.want)
				}
				b.int63n(int64(tt.want) + 1)
			}
		})
	}
}
