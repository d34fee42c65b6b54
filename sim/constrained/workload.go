package constrained

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/sparrowfleet/sparrow/core/placement"
)

// SizeBin is a range of job sizes (tasks) and the fraction of jobs in it.
type SizeBin struct {
	Lo, Hi   int
	Fraction float64
}

// FacebookSizes is the job-size mix the simulation draws from, after the
// Facebook MapReduce distribution the paper uses (§7.1, citing Zaharia et
// al., "Delay Scheduling", EuroSys 2010, Table 3 as we recall it: that
// paper is not in our library, so the bins are unchecked). Sizes are
// uniform within a bin; the open top bin is taken as 1501–3000.
var FacebookSizes = []SizeBin{
	{1, 1, 0.39}, {2, 2, 0.16}, {3, 20, 0.14}, {21, 60, 0.09}, {61, 150, 0.06},
	{151, 300, 0.06}, {301, 500, 0.04}, {501, 1500, 0.03}, {1501, 3000, 0.03},
}

// Job is one job of the workload; every job is its own user, as in the
// paper ("user (job)").
type Job struct {
	User    string
	Arrival float64
	// Dur holds each task's duration, in s.
	Dur []float64
	// Constraints are the job's hard constraints; Types the machine types
	// (Model.Types indices) that satisfy them all.
	Constraints []placement.Constraint
	Types       []int
}

// PCG stream selectors: the workload is shared by every policy (common
// random numbers); placement has its own stream.
const (
	workStream  = 0xc400_0001
	placeStream = 0xc400_0002
)

// Workload draws the jobs of cfg from its seed: Poisson arrivals,
// FacebookSizes sizes, Pareto durations and the model's constraints.
func Workload(cfg Config, typeNodes []placement.Node) []Job {
	rng := rand.New(rand.NewPCG(cfg.Seed, workStream))
	m := cfg.model()
	xm := cfg.TaskMean * (cfg.ParetoAlpha - 1) / cfg.ParetoAlpha
	gap := cfg.Duration / float64(cfg.Jobs)
	jobs := make([]Job, cfg.Jobs)
	t := 0.0
	for i := range jobs {
		t += rng.ExpFloat64() * gap
		n := drawSize(rng)
		dur := make([]float64, n)
		for k := range dur {
			// 1-U is in (0, 1], so the power is finite.
			dur[k] = xm / math.Pow(1-rng.Float64(), 1/cfg.ParetoAlpha)
		}
		cs, types := m.drawConstraints(rng, typeNodes)
		jobs[i] = Job{User: "j" + strconv.Itoa(i), Arrival: t, Dur: dur, Constraints: cs, Types: types}
	}
	return jobs
}

func drawSize(rng *rand.Rand) int {
	u := rng.Float64()
	for _, b := range FacebookSizes {
		if u < b.Fraction {
			return b.Lo + rng.IntN(b.Hi-b.Lo+1)
		}
		u -= b.Fraction
	}
	b := FacebookSizes[len(FacebookSizes)-1]
	return b.Lo + rng.IntN(b.Hi-b.Lo+1)
}

// typeNodes returns one representative node per machine type.
func typeNodes(nodes []placement.Node, types []int, nTypes int) []placement.Node {
	out := make([]placement.Node, nTypes)
	seen := make([]bool, nTypes)
	for i, t := range types {
		if !seen[t] {
			seen[t], out[t] = true, nodes[i]
		}
	}
	return out
}
