package racksim

import "time"

// JobResult is one instance's outcome in a run.
type JobResult struct {
	Name string `json:"name"`
	// NW marks Table 3's network-bound instances.
	NW bool `json:"nw"`
	// Admitted and Finished are when the instance was started (its root
	// placed) and ended, in simulated seconds; Time is the difference, the
	// instance's running time.
	Admitted float64 `json:"admitted_s"`
	Finished float64 `json:"finished_s"`
	Time     float64 `json:"time_s"`
	// Ideal is Table 3's time, which calibrated the instance's CPU times.
	Ideal float64 `json:"table3_s"`
	Tasks int     `json:"tasks"`
}

// Result is one run's measurements.
type Result struct {
	Policy Policy  `json:"policy"`
	K      int     `json:"k"`
	Seed   uint64  `json:"seed"`
	Uplink float64 `json:"uplink_bytes_per_s"`
	// Makespan is when the last instance ended (§5.2).
	Makespan float64     `json:"makespan_s"`
	Jobs     []JobResult `json:"jobs"`
	// Bytes are the bytes read locally, across a rack switch and across
	// the core switch, including reads of attempts later killed (§5.2's
	// DT).
	Bytes [3]float64 `json:"dt_bytes_local_rack_core"`
	// GatherBytes is the part of Bytes read by all-to-all gathers (Sort's,
	// DatabaseJoin's and PageRank's second phases, WordCount's merge):
	// each reads 1/n of every output of the phase before, so no placement
	// makes more than a sliver of it local.
	GatherBytes [3]float64 `json:"dt_gather_bytes_local_rack_core"`
	// Tasks is the number of workers; Completed how many finished (every
	// one, exactly once); Starts the attempts started; Kills the attempts
	// killed (preemptions, moves and roots taking a computer).
	Tasks     int `json:"tasks"`
	Completed int `json:"completed"`
	Starts    int `json:"starts"`
	Kills     int `json:"kills"`
	// Moves and Preempts split a flow policy's kills: workers the solver
	// restarted elsewhere at once, and workers it sent back to waiting.
	Moves    int `json:"moves"`
	Preempts int `json:"preempts"`
	// Solves counts a flow policy's solves; SolveMean and SolveMax are the
	// wall time of flow.Solve, ScheduleMean that of Build + Solve +
	// ReadSchedule + Apply, when Config.Clock was set. Nodes and Arcs are
	// the largest graph's.
	Solves       int           `json:"solves"`
	SolveMean    time.Duration `json:"solve_mean_ns"`
	SolveMax     time.Duration `json:"solve_max_ns"`
	ScheduleMean time.Duration `json:"schedule_mean_ns"`
	MaxNodes     int           `json:"max_nodes"`
	MaxArcs      int           `json:"max_arcs"`
	solveTotal   time.Duration
	schedTotal   time.Duration
}

// DT returns the total bytes read.
func (r *Result) DT() float64 { return r.Bytes[local] + r.Bytes[rack] + r.Bytes[core] }
