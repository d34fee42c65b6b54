package fairness

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sparrowfleet/sparrow/core/cmmf"
	"github.com/sparrowfleet/sparrow/core/placement"
)

// MachineType is one of the scenario's kinds of node, with the attributes
// its node monitors advertise.
type MachineType struct {
	Name  string
	Attrs map[string]string
}

// User is one framework of the scenario and its placement constraints on
// node attributes (every constraint must hold).
type User struct {
	Name        string
	Constraints []placement.Constraint
}

// Event is a user arriving (becoming backlogged) or leaving (submitting no
// more work) at a time on the paper's clock.
type Event struct {
	At     time.Duration
	User   string
	Arrive bool
}

// The paper's four EC2 instance types (§7.3), 40 cores each: the attribute
// values stand for the properties the frameworks' constraints name.
var PaperTypes = []MachineType{
	{Name: "standard", Attrs: map[string]string{"machine": "standard", "mem": "low", "net": "1g", "gpu": "no"}},
	{Name: "high-memory", Attrs: map[string]string{"machine": "high-memory", "mem": "high", "net": "1g", "gpu": "no"}},
	{Name: "cluster", Attrs: map[string]string{"machine": "cluster", "mem": "mid", "net": "10g", "gpu": "no"}},
	{Name: "cluster-gpu", Attrs: map[string]string{"machine": "cluster-gpu", "mem": "mid", "net": "10g", "gpu": "yes"}},
}

// PaperUsers are the paper's four frameworks (§7.3). CUDA's GPU constraint
// is implied by the paper, not stated; MPI "needed 10 Gbps Ethernet",
// which the cluster and cluster-GPU types have.
var PaperUsers = []User{
	{Name: "hadoop"},
	{Name: "spark", Constraints: []placement.Constraint{{Key: "mem", Op: placement.OpEq, Values: []string{"high"}}}},
	{Name: "cuda", Constraints: []placement.Constraint{{Key: "gpu", Op: placement.OpEq, Values: []string{"yes"}}}},
	{Name: "mpi", Constraints: []placement.Constraint{{Key: "net", Op: placement.OpEq, Values: []string{"10g"}}}},
}

// PaperEvents is Figure 14's timeline on the paper's clock, in seconds.
// Hadoop runs throughout; Spark joins at about 30 s, CUDA at 65 s, MPI at
// 100 s, and a second MPI job at 305 s. The paper says only that "MPI and
// CUDA eventually finish" in between: CUDA leaving at 200 s and MPI at
// 250 s is this harness's choice. The second MPI job is the same user
// returning. The run ends at 360 s.
var PaperEvents = []Event{
	{At: 0, User: "hadoop", Arrive: true},
	{At: 30 * time.Second, User: "spark", Arrive: true},
	{At: 65 * time.Second, User: "cuda", Arrive: true},
	{At: 100 * time.Second, User: "mpi", Arrive: true},
	{At: 200 * time.Second, User: "cuda"},
	{At: 250 * time.Second, User: "mpi"},
	{At: 305 * time.Second, User: "mpi", Arrive: true},
}

// PaperEnd is when the scenario stops, on the paper's clock.
const PaperEnd = 360 * time.Second

// Eligible returns the names of the types whose attributes satisfy all of
// u's constraints, in types' order.
func Eligible(u User, types []MachineType) []string {
	var out []string
	for _, t := range types {
		n := placement.Node{Attrs: t.Attrs}
		if !slices.ContainsFunc(u.Constraints, func(c placement.Constraint) bool { return !c.Matches(n) }) {
			out = append(out, t.Name)
		}
	}
	return out
}

// Scale maps the paper's times onto the run's clock: each paper second
// lasts factor seconds.
func Scale(events []Event, factor float64) []Event {
	out := make([]Event, len(events))
	for i, e := range events {
		e.At = scaleDur(e.At, factor)
		out[i] = e
	}
	return out
}

func scaleDur(d time.Duration, factor float64) time.Duration {
	return time.Duration(float64(d) * factor)
}

// Phase is an interval during which the same users are live, with their
// CMMF shares of the cluster.
type Phase struct {
	Start, End time.Duration
	// Live[i] says whether user i submits work in this phase; indexed
	// like the users passed to Phases.
	Live []bool
	// Target[u] is user u's CMMF share of all slots (0 when not live);
	// indexed like the users passed to Phases.
	Target []float64
}

// Phases splits [0, end) at every event and computes each interval's
// offline CMMF allocation (core/cmmf, divisible, unit weights, unlimited
// demands: the users are backlogged) of slotsPerType slots of every type.
// Events must be in time order, within [0, end), and name known users;
// a user arrives only when not live and leaves only when live.
func Phases(events []Event, end time.Duration, users []User, types []MachineType, slotsPerType int) ([]Phase, error) {
	if end <= 0 || slotsPerType <= 0 {
		return nil, errors.New("phases: need a positive end and slots per type")
	}
	idx := map[string]int{}
	for i, u := range users {
		idx[u.Name] = i
	}
	live := make([]bool, len(users))
	var out []Phase
	var at time.Duration
	for k := 0; k <= len(events); k++ {
		next := end
		if k < len(events) {
			next = events[k].At
			if next < at || next >= end {
				return nil, fmt.Errorf("phases: event %d (%s at %v) is out of order or outside [0, %v)", k, events[k].User, next, end)
			}
		}
		if next > at {
			p, err := phase(at, next, live, users, types, slotsPerType)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		if k == len(events) {
			break
		}
		e := events[k]
		i, ok := idx[e.User]
		if !ok {
			return nil, fmt.Errorf("phases: event %d names unknown user %q", k, e.User)
		}
		if live[i] == e.Arrive {
			return nil, fmt.Errorf("phases: event %d: user %q arrives while live or leaves while not live", k, e.User)
		}
		live[i] = e.Arrive
		at = next
	}
	return out, nil
}

func phase(start, end time.Duration, live []bool, users []User, types []MachineType, slotsPerType int) (Phase, error) {
	p := Phase{Start: start, End: end, Live: slices.Clone(live), Target: make([]float64, len(users))}
	prob := &cmmf.Problem{}
	for _, t := range types {
		prob.Types = append(prob.Types, cmmf.MachineType{Name: t.Name, Slots: int64(slotsPerType)})
	}
	var cols []int
	for i, u := range users {
		if !live[i] {
			continue
		}
		prob.Users = append(prob.Users, cmmf.User{Name: u.Name, Weight: 1, Demand: cmmf.Unlimited, Types: Eligible(u, types)})
		cols = append(cols, i)
	}
	if len(cols) == 0 {
		return p, nil
	}
	a, err := cmmf.Solve(prob)
	if err != nil {
		return Phase{}, fmt.Errorf("phases: CMMF at %v: %w", start, err)
	}
	total := float64(slotsPerType * len(types))
	for j, i := range cols {
		p.Target[i] = a.Total[j] / total
	}
	return p, nil
}
