package sim

import (
	"slices"

	"github.com/sparrowfleet/sparrow/internal/stats"
)

// Stats summarises the response times of a set of measured jobs. A job's
// response time is from its arrival at the scheduler until its last task
// finishes, so it includes every network delay.
type Stats struct {
	Jobs     int     `json:"jobs"`
	MedianMS float64 `json:"median_ms"`
	MeanMS   float64 `json:"mean_ms"`
	P95MS    float64 `json:"p95_ms"`
	P99MS    float64 `json:"p99_ms"`
	// OptimalMS is the mean over the same jobs of their longest task
	// duration: the response time with zero wait and zero network delay.
	// For m exponential tasks of mean mu its expectation is mu*H_m (679.3
	// ms for m=500, mu=100 ms: the paper's "680 ms").
	OptimalMS float64 `json:"optimal_ms"`
	// ZeroWait is the fraction of jobs none of whose tasks waited: each
	// started exactly when the policy's unavoidable network delay allows
	// (RTT/2 for random, 1.5 RTT for pertask, batch and late, 0 for
	// omniscient).
	ZeroWait float64 `json:"zero_wait"`
}

// LateStats counts the late-binding policy's messages and checks its
// slots.Core accounting at the end of the run.
type LateStats struct {
	Reservations int64 `json:"reservations"`
	Fetches      int64 `json:"fetches"`
	EmptyFetches int64 `json:"empty_fetches"`
	Cancelled    int64 `json:"cancelled"`
	// At the end of the run, summed over every node's slots.Core.
	EndRunning  int `json:"end_running"`
	EndFetching int `json:"end_fetching"`
	EndQueued   int `json:"end_queued"`
}

// Result is one simulated point.
type Result struct {
	Policy     string  `json:"policy"`
	Load       float64 `json:"load"`
	Nodes      int     `json:"nodes"`
	Slots      int     `json:"slots"`
	Tasks      int     `json:"tasks"`
	ProbeRatio float64 `json:"probe_ratio"`
	RTTMS      float64 `json:"rtt_ms"`
	Cancel     bool    `json:"cancel"`
	Dist       string  `json:"dist"`
	Seed       uint64  `json:"seed"`
	Warmup     int     `json:"warmup"`
	Stats
	// Short is the short jobs alone, when long jobs are configured.
	Short *Stats `json:"short,omitempty"`
	// Drift is the mean response time of the later half of the measured
	// jobs (by arrival) over that of the earlier half, minus one: far from
	// zero means the system was not in steady state (warm-up too short).
	Drift float64 `json:"drift"`
	// TasksSimulated counts every task started, warm-up included.
	TasksSimulated int64      `json:"tasks_simulated"`
	Events         int64      `json:"events"`
	SimTimeMS      float64    `json:"sim_time_ms"`
	Late           *LateStats `json:"late,omitempty"`
}

func (s *sim) result() Result {
	c := s.cfg
	r := Result{
		Policy:         c.Policy.String(),
		Load:           c.Load,
		Nodes:          c.Nodes,
		Slots:          c.Slots,
		Tasks:          c.Tasks,
		ProbeRatio:     c.ProbeRatio,
		RTTMS:          c.RTT,
		Cancel:         c.Cancel && c.Policy == Late,
		Dist:           c.Dist.Kind.String(),
		Seed:           c.Seed,
		Warmup:         c.Warmup,
		Stats:          summarize(s.resp, s.opt, s.zero, nil),
		TasksSimulated: s.tasks,
		Events:         s.events,
		SimTimeMS:      s.now,
	}
	if s.long != nil {
		st := summarize(s.resp, s.opt, s.zero, func(i int) bool { return !s.long[i] })
		r.Short = &st
	}
	if h := len(s.resp) / 2; h > 0 {
		a, b := mean(s.resp[:h]), mean(s.resp[h:])
		if a > 0 {
			r.Drift = b/a - 1
		}
	}
	if lt := s.lt; lt != nil {
		ls := &LateStats{
			Reservations: lt.reservations,
			Fetches:      lt.fetches,
			EmptyFetches: lt.empty,
			Cancelled:    lt.cancelled,
		}
		for i := range lt.mon {
			c := &lt.mon[i].core
			ls.EndRunning += c.Running()
			ls.EndFetching += c.Fetching()
			ls.EndQueued += c.Queued()
		}
		r.Late = ls
	}
	return r
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// summarize computes Stats over the jobs i with keep(i) (all if keep is nil).
func summarize(resp, opt []float64, zero []bool, keep func(int) bool) Stats {
	var sorted []float64
	sumR, sumO, z := 0.0, 0.0, 0
	for i, r := range resp {
		if keep != nil && !keep(i) {
			continue
		}
		sorted = append(sorted, r)
		sumR += r
		sumO += opt[i]
		if zero[i] {
			z++
		}
	}
	n := len(sorted)
	if n == 0 {
		return Stats{}
	}
	slices.Sort(sorted)
	return Stats{
		Jobs:      n,
		MedianMS:  stats.Quantile(sorted, 0.5),
		MeanMS:    sumR / float64(n),
		P95MS:     stats.Quantile(sorted, 0.95),
		P99MS:     stats.Quantile(sorted, 0.99),
		OptimalMS: sumO / float64(n),
		ZeroWait:  float64(z) / float64(n),
	}
}
