package planner

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestParseProblem(t *testing.T) {
	data, err := json.Marshal(JoinOnFrank([2]string{"F2", "F3"}, "F1"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseProblem(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Graph.Tasks) != 9 || len(p.Graph.Arcs) != 10 || len(p.Machines) != 3 {
		t.Errorf("round trip lost parts: %d tasks, %d arcs, %d machines", len(p.Graph.Tasks), len(p.Graph.Arcs), len(p.Machines))
	}
	for _, c := range []struct{ in, want string }{
		{`{`, "unexpected EOF"},
		{`{"graph":{"tasks":[]},"extra":1}`, `unknown field "extra"`},
		{`{"machines":[{"name":"a","cores":1,"ghz":1,"disk_read":1,"disk_write":1,"net":1}],"graph":{"tasks":[{"name":"A","type":"x"}]}}`, "has no model"},
		{`{"graph":{"tasks":"no"}}`, "cannot unmarshal"},
	} {
		if _, err := ParseProblem([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.in, err, c.want)
		}
	}
}

// FuzzProblem feeds arbitrary JSON to the task-graph parser and, when it
// accepts, to a budgeted search: a clear error or a complete plan with a
// finite makespan, never a panic or a hang.
func FuzzProblem(f *testing.F) {
	for _, p := range []Problem{s1(), JoinOnFrank([2]string{"F2", "F3"}, "F1")} {
		data, err := json.Marshal(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	cyclic := s1()
	cyclic.Graph.Arcs = append(cyclic.Graph.Arcs, Arc{From: "C", To: "A"})
	data, _ := json.Marshal(cyclic)
	f.Add(data)
	f.Add([]byte(`{"graph":{"tasks":[{"name":"A","type":"unit"}],"arcs":[{"from":"A","to":"Z"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProblem(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if len(p.Graph.Tasks)*len(p.Machines) > 2000 {
			return // valid but too large to search inside a fuzz iteration
		}
		plan, _, err := Solve(p, Options{MaxNodes: 200})
		if err != nil {
			return // e.g. sizes so large that a demand overflows: reported, not hidden
		}
		if len(plan.Machine) != len(p.Graph.Tasks) || math.IsNaN(plan.Makespan) {
			t.Fatalf("plan %+v for %d tasks", plan, len(p.Graph.Tasks))
		}
	})
}
