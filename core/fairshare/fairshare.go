package fairshare

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/sparrowfleet/sparrow/core/cmmf"
)

// Usage is one user's work on one node: reservations queued and tasks
// running.
type Usage struct {
	Queued, Running int
}

// NodeReport is what one node monitor tells the coordinator each period.
type NodeReport struct {
	// Node names the node monitor (its gossip name).
	Node string
	// Type is the node's machine type: a canonical string of its
	// attributes, equal for nodes that every constraint treats alike.
	Type string
	// Slots is the node's slot count.
	Slots int
	// Users is the node's work per user.
	Users map[string]Usage
}

// Guidance is the coordinator's answer for one period.
type Guidance struct {
	// Running is each user's running tasks across the cluster, summed
	// from the reports: what Choosy compares.
	Running map[string]int
	// Target is each user's CMMF allocation in slots (divisible).
	Target map[string]float64
	// TypeWeights maps a machine type to the weights of the users CMMF
	// places on it: a node of that type running weighted fair queues with
	// these weights splits its slots as CMMF splits the type. Users
	// without an allocation on a type are absent (the node gives them its
	// floor weight, MinWeight).
	TypeWeights map[string]map[string]float64
	// Types and Users count what the solve covered.
	Types, Users int
}

// MinWeight is the weight a node gives, under CMMF weights, to a user with
// work queued on a type CMMF allocates it nothing of: small enough to
// yield to every allocated user, positive so that it is never starved
// when they have nothing queued there.
const MinWeight = 1e-3

// Compute derives the guidance from a period's reports. weight gives each
// user's base weight (a user it does not know gets 1); it must return a
// finite value > 0. Reports of the same node are taken once (the last).
func Compute(reports []NodeReport, weight func(user string) float64) (Guidance, error) {
	byNode := make(map[string]NodeReport, len(reports))
	for _, r := range reports {
		if r.Slots < 0 {
			return Guidance{}, fmt.Errorf("fairshare: node %q reports %d slots", r.Node, r.Slots)
		}
		byNode[r.Node] = r
	}
	typeSlots := map[string]int64{}
	demand := map[string]int64{}
	running := map[string]int{}
	eligible := map[string]map[string]bool{}
	for _, r := range byNode {
		typeSlots[r.Type] += int64(r.Slots)
		for u, use := range r.Users {
			if use.Queued < 0 || use.Running < 0 {
				return Guidance{}, fmt.Errorf("fairshare: node %q reports negative work for user %q", r.Node, u)
			}
			if use.Queued+use.Running == 0 {
				continue
			}
			demand[u] += int64(use.Queued + use.Running)
			running[u] += use.Running
			if eligible[u] == nil {
				eligible[u] = map[string]bool{}
			}
			eligible[u][r.Type] = true
		}
	}
	p := &cmmf.Problem{}
	for _, t := range sortedKeys(typeSlots) {
		p.Types = append(p.Types, cmmf.MachineType{Name: t, Slots: typeSlots[t]})
	}
	users := sortedKeys(demand)
	for _, u := range users {
		w := weight(u)
		if math.IsNaN(w) || math.IsInf(w, 0) || w <= 0 {
			return Guidance{}, fmt.Errorf("fairshare: weight %v of user %q is not a finite number > 0", w, u)
		}
		// The solver wants non-empty names, and "" is a real user here:
		// work sent without user information. Quoted names are non-empty
		// and as distinct as the users; results map back by index.
		p.Users = append(p.Users, cmmf.User{Name: strconv.Quote(u), Weight: w, Demand: demand[u], Types: sortedKeys(eligible[u])})
	}
	g := Guidance{Running: running, Target: map[string]float64{}, TypeWeights: map[string]map[string]float64{},
		Types: len(p.Types), Users: len(p.Users)}
	if len(p.Users) == 0 {
		return g, nil
	}
	a, err := cmmf.Solve(p)
	if err != nil {
		return Guidance{}, fmt.Errorf("fairshare: solving CMMF over %d users and %d types: %w", len(p.Users), len(p.Types), err)
	}
	for i, u := range users {
		g.Target[u] = a.Total[i]
		for t, x := range a.Matrix[i] {
			if x <= cmmf.Tolerance {
				continue
			}
			name := p.Types[t].Name
			if g.TypeWeights[name] == nil {
				g.TypeWeights[name] = map[string]float64{}
			}
			// A user's weight on a type is its slots there: weighted fair
			// queues then split the type's slots in these proportions.
			g.TypeWeights[name][u] = x
		}
	}
	return g, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
