package racksim

import (
	"fmt"
	"strings"
	"time"

	"github.com/sparrowfleet/sparrow/core/quincy"
)

// Policy names a scheduling policy: a queue-based one of §3 or a Quincy
// flow policy of §4.3.
type Policy string

// The policies. G, GF, GFP and GFH are the queue-based baselines (greedy;
// with fair blocking; with fair blocking and preemption; GF with
// hysteresis). Q, QP, QF, QFP and QFPX are Quincy's.
const (
	G    Policy = "G"
	GF   Policy = "GF"
	GFP  Policy = "GFP"
	GFH  Policy = "GFH"
	Q    Policy = "Q"
	QP   Policy = "QP"
	QF   Policy = "QF"
	QFP  Policy = "QFP"
	QFPX Policy = "QFPX"
)

// AllPolicies lists every policy, queue-based first.
var AllPolicies = []Policy{G, GF, GFP, GFH, Q, QP, QF, QFP, QFPX}

// Flow reports whether the policy is one of Quincy's.
func (p Policy) Flow() bool {
	switch p {
	case Q, QP, QF, QFP, QFPX:
		return true
	}
	return false
}

// ParsePolicies reads a comma list of policy names.
func ParsePolicies(s string) ([]Policy, error) {
	var out []Policy
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		ok := false
		for _, p := range AllPolicies {
			if string(p) == name {
				out = append(out, p)
				ok = true
			}
		}
		if !ok {
			return nil, fmt.Errorf("racksim: unknown policy %q (want one of %v)", name, AllPolicies)
		}
	}
	return out, nil
}

// Byte rates of §5's hardware.
const (
	// Gbit is one gigabit per second in bytes per second.
	Gbit = 125e6
	// GB is the gigabyte of the workload's sizes and of DT (10^9 bytes).
	GB = 1e9
	// MB is 10^6 bytes.
	MB = 1e6
)

// Config is one simulation run: cluster, network, workload, policy and
// scheduler settings. A run is a function of its Config (Clock only times
// the solver).
type Config struct {
	// RackSizes are the computers in each rack (§5: 243 in 8 racks of
	// 29–31).
	RackSizes []int
	// NIC is each computer's link to its rack switch, each way, in bytes
	// per second (1 Gbit/s).
	NIC float64
	// Uplink is each rack's link to the core switch, each way (6 Gbit/s;
	// 1 Gbit/s for §6.3's constrained network).
	Uplink float64
	// Disk is the rate at which a task reads its own computer's disks (4
	// striped drives; the paper gives no figure).
	Disk float64
	// SmallRead is the size below which reads are not simulated as flows:
	// a task's local read, or all its remote reads together, smaller than
	// this take their uncontended time (bytes over Disk or NIC), added to
	// the task's CPU time. It keeps thousands of kilobyte-sized reads of
	// Prime tasks out of the bandwidth model.
	SmallRead float64
	// CPUJitter spreads workers' CPU times: each worker's is its phase's
	// times a factor drawn once per worker, uniformly in [1−CPUJitter,
	// 1+CPUJitter]. Real workers of one phase do not finish together
	// (§6.1's PageRank discussion depends on it); 0 makes them identical.
	CPUJitter float64
	// GatherScale scales the bytes each worker writes for an all-to-all
	// gather of the next phase (Sort's, DatabaseJoin's and PageRank's
	// repartitioned data, WordCount's counts). 1 is §5.1 read literally
	// (Sort "redistributes all of its input data"); the paper's own
	// Tables 2 and 4 imply far less data crossed the core switch than
	// that reading gives (docs/experiments/quincy-sim.md), which smaller values
	// explore.
	GatherScale float64
	// K is the number of instances admitted at once (§2.4).
	K int
	// Policy is the scheduler.
	Policy Policy
	// Seed draws data placement, root placement and tie-breaking.
	Seed uint64
	// NoPrimeLarge drops PrimeLarge from the workload (§6.3).
	NoPrimeLarge bool
	// Instances, if not nil, replaces Table 3's instance list (tests use a
	// small one); the order is the admission order.
	Instances []Instance
	// CPU, if not nil, overrides the calibrated CPU seconds of each phase
	// of the named instances (FitCPU's output).
	CPU map[string][]float64
	// JobStartup is the time from a job's admission (its root placed) to
	// its first workers' submission; JobFinish the time from its last
	// worker's end to the job's end (Dryad's job manager start-up and
	// wrap-up; fitted to Table 3's shortest jobs, see Workload).
	JobStartup, JobFinish float64
	// SolveGap is the least simulated time between two solves of a flow
	// policy: solves requested by events (tasks submitted or finished,
	// jobs admitted) are coalesced into one at most every SolveGap.
	SolveGap float64
	// SolveTimer re-solves a flow policy this long after the last solve
	// while workers wait, because waiting and running costs drift (§4.2).
	SolveTimer float64
	// Params, if not nil, replaces quincy.DefaultParams() for the flow
	// policies (cost weights, time grain, Ω).
	Params *quincy.Params
	// HysteresisMargin (M_H) and HysteresisDelay (Δ_H) are GFH's (§3.5;
	// the paper gives no values).
	HysteresisMargin int
	HysteresisDelay  float64
	// Clock, if set, times each solve (wall time, reported only).
	Clock func() time.Time
	// Progress, if set, is called now and then with the simulated time.
	Progress func(t float64)
}

// DefaultConfig returns §5's cluster with the unconstrained network, K = 10
// and policy QFP.
func DefaultConfig() Config {
	return Config{
		RackSizes:        []int{30, 30, 30, 31, 31, 31, 30, 30},
		NIC:              1 * Gbit,
		Uplink:           6 * Gbit,
		Disk:             200 * MB,
		SmallRead:        8 * MB,
		CPUJitter:        0.25,
		GatherScale:      1,
		K:                10,
		Policy:           QFP,
		Seed:             1,
		JobStartup:       5,
		JobFinish:        2,
		SolveGap:         1,
		SolveTimer:       5,
		HysteresisMargin: 2,
		HysteresisDelay:  10,
	}
}

// Validate checks the settings.
func (c *Config) Validate() error {
	if len(c.RackSizes) == 0 {
		return fmt.Errorf("racksim: no racks")
	}
	roots := 0
	for i, n := range c.RackSizes {
		if n <= 0 {
			return fmt.Errorf("racksim: rack %d has %d computers", i, n)
		}
		roots += n
	}
	switch {
	case c.NIC <= 0 || c.Uplink <= 0 || c.Disk <= 0:
		return fmt.Errorf("racksim: link rates NIC %g, uplink %g, disk %g must be positive", c.NIC, c.Uplink, c.Disk)
	case c.K < 1:
		return fmt.Errorf("racksim: K = %d, want at least 1", c.K)
	case 2*c.K > roots:
		return fmt.Errorf("racksim: K = %d needs at least %d computers (§3.4), cluster has %d", c.K, 2*c.K, roots)
	case c.GatherScale <= 0:
		return fmt.Errorf("racksim: gather scale %g, want > 0", c.GatherScale)
	case c.CPUJitter < 0 || c.CPUJitter >= 1:
		return fmt.Errorf("racksim: CPU jitter %g, want 0 <= jitter < 1", c.CPUJitter)
	case c.SolveGap < 0 || c.SolveTimer <= 0:
		return fmt.Errorf("racksim: solve gap %g and timer %g, want >= 0 and > 0", c.SolveGap, c.SolveTimer)
	}
	for _, p := range AllPolicies {
		if p == c.Policy {
			return nil
		}
	}
	return fmt.Errorf("racksim: unknown policy %q", c.Policy)
}
