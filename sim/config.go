package sim

import (
	"fmt"
	"math"
	"strings"

	"github.com/sparrowfleet/sparrow/core/placement"
)

// Policy is a task placement policy.
type Policy int

// The placement policies, in the order of the paper's Figure 3 plus the
// omniscient baseline.
const (
	// Random sends each task to a uniformly random node's queue.
	Random Policy = iota
	// PerTask probes ceil(d) distinct random nodes per task and places the
	// task on the one with the shortest queue (queued + running).
	PerTask
	// Batch probes ceil(d*m) distinct random nodes per job and places the m
	// tasks one per node on the m least loaded of them.
	Batch
	// Late is batch sampling with late binding (virtual reservations): the
	// product's placement.Sampler, placement.Request and slots.Core.
	Late
	// Omniscient is a centralized scheduler with a global FIFO of tasks that
	// starts a task the instant any slot is free, with no network delay.
	Omniscient
	numPolicies
)

var policyNames = [...]string{"random", "pertask", "batch", "late", "omniscient"}

func (p Policy) String() string {
	if p < 0 || p >= numPolicies {
		return fmt.Sprintf("Policy(%d)", int(p))
	}
	return policyNames[p]
}

// Policies returns every policy, in presentation order.
func Policies() []Policy {
	out := make([]Policy, numPolicies)
	for i := range out {
		out[i] = Policy(i)
	}
	return out
}

// ParsePolicy parses a policy name.
func ParsePolicy(s string) (Policy, error) {
	for i, n := range policyNames {
		if s == n {
			return Policy(i), nil
		}
	}
	return 0, fmt.Errorf("unknown policy %q (valid: %s)", s, strings.Join(policyNames[:], ", "))
}

// ParsePolicies parses a comma-separated list of policy names, or "all".
// Duplicates are an error.
func ParsePolicies(s string) ([]Policy, error) {
	if strings.TrimSpace(s) == "all" {
		return Policies(), nil
	}
	var out []Policy
	seen := map[Policy]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("empty policy name in %q", s)
		}
		p, err := ParsePolicy(f)
		if err != nil {
			return nil, err
		}
		if seen[p] {
			return nil, fmt.Errorf("policy %q listed twice", f)
		}
		seen[p] = true
		out = append(out, p)
	}
	return out, nil
}

// LongJobs adds a second class of jobs to the workload, as in the paper's
// §7.8 heterogeneity experiment: a fraction of jobs whose tasks are drawn
// from the same distribution kind scaled to a longer mean. Results then also
// report the short jobs alone.
type LongJobs struct {
	// Fraction of jobs that are long, in [0, 1). Zero disables the class.
	Fraction float64
	// Mean task duration of long jobs, in ms.
	Mean float64
}

// Config describes one simulation point.
type Config struct {
	Policy Policy
	// Nodes is the number of node monitors; Slots the slots on each.
	Nodes, Slots int
	// Tasks is m, the number of tasks in each job.
	Tasks int
	// Load is the offered load rho in (0, 1): the arrival rate is
	// rho*Nodes*Slots/(Tasks*mean task duration).
	Load float64
	// Jobs is how many jobs are measured, after Warmup jobs that are
	// simulated but not measured. Arrivals continue (unmeasured) until every
	// task of every measured job has started, so measured jobs always see
	// the full load; the run then stops, since started tasks run to
	// completion undisturbed and fix each job's response time.
	Jobs, Warmup int
	// Dist is the task duration distribution.
	Dist Dist
	// Long optionally adds long jobs (heterogeneity).
	Long LongJobs
	// RTT is the network round trip time in ms; each message takes RTT/2.
	RTT float64
	// ProbeRatio is d.
	ProbeRatio float64
	// Cancel makes the late-binding scheduler cancel a request's queued
	// reservations once all its tasks are launched.
	Cancel bool
	// Seed seeds the two PCG streams: one for the workload (arrivals,
	// durations), shared by every policy so that they see identical jobs,
	// and one for placement decisions.
	Seed uint64
}

// MaxNodes bounds Nodes so that node indices fit the engine's int32 fields.
const MaxNodes = 1 << 24

// Validate returns an error naming the first unusable field.
func (c *Config) Validate() error {
	switch {
	case c.Policy < 0 || c.Policy >= numPolicies:
		return fmt.Errorf("unknown policy %d", int(c.Policy))
	case c.Nodes < 1 || c.Nodes > MaxNodes:
		return fmt.Errorf("nodes must be in [1, %d], got %d", MaxNodes, c.Nodes)
	case c.Slots < 1 || c.Slots > 1<<16:
		return fmt.Errorf("slots per node must be in [1, 65536], got %d", c.Slots)
	case c.Tasks < 1 || c.Tasks > 1<<20:
		return fmt.Errorf("tasks per job must be in [1, 1048576], got %d", c.Tasks)
	case math.IsNaN(c.Load) || c.Load <= 0 || c.Load >= 1:
		return fmt.Errorf("load must be in (0, 1), got %v (at 1 or more the queues grow without bound)", c.Load)
	case c.Jobs < 1:
		return fmt.Errorf("jobs to measure must be at least 1, got %d", c.Jobs)
	case c.Warmup < 0:
		return fmt.Errorf("warm-up jobs must not be negative, got %d", c.Warmup)
	case int64(c.Jobs)+int64(c.Warmup) > math.MaxInt32/2:
		return fmt.Errorf("jobs + warm-up = %d is too many", int64(c.Jobs)+int64(c.Warmup))
	case math.IsNaN(c.RTT) || math.IsInf(c.RTT, 0) || c.RTT < 0:
		return fmt.Errorf("rtt must be a finite number >= 0 ms, got %v", c.RTT)
	}
	if err := placement.CheckProbeRatio(c.ProbeRatio); err != nil {
		return err
	}
	if c.Policy == Batch && c.Tasks > c.Nodes {
		return fmt.Errorf("batch sampling places one task per probed node, so tasks per job (%d) must not exceed nodes (%d)", c.Tasks, c.Nodes)
	}
	if err := c.Dist.Validate(); err != nil {
		return err
	}
	l := c.Long
	switch {
	case math.IsNaN(l.Fraction) || l.Fraction < 0 || l.Fraction >= 1:
		return fmt.Errorf("long-job fraction must be in [0, 1), got %v", l.Fraction)
	case l.Fraction > 0 && c.Dist.Kind == Trace:
		return fmt.Errorf("long jobs cannot be combined with a trace distribution (the trace fixes the durations)")
	case l.Fraction > 0 && (math.IsNaN(l.Mean) || math.IsInf(l.Mean, 0) || l.Mean <= 0):
		return fmt.Errorf("long-job mean must be a finite number > 0 ms, got %v", l.Mean)
	}
	return nil
}

// meanTask is the mean task duration over both job classes, in ms.
func (c *Config) meanTask() float64 {
	m := c.Dist.MeanMS()
	if c.Long.Fraction > 0 {
		m = (1-c.Long.Fraction)*m + c.Long.Fraction*c.Long.Mean
	}
	return m
}

// ArrivalRate returns the job arrival rate, in jobs per ms.
func (c *Config) ArrivalRate() float64 {
	return c.Load * float64(c.Nodes) * float64(c.Slots) / (float64(c.Tasks) * c.meanTask())
}
