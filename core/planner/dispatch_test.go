package planner

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDispatcherFollowsThePlan replays random plans event by event, each
// task ending at its predicted finish: every machine must be given its
// tasks in exactly the plan's order, each once.
func TestDispatcherFollowsThePlan(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		p := randomProblem(rng, 2+rng.IntN(7), 1+rng.IntN(3))
		for i := range p.Graph.Arcs {
			// Pipelined pairs start together in the plan; the live fleet
			// gives no such guarantee, so the replay covers file arcs.
			p.Graph.Arcs[i].Pipelined = false
		}
		plan, _, err := Solve(p, Options{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		d, err := NewDispatcher(p, plan)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		got := make([][]int, len(p.Machines))
		var out []int
		for !d.Done() {
			for _, a := range d.Next() {
				if a.Fallback || plan.Machine[a.Task] != a.Machine {
					t.Fatalf("seed %d: task %d sent to machine %d (fallback %v), planned on %d", seed, a.Task, a.Machine, a.Fallback, plan.Machine[a.Task])
				}
				got[a.Machine] = append(got[a.Machine], a.Task)
				out = append(out, a.Task)
			}
			if len(out) == 0 {
				t.Fatalf("seed %d: nothing outstanding and the job is not done", seed)
			}
			// The outstanding task predicted to end first ends now.
			i := 0
			for j, x := range out {
				if plan.Finish[x] < plan.Finish[out[i]] || (plan.Finish[x] == plan.Finish[out[i]] && x < out[i]) {
					i = j
				}
			}
			if err := d.Finished(out[i]); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			out = slices.Delete(out, i, i+1)
		}
		for m := range got {
			if !slices.Equal(got[m], plan.Order[m]) && !(len(got[m]) == 0 && len(plan.Order[m]) == 0) {
				t.Fatalf("seed %d: machine %d ran %v, plan orders %v", seed, m, got[m], plan.Order[m])
			}
		}
	}
}

// chain is A → B on machine 0 and C on machine 1, with file arcs.
func chain(t *testing.T) (*Dispatcher, Problem) {
	t.Helper()
	p := Problem{Models: s1().Models, Machines: s1().Machines[:2]}
	typ := s1().Graph.Tasks[0].Type
	p.Graph.Tasks = []Task{{Name: "A", Type: typ}, {Name: "B", Type: typ}, {Name: "C", Type: typ}}
	p.Graph.Arcs = []Arc{{From: "A", To: "B"}}
	d, err := NewDispatcher(p, Plan{Machine: []int{0, 0, 1}, Order: [][]int{{0, 1}, {2}}})
	if err != nil {
		t.Fatal(err)
	}
	return d, p
}

func TestDispatcherFallsBackWhenAMachineIsLost(t *testing.T) {
	d, _ := chain(t)
	if got := d.Next(); !slices.Equal(got, []Assignment{{Task: 0, Machine: 0}, {Task: 2, Machine: 1}}) {
		t.Fatalf("first wave %v", got)
	}
	lost, err := d.MachineLost(0)
	if err != nil || lost != 0 {
		t.Fatalf("MachineLost(0) = %d, %v; want task 0 back, no error", lost, err)
	}
	if got := d.Next(); len(got) != 0 {
		t.Fatalf("machine 1 is busy with C, yet %v was sent", got)
	}
	if err := d.Finished(2); err != nil {
		t.Fatal(err)
	}
	if got := d.Next(); !slices.Equal(got, []Assignment{{Task: 0, Machine: 1, Fallback: true}}) {
		t.Fatalf("after C: %v, want A on machine 1 as a fallback", got)
	}
	if err := d.Failed(0); err != nil { // the executor failed it once
		t.Fatal(err)
	}
	if got := d.Next(); !slices.Equal(got, []Assignment{{Task: 0, Machine: 1, Fallback: true}}) {
		t.Fatalf("after A failed: %v, want A again on machine 1", got)
	}
	if err := d.Finished(0); err != nil {
		t.Fatal(err)
	}
	if got := d.Next(); !slices.Equal(got, []Assignment{{Task: 1, Machine: 1, Fallback: true}}) {
		t.Fatalf("after A: %v, want B on machine 1", got)
	}
	if err := d.Finished(1); err != nil {
		t.Fatal(err)
	}
	if !d.Done() {
		t.Fatal("every task finished, Done is false")
	}
}

func TestDispatcherErrors(t *testing.T) {
	d, p := chain(t)
	if err := d.Finished(1); err == nil {
		t.Error("Finished of a task never submitted succeeded")
	}
	if err := d.Failed(9); err == nil {
		t.Error("Failed of a task out of range succeeded")
	}
	if _, err := d.MachineLost(5); err == nil {
		t.Error("MachineLost of a machine out of range succeeded")
	}
	d.Next()
	if _, err := d.MachineLost(1); err != nil {
		t.Errorf("losing one of two machines: %v", err)
	}
	if _, err := d.MachineLost(0); !errors.Is(err, ErrAllMachinesLost) {
		t.Errorf("losing the last machine: %v, want ErrAllMachinesLost", err)
	}
	if _, err := NewDispatcher(p, Plan{Machine: []int{0}}); err == nil {
		t.Error("a plan of 1 task for a 3-task graph was accepted")
	}
	if _, err := NewDispatcher(p, Plan{Machine: []int{0, 0, 2}}); err == nil {
		t.Error("a plan naming machine 2 of 2 was accepted")
	}
}
