package quincy

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/core/flow"
)

// TestApplyWorkedExample applies the QFP schedule of the worked example
// (kill a, move d to C2, start b on C4) at Now = 100 s and checks the
// time sums.
func TestApplyWorkedExample(t *testing.T) {
	s := workedExample(3 * time.Second)
	before := s.Clone()
	g, err := Build(s, QFP, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	sch := solveAndRead(t, g)
	next := s.Clone()
	if err := next.Apply(sch); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, before) {
		t.Fatal("Build, Solve or ReadSchedule changed the state")
	}
	now := s.Now
	want := [][]Task{
		{
			// a: killed after 3 s; waits again from now, ν keeps its 4 s.
			{Input: s.Jobs[0].Tasks[0].Input, State: Waiting, Computer: -1, Since: now, WaitedBefore: 4 * time.Second, RanBefore: 3 * time.Second},
			// b: waited 10 s, runs on C4 from now.
			{Input: s.Jobs[0].Tasks[1].Input, State: Running, Computer: 3, Since: now, WaitedBefore: 10 * time.Second},
			s.Jobs[0].Tasks[2],
		},
		{
			// d: killed on C4 after 3 s, restarted on C2: θ keeps the 3 s.
			{Input: s.Jobs[1].Tasks[0].Input, State: Running, Computer: 1, Since: now, WaitedBefore: 6 * time.Second, RanBefore: 3 * time.Second},
			s.Jobs[1].Tasks[1],
		},
	}
	for j := range want {
		for n := range want[j] {
			if got := next.Jobs[j].Tasks[n]; !reflect.DeepEqual(got, want[j][n]) {
				t.Errorf("job %d task %d: %+v, want %+v", j, n, got, want[j][n])
			}
		}
	}
	if err := next.Validate(); err != nil {
		t.Error(err)
	}
}

// TestApplyRandom: applying any schedule leaves a valid state (no
// computer over its slots) whose running counts are the schedule's and
// whose roots are all placed, for every policy.
func TestApplyRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for c := range 200 {
		s := randomState(rng, 4)
		for _, pol := range Policies {
			g, err := Build(s, pol, DefaultParams())
			if err != nil {
				continue
			}
			sol, err := flow.Solve(g.Net)
			if err != nil {
				t.Fatalf("case %d %v: %v", c, pol, err)
			}
			sch, err := g.ReadSchedule(sol)
			if err != nil {
				t.Fatalf("case %d %v: %v", c, pol, err)
			}
			next := s.Clone()
			if err := next.Apply(sch); err != nil {
				t.Fatal(err)
			}
			if err := next.Validate(); err != nil {
				t.Fatalf("case %d %v: applied state: %v", c, pol, err)
			}
			for j, job := range next.Jobs {
				running := 0
				for _, task := range job.Tasks {
					if task.State == Running {
						running++
					}
				}
				if running != sch.Running[j] {
					t.Fatalf("case %d %v: job %d runs %d after Apply, schedule says %d", c, pol, j, running, sch.Running[j])
				}
				if job.Root != nil && job.Root.Computer < 0 {
					t.Fatalf("case %d %v: job %d's root still unplaced", c, pol, j)
				}
			}
		}
	}
}
