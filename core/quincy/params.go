package quincy

import (
	"fmt"
	"math"
	"math/bits"
	"time"
)

// Policy is one of Quincy's scheduling policies (§4.3, §6).
type Policy int

const (
	// Q is unfair sharing without preemption: E_j = 1, F_j = N_j (E_j =
	// F_j = N_j when every worker fits), and running workers keep only the
	// arc to their computer. Where no free slot is left for E_j = 1,
	// Build lowers it (see allocate).
	Q Policy = iota
	// QP is unfair sharing with preemption: Q's allocations, every arc kept.
	QP
	// QF is fair sharing without preemption: E_j = F_j = the fair share,
	// raised to a job's running count and the others decreased, with
	// running workers keeping only the arc to their computer.
	QF
	// QFP is fair sharing with preemption: E_j = F_j = A_j.
	QFP
	// QFPX is QFP with the core-switch cost ξ raised to 20 (§6).
	QFPX
)

// Policies lists every policy, in the paper's order.
var Policies = []Policy{Q, QP, QF, QFP, QFPX}

// String returns the paper's name of the policy.
func (p Policy) String() string {
	switch p {
	case Q:
		return "Q"
	case QP:
		return "QP"
	case QF:
		return "QF"
	case QFP:
		return "QFP"
	case QFPX:
		return "QFPX"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// ParsePolicy reads a policy name as String prints it.
func ParsePolicy(s string) (Policy, error) {
	for _, p := range Policies {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("quincy: unknown policy %q (want Q, QP, QF, QFP or QFPX)", s)
}

// Fair reports whether the policy enforces fair shares (the F).
func (p Policy) Fair() bool { return p == QF || p == QFP || p == QFPX }

// Preempts reports whether the policy may kill running workers (the P).
func (p Policy) Preempts() bool { return p == QP || p == QFP || p == QFPX }

// CostUnit is the number of integer cost units in one unit of the paper's
// costs (one second of running, or one GB through a rack switch at ψ = 1).
// The paper's weights are fractional (ω = 0.5) and so are data sizes in
// GB, while the flow solver wants int64 costs: scaling by 1000 keeps a
// millisecond of running or a megabyte through a rack switch visible.
const CostUnit = 1000

// Params are the cost weights and thresholds of the Appendix, as int64
// cost units (CostUnit per paper unit) so that costs are exact integers.
type Params struct {
	// WaitCost is ω, cost units per second a worker has waited (§6: 0.5).
	WaitCost int64
	// RunCost weights θ, cost units per second a worker has run. The
	// paper's θ is unweighted seconds, so 1 paper unit per second.
	RunCost int64
	// RackCost is ψ, cost units per GB read across a rack switch (§6: 1).
	RackCost int64
	// CoreCost is ξ, cost units per GB read across the core switch (§6: 2).
	CoreCost int64
	// CoreCostX is ξ under policy QFPX (§6: 20).
	CoreCostX int64
	// TimeGrain is the resolution of ν and θ: both are rounded down to a
	// whole number of grains before they are priced. The Appendix counts
	// "the total number of seconds", so the default is one second; zero
	// prices them to the nanosecond. A coarser grain also gives the
	// solver fewer distinct costs (successive shortest paths runs about
	// one phase per distinct wait cost).
	TimeGrain time.Duration
	// GB is the number of bytes in the GB of ψ and ξ (the paper does not
	// say; 10^9 by default).
	GB int64
	// PreferComputer is δ^c in thousandths: a computer holding more than
	// PreferComputer/1000 of a task's input is preferred (§2.3: 0.1).
	PreferComputer int64
	// PreferRack is δ^r in thousandths, the same for racks (§2.3: 0.1).
	PreferRack int64
	// MaxCost is Ω, the cap on the data and wait-time costs of workers
	// that are not running (Appendix; the paper gives no value). Running
	// arcs cost at least -2Ω, which keeps costs bounded however long a
	// task runs and is already past the Appendix's -Ω starvation bound.
	MaxCost int64
	// ExactRunningCost prices a worker's arc to the computer it runs on
	// with the exact bytes it reads there, instead of the Appendix's
	// approximation for a computer off its preferred list (its rack's
	// pair, or (X^X/L, X^X) for a rack off the list). The notes' pitfall 8
	// suggests it; the paper's approximation is the default.
	ExactRunningCost bool
	// NativeLowerBounds states the fairness bounds as the lower and upper
	// bound of U_j → S, [N_j - F_j, N_j - E_j], with U_j of supply 0,
	// instead of the Appendix's transformed form (U_j supplies F_j - N_j,
	// U_j → S has capacity F_j - E_j). The two have the same optima; the
	// native form exercises the solver's lower bounds.
	NativeLowerBounds bool
}

// DefaultParams returns the paper's settings (§2.3, §6): ω = 0.5, ψ = 1,
// ξ = 2 (20 for QFPX), δ^c = δ^r = 0.1, with Ω = 10^5 paper units (about
// 55 hours of waiting at ω = 0.5).
func DefaultParams() Params {
	return Params{
		WaitCost:       CostUnit / 2,
		RunCost:        CostUnit,
		RackCost:       CostUnit,
		CoreCost:       2 * CostUnit,
		CoreCostX:      20 * CostUnit,
		TimeGrain:      time.Second,
		GB:             1_000_000_000,
		PreferComputer: 100,
		PreferRack:     100,
		MaxCost:        100_000 * CostUnit,
	}
}

// Validate checks that the weights are usable.
func (p *Params) Validate() error {
	switch {
	case p.WaitCost < 0 || p.RunCost < 0 || p.RackCost < 0 || p.CoreCost < 0 || p.CoreCostX < 0:
		return fmt.Errorf("quincy: negative cost weight in %+v", *p)
	case p.TimeGrain < 0:
		return fmt.Errorf("quincy: TimeGrain = %v, want >= 0", p.TimeGrain)
	case p.GB <= 0:
		return fmt.Errorf("quincy: GB = %d bytes, want > 0", p.GB)
	case p.PreferComputer < 0 || p.PreferComputer > 1000 || p.PreferRack < 0 || p.PreferRack > 1000:
		return fmt.Errorf("quincy: preference thresholds %d and %d thousandths, want 0..1000", p.PreferComputer, p.PreferRack)
	case p.MaxCost <= 0 || p.MaxCost > math.MaxInt64/8:
		return fmt.Errorf("quincy: MaxCost (Ω) = %d, want 1..%d", p.MaxCost, int64(math.MaxInt64/8))
	}
	return nil
}

// coreCost returns ξ for the policy.
func (p *Params) coreCost(pol Policy) int64 {
	if pol == QFPX {
		return p.CoreCostX
	}
	return p.CoreCost
}

// mulDiv returns floor(a*b/c) for a, b >= 0 and c > 0, saturating at
// math.MaxInt64 instead of overflowing.
func mulDiv(a, b, c int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// satAdd returns a+b for non-negative a and b, saturating.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// timeCost prices a duration, rounded down to whole grains, at perSecond
// cost units per second, rounding down to whole units.
func timeCost(d, grain time.Duration, perSecond int64) int64 {
	if grain > 0 {
		d = d / grain * grain
	}
	return mulDiv(int64(d), perSecond, int64(time.Second))
}
