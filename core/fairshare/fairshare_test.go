package fairshare

import (
	"fmt"
	"math"
	"testing"
)

// mesosTypes are the four machine types of the Choosy paper's Mesos
// experiment (§7.3): 40 cores each, here 5 nodes x 8 slots.
var mesosTypes = []string{"standard", "highmem", "cluster", "gpu"}

// mesosEligible are the frameworks' constraints: Hadoop anywhere, Spark on
// high-memory machines, CUDA on GPU machines, MPI on 10 Gbps machines
// (cluster and cluster-GPU).
var mesosEligible = map[string][]string{
	"hadoop": mesosTypes,
	"spark":  {"highmem"},
	"cuda":   {"gpu"},
	"mpi":    {"cluster", "gpu"},
}

// mesosReports has every given user backlogged (100 queued reservations
// on every node it may use).
func mesosReports(users ...string) []NodeReport {
	var out []NodeReport
	for _, typ := range mesosTypes {
		for n := range 5 {
			r := NodeReport{Node: fmt.Sprintf("%s-%d", typ, n), Type: typ, Slots: 8, Users: map[string]Usage{}}
			for _, u := range users {
				for _, t := range mesosEligible[u] {
					if t == typ {
						r.Users[u] = Usage{Queued: 100}
					}
				}
			}
			out = append(out, r)
		}
	}
	return out
}

func unit(string) float64 { return 1 }

func TestComputeMesosScenario(t *testing.T) {
	tests := []struct {
		users []string
		want  map[string]float64 // CMMF targets in slots (notes, E11)
	}{
		{[]string{"hadoop"}, map[string]float64{"hadoop": 160}},
		{[]string{"hadoop", "spark"}, map[string]float64{"hadoop": 120, "spark": 40}},
		{[]string{"hadoop", "spark", "cuda"}, map[string]float64{"hadoop": 80, "spark": 40, "cuda": 40}},
		{[]string{"hadoop", "spark", "cuda", "mpi"}, map[string]float64{"hadoop": 40, "spark": 40, "cuda": 40, "mpi": 40}},
		{[]string{"hadoop", "spark", "mpi"}, map[string]float64{"hadoop": 60, "spark": 40, "mpi": 60}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.users), func(t *testing.T) {
			g, err := Compute(mesosReports(tt.users...), unit)
			if err != nil {
				t.Fatal(err)
			}
			if g.Types != 4 || g.Users != len(tt.users) {
				t.Fatalf("solved %d types, %d users", g.Types, g.Users)
			}
			for u, want := range tt.want {
				if got := g.Target[u]; math.Abs(got-want) > 1e-6 {
					t.Errorf("target of %s = %v, want %v", u, got, want)
				}
			}
			// Each type's weights are its slots split by CMMF.
			for typ, ws := range g.TypeWeights {
				sum := 0.0
				for u, w := range ws {
					sum += w
					if !contains(mesosEligible[u], typ) {
						t.Errorf("user %s weighted on %s, which it cannot use", u, typ)
					}
				}
				if math.Abs(sum-40) > 1e-6 {
					t.Errorf("weights on %s sum to %v, want its 40 slots", typ, sum)
				}
			}
		})
	}
}

func TestComputeRunningAndDemand(t *testing.T) {
	reports := []NodeReport{
		{Node: "a", Type: "x", Slots: 4, Users: map[string]Usage{"u": {Running: 3}, "v": {Running: 1, Queued: 5}}},
		{Node: "b", Type: "x", Slots: 4, Users: map[string]Usage{"u": {Running: 2, Queued: 1}, "idle": {}}},
		// A node's later report replaces its earlier one.
		{Node: "a", Type: "x", Slots: 4, Users: map[string]Usage{"u": {Running: 4}}},
	}
	g, err := Compute(reports, unit)
	if err != nil {
		t.Fatal(err)
	}
	if g.Running["u"] != 6 || g.Running["v"] != 0 || len(g.Running) != 1 {
		t.Fatalf("running %v, want u: 6 only (v's report was replaced)", g.Running)
	}
	// u wants 7 of 8 slots; alone it gets them all.
	if g.Target["u"] != 7 {
		t.Fatalf("target of u = %v, want its demand 7", g.Target["u"])
	}
	if _, ok := g.Target["idle"]; ok {
		t.Fatal("a user with no work got a target")
	}
}

// TestComputeAnonymousUser: work sent without user information is the
// user "", which the solver must take like any other (it once failed the
// whole period), and a user whose name is the quoted "" stays distinct.
func TestComputeAnonymousUser(t *testing.T) {
	reports := []NodeReport{
		{Node: "a", Type: "x", Slots: 4, Users: map[string]Usage{"": {Running: 2, Queued: 4}, `""`: {Running: 2, Queued: 4}}},
	}
	g, err := Compute(reports, unit)
	if err != nil {
		t.Fatal(err)
	}
	if g.Target[""] != 2 || g.Target[`""`] != 2 || g.Running[""] != 2 {
		t.Fatalf("targets %v, running %v; want 2 slots each for \"\" and `\"\"`", g.Target, g.Running)
	}
	if g.TypeWeights["x"][""] != 2 {
		t.Fatalf("type weights %v, want \"\" at 2 on x", g.TypeWeights)
	}
}

func TestComputeWeights(t *testing.T) {
	w := func(u string) float64 {
		if u == "hadoop" {
			return 3
		}
		return 1
	}
	g, err := Compute(mesosReports("hadoop", "spark"), w)
	if err != nil {
		t.Fatal(err)
	}
	// Weighted 3:1, Hadoop could take 120 and Spark 40, as unweighted:
	// Spark's level 40 vs Hadoop's 120/3 = 40.
	if math.Abs(g.Target["hadoop"]-120) > 1e-6 || math.Abs(g.Target["spark"]-40) > 1e-6 {
		t.Fatalf("targets %v", g.Target)
	}
}

func TestComputeRejectsBadInput(t *testing.T) {
	tests := []struct {
		name    string
		reports []NodeReport
		weight  func(string) float64
	}{
		{"negative slots", []NodeReport{{Node: "a", Type: "x", Slots: -1}}, unit},
		{"negative work", []NodeReport{{Node: "a", Type: "x", Slots: 1, Users: map[string]Usage{"u": {Queued: -1}}}}, unit},
		{"zero weight", []NodeReport{{Node: "a", Type: "x", Slots: 1, Users: map[string]Usage{"u": {Queued: 1}}}}, func(string) float64 { return 0 }},
		{"NaN weight", []NodeReport{{Node: "a", Type: "x", Slots: 1, Users: map[string]Usage{"u": {Queued: 1}}}}, func(string) float64 { return math.NaN() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Compute(tt.reports, tt.weight); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
