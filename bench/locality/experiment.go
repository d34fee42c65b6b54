package locality

import (
	"context"
	"fmt"
	"time"

	"github.com/sparrowfleet/sparrow/bench/policy/live"
)

// Run generates the trace once and runs it in each mode, each on a fresh
// fleet, summarising every run. A mode this build cannot run is reported
// with a note rather than failing the rest.
func Run(ctx context.Context, cfg Config, modes []Mode) (Report, error) {
	cfg.Defaults()
	if err := cfg.Read.Validate(); err != nil {
		return Report{}, err
	}
	trace, err := Generate(cfg.Workload)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Settings: NewSettings(cfg, trace)}
	for _, mode := range modes {
		before, _ := live.ReadLoadAvg()
		m, err := Measure(ctx, cfg, mode, trace)
		after, _ := live.ReadLoadAvg()
		if err != nil {
			return rep, fmt.Errorf("mode %s: %w", mode.Name, err)
		}
		mr := NewModeReport(mode, m)
		mr.LoadBefore, mr.LoadAfter = before[0], after[0]
		st := mr.Stats
		cfg.say("%s: %d/%d jobs, response p50 %.0f ms p99 %.0f ms; node-local %.3f rack-local %.3f elsewhere %.3f; load %.1f -> %.1f",
			mode.Name, st.JobsCompleted, st.JobsSubmitted, st.ResponseMs.P50, st.ResponseMs.P99,
			st.NodeLocal, st.RackLocal, st.Elsewhere, before[0], after[0])
		rep.Modes = append(rep.Modes, mr)
	}
	return rep, nil
}

// ReferenceMode names the centralized reference's row in reports.
var ReferenceMode = Mode{Name: "quincy-ref", Description: "centralized Quincy (policy Q, no preemption) on the same trace, simulated offline with the same read model"}

// RunReference computes the centralized Quincy reference on cfg's trace
// (reference.go) and reports it as a mode.
func RunReference(cfg Config) (ModeReport, error) {
	cfg.Defaults()
	trace, err := Generate(cfg.Workload)
	if err != nil {
		return ModeReport{}, err
	}
	p := ReferenceParams()
	p.RackCost, p.CoreCost = costUnits(cfg.RackCost), costUnits(cfg.CoreCost)
	start := time.Now()
	res, err := Reference(cfg.Workload, cfg.Read, trace, p)
	if err != nil {
		return ModeReport{}, err
	}
	took := time.Since(start)
	mr := ModeReport{Mode: ReferenceMode, Stats: Analyze(res.Jobs, res.End), WallS: res.End.Seconds()}
	mr.Note = fmt.Sprintf("simulated, not live: %d min-cost flow solves (largest %d arcs) in %.1f s of CPU; ω = 0.5/s, ψ = %g/GB, ξ = %g/GB; no RPC, gossip or sampling delays",
		res.Solves, res.MaxArcs, took.Seconds(), cfg.RackCost, cfg.CoreCost)
	cfg.say("%s: %s", ReferenceMode.Name, mr.Note)
	return mr, nil
}
