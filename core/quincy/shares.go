package quincy

import "fmt"

// FairShares computes §3.3's instantaneous allocations A_j: each of the K
// jobs gets A*_j = min(⌊M/K⌋, N_j) of the M slots, and what remains is
// divided equally among the jobs that have more workers, until
// Σ A_j = min(M, Σ N_j). The paper leaves the rounding open; here the
// remainder is water-filled in equal whole parts and the last few slots go
// one each to the lowest-numbered jobs still short (notes §2, recon.).
func FairShares(slots int, demand []int) []int {
	a := make([]int, len(demand))
	if len(demand) == 0 || slots <= 0 {
		return a
	}
	base := slots / len(demand)
	total, left := 0, slots
	for j, n := range demand {
		a[j] = max(0, min(base, n))
		total += max(0, n)
		left -= a[j]
	}
	left = min(left, total-(slots-left))
	for left > 0 {
		short := 0
		for j, n := range demand {
			if a[j] < n {
				short++
			}
		}
		if short == 0 {
			break
		}
		q := left / short
		for j, n := range demand {
			if left == 0 {
				break
			}
			if a[j] >= n {
				continue
			}
			give := min(max(q, 1), n-a[j], left)
			a[j] += give
			left -= give
		}
	}
	return a
}

// nonPreemptiveShares adjusts fair shares for QF (§4.3): a job already
// running more than its share A_j has its allocation raised to its running
// count, and the other jobs' allocations are decreased in proportion to
// their shares so that the total stays Σ A_j. The paper does not say how
// to round; shares are scaled and floored, the slots lost to rounding go
// one each to the lowest-numbered jobs below their share, and a job pushed
// below its own running count joins the raised ones, until none is (notes
// §2, recon.).
func nonPreemptiveShares(shares, running []int) []int {
	total := 0
	for _, a := range shares {
		total += a
	}
	out := append([]int(nil), shares...)
	raised := make([]bool, len(shares))
	for j := range shares {
		raised[j] = running[j] > shares[j]
	}
	for {
		budget, base := total, 0
		for j := range shares {
			if raised[j] {
				out[j] = running[j]
				budget -= running[j]
			} else {
				base += shares[j]
			}
		}
		budget = max(budget, 0)
		left := budget
		for j := range shares {
			if raised[j] {
				continue
			}
			out[j] = 0
			if base > 0 {
				out[j] = int(int64(shares[j]) * int64(budget) / int64(base))
			}
			left -= out[j]
		}
		for j := range shares {
			if left == 0 {
				break
			}
			if !raised[j] && out[j] < shares[j] {
				out[j]++
				left--
			}
		}
		more := false
		for j := range shares {
			if !raised[j] && running[j] > out[j] {
				raised[j] = true
				more = true
			}
		}
		if !more {
			return out
		}
	}
}

// allocate returns E_j and F_j, the least and most workers job j may run
// under the policy (§4.3, Appendix). Fair shares divide the slots that
// roots leave free: with the literal M of §3.3 the shares and the roots
// together can exceed the cluster and the graph is infeasible (notes §2 and
// §3, "Literal M"); §3.4's "at least 2K computers" shows roots sit outside
// the shares, so we follow the notes here.
func allocate(s *State, pol Policy) (lo, hi []int, err error) {
	slots, roots := 0, 0
	for _, c := range s.Cluster.Computers {
		slots += c.slots()
	}
	for _, j := range s.Jobs {
		if j.Root != nil {
			roots++
		}
	}
	free := slots - roots
	if free < 0 {
		return nil, nil, fmt.Errorf("quincy: %d root tasks but only %d slots", roots, slots)
	}
	n := len(s.Jobs)
	demand, running := make([]int, n), make([]int, n)
	sum := 0
	for j, job := range s.Jobs {
		demand[j] = len(job.Tasks)
		sum += demand[j]
		for _, t := range job.Tasks {
			if t.State == Running {
				running[j]++
			}
		}
	}
	lo, hi = make([]int, n), make([]int, n)
	switch pol {
	case Q, QP:
		// E_j = 1 and F_j = N_j, but E_j = F_j = N_j when every worker
		// fits, so that no computer idles while a task waits (§4.3). A job
		// with no workers gets 0: the Appendix's 1 <= E_j cannot hold.
		for j, d := range demand {
			hi[j] = d
			lo[j] = min(1, d)
			if sum <= free {
				lo[j] = d
			}
		}
	case QF, QFP, QFPX:
		shares := s.Shares
		if shares == nil {
			shares = FairShares(free, demand)
		} else {
			shares = append([]int(nil), shares...)
			for j := range shares {
				shares[j] = max(0, min(shares[j], demand[j]))
			}
		}
		if pol == QF {
			shares = nonPreemptiveShares(shares, running)
		}
		copy(lo, shares)
		copy(hi, shares)
	default:
		return nil, nil, fmt.Errorf("quincy: unknown policy %v", pol)
	}
	// Without preemption running workers keep their slots, so a job's
	// least allocation above its running count must come from free slots.
	// Q's E_j = 1 can then be unreachable: on a cluster full of other
	// jobs' workers, a job with none running cannot get one, and the
	// paper's graph is infeasible. We lower such bounds toward the running
	// counts, latest-admitted job first, until they fit (a Q job may then
	// wait for a slot to free, as under any non-preemptive scheduler).
	if !pol.Preempts() {
		excess := roots - slots
		for j := range lo {
			excess += max(lo[j], running[j])
		}
		for j := n - 1; j >= 0 && excess > 0; j-- {
			if cut := min(excess, lo[j]-running[j]); cut > 0 {
				lo[j] -= cut
				excess -= cut
			}
		}
	}
	// Feasibility: every root and every job's least allocation must find
	// a slot; without preemption a job's running workers also stay. Any
	// slot is reachable through X, so counting is exact.
	need := roots
	for j := range lo {
		if pol.Preempts() {
			need += lo[j]
		} else {
			need += max(lo[j], running[j])
		}
	}
	if need > slots {
		return nil, nil, fmt.Errorf("quincy: policy %v needs %d slots (%d roots, the jobs' least allocations and, without preemption, their running workers) but the cluster has %d", pol, need, roots, slots)
	}
	return lo, hi, nil
}
