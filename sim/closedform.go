package sim

import (
	"math"

	"github.com/sparrowfleet/sparrow/core/placement"
)

// The closed forms of the paper's Table 2: the probability that a job of m
// tasks experiences zero wait, i.e. that every task is placed on an idle
// machine, at load rho with probe ratio d. They assume zero network delay,
// infinitely many servers, and that a probe finds a machine idle
// independently with probability 1-rho.
//
// For c slots per machine, §5 replaces rho by rho^c: a machine is taken to
// have an idle slot unless all c are busy, each independently with
// probability rho, and the scheduler places at most one task per machine.
//
// Probe counts are integers, as in the simulator: per-task sampling sends
// ceil(d) probes per task and batch sampling ceil(d*m) per job
// (placement.Reservations), which equal d and d*m for the paper's d = 2.

// busy returns the probability that a machine has no idle slot.
func busy(rho float64, c int) float64 { return math.Pow(rho, float64(c)) }

// ZeroWaitRandom is (1 - rho^c)^m.
func ZeroWaitRandom(rho float64, m, c int) float64 {
	return math.Pow(1-busy(rho, c), float64(m))
}

// ZeroWaitPerTask is (1 - rho^(c*ceil(d)))^m.
func ZeroWaitPerTask(rho, d float64, m, c int) float64 {
	k := placement.Reservations(d, 1)
	return math.Pow(1-math.Pow(busy(rho, c), float64(k)), float64(m))
}

// ZeroWaitBatch is sum_{i=m}^{n} C(n,i) (1-rho^c)^i (rho^c)^(n-i) with
// n = ceil(d*m): the probability that at least m of the n probed machines
// are idle.
func ZeroWaitBatch(rho, d float64, m, c int) float64 {
	n := placement.Reservations(d, m)
	b := busy(rho, c)
	p := 1 - b
	switch {
	case m > n:
		return 0
	case b == 0:
		return 1
	case p == 0:
		return 0
	}
	lp, lb := math.Log(p), math.Log(b)
	lgN, _ := math.Lgamma(float64(n) + 1)
	sum := 0.0
	for i := m; i <= n; i++ {
		lgI, _ := math.Lgamma(float64(i) + 1)
		lgNI, _ := math.Lgamma(float64(n-i) + 1)
		sum += math.Exp(lgN - lgI - lgNI + float64(i)*lp + float64(n-i)*lb)
	}
	return min(sum, 1)
}

// ZeroWaitClosedForm returns the Table 2 probability for a policy, and false
// for policies the table does not cover (late binding, omniscient).
func ZeroWaitClosedForm(p Policy, rho, d float64, m, c int) (float64, bool) {
	switch p {
	case Random:
		return ZeroWaitRandom(rho, m, c), true
	case PerTask:
		return ZeroWaitPerTask(rho, d, m, c), true
	case Batch:
		return ZeroWaitBatch(rho, d, m, c), true
	}
	return 0, false
}
