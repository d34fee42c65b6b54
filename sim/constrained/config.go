package constrained

import (
	"fmt"
	"math"
	"strings"
)

// Policy is a scheduling policy under test.
type Policy int

// The policies.
const (
	// Fair is Sparrow with weighted fair queues at every node
	// (queue.Fair): fair among the users queued on each node only.
	Fair Policy = iota
	// Choosy is Sparrow with queue.Choosy at every node, given each user's
	// cluster-wide running count by a coordinator (fairshare.Compute over
	// the nodes' usage) every Config.Period, and counting its own launches
	// and finishes in between, as nodemonitor.ApplyGuidance does.
	Choosy
	// ChoosyExact is Sparrow with queue.Choosy given the exact
	// cluster-wide running counts at every decision: the paper's Choosy
	// rule, still with sampled placement and late binding.
	ChoosyExact
	// Offline is the paper's Restricted Offline scheduler: central, no
	// network delay, and at every decision the leximin (integer CMMF)
	// assignment of the free slots with running tasks left in place.
	Offline
	numPolicies
)

var policyNames = [...]string{"fair", "choosy", "choosy-exact", "offline"}

func (p Policy) String() string {
	if p < 0 || p >= numPolicies {
		return fmt.Sprintf("Policy(%d)", int(p))
	}
	return policyNames[p]
}

// Policies returns every policy, the reference (Offline) last.
func Policies() []Policy { return []Policy{Fair, Choosy, ChoosyExact, Offline} }

// ParsePolicies parses a comma list of policy names, or "all". Offline
// is always added: the other policies are measured against it.
func ParsePolicies(s string) ([]Policy, error) {
	if strings.TrimSpace(s) == "all" {
		return Policies(), nil
	}
	seen := map[Policy]bool{}
	var out []Policy
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		found := false
		for i, n := range policyNames {
			if f == n {
				p := Policy(i)
				if seen[p] {
					return nil, fmt.Errorf("policy %q listed twice", f)
				}
				seen[p], found = true, true
				if p != Offline {
					out = append(out, p)
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown policy %q (valid: %s, or all)", f, strings.Join(policyNames[:], ", "))
		}
	}
	return append(out, Offline), nil
}

// Config describes one simulation. Times are in seconds.
type Config struct {
	// Nodes and Slots: the cluster is Nodes nodes of Slots slots each.
	Nodes, Slots int
	// Jobs arrive as a Poisson process, Jobs of them over Duration.
	Jobs     int
	Duration float64
	// TaskMean is the mean task duration; durations are Pareto with
	// shape ParetoAlpha, scaled to that mean.
	TaskMean, ParetoAlpha float64
	// RTT is the network round trip; each message takes RTT/2.
	RTT float64
	// ProbeRatio is Sparrow's d.
	ProbeRatio float64
	// Period is how often the coordinator refreshes Choosy's counts.
	Period float64
	// Sample is the interval between allocation samples.
	Sample float64
	// Seed seeds the workload stream (shared by every policy) and the
	// placement stream.
	Seed uint64
	// Model is the cluster and constraint model; zero means DefaultModel.
	Model Model
	// Progress, if set, is called every ~5% of Duration of simulated time
	// with the policy and the simulated time. The engine never reads a
	// clock; the caller may.
	Progress func(p Policy, t float64)
}

// DefaultConfig is the paper's §7.1 setup as far as it is stated: 1,000
// nodes, 300 jobs in an hour; one slot per node (the paper counts
// machines); Pareto(1.9) task durations (§6.2: Facebook and Bing tasks fit
// α > 1.9).
func DefaultConfig() Config {
	return Config{
		Nodes: 1000, Slots: 1, Jobs: 300, Duration: 3600,
		TaskMean: 20, ParetoAlpha: 1.9, RTT: 0.001, ProbeRatio: 2,
		Period: 1, Sample: 1, Seed: 1,
	}
}

// Validate returns an error naming the first unusable field.
func (c *Config) Validate() error {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	switch {
	case c.Nodes < 1 || c.Nodes > 1<<20:
		return fmt.Errorf("nodes must be in [1, %d], got %d", 1<<20, c.Nodes)
	case c.Slots < 1 || c.Slots > 1<<10:
		return fmt.Errorf("slots per node must be in [1, 1024], got %d", c.Slots)
	case c.Jobs < 1 || c.Jobs > 1<<20:
		return fmt.Errorf("jobs must be in [1, %d], got %d", 1<<20, c.Jobs)
	case bad(c.Duration) || c.Duration <= 0:
		return fmt.Errorf("duration must be a finite number > 0 s, got %v", c.Duration)
	case bad(c.TaskMean) || c.TaskMean <= 0:
		return fmt.Errorf("mean task duration must be a finite number > 0 s, got %v", c.TaskMean)
	case bad(c.ParetoAlpha) || c.ParetoAlpha <= 1:
		return fmt.Errorf("pareto shape must be a finite number > 1, got %v", c.ParetoAlpha)
	case bad(c.RTT) || c.RTT < 0:
		return fmt.Errorf("rtt must be a finite number >= 0 s, got %v", c.RTT)
	case bad(c.ProbeRatio) || c.ProbeRatio < 1:
		return fmt.Errorf("probe ratio must be a finite number >= 1, got %v", c.ProbeRatio)
	case bad(c.Period) || c.Period <= 0:
		return fmt.Errorf("coordinator period must be a finite number > 0 s, got %v", c.Period)
	case bad(c.Sample) || c.Sample <= 0:
		return fmt.Errorf("sample interval must be a finite number > 0 s, got %v", c.Sample)
	case c.Duration/c.Sample > 1e7:
		return fmt.Errorf("duration/sample = %v samples is too many", c.Duration/c.Sample)
	}
	m := c.model()
	if len(m.Types) == 0 || len(m.Constraints) == 0 {
		return fmt.Errorf("model has no machine types or no constraints")
	}
	if c.Nodes < len(m.Types) {
		return fmt.Errorf("nodes (%d) must be at least the number of machine types (%d)", c.Nodes, len(m.Types))
	}
	for _, t := range m.Types {
		for _, a := range t.Attrs {
			if a < 0 || a >= len(m.Constraints) {
				return fmt.Errorf("machine type %q: attribute %d out of range", t.Name, a)
			}
		}
	}
	return nil
}

func (c *Config) model() Model {
	if len(c.Model.Types) == 0 {
		return DefaultModel()
	}
	return c.Model
}
