package fairness

import (
	"context"
	"fmt"

	"github.com/sparrowfleet/sparrow/bench/policy/live"
)

// Run runs the paper's scenario (PaperTypes, PaperUsers, PaperEvents,
// scaled by cfg.Scale) once per setup, each on a fresh fleet, and
// analyses every run against the phases' CMMF shares.
func Run(ctx context.Context, cfg Config, setups []Setup) (Report, error) {
	cfg.Defaults()
	events := Scale(PaperEvents, cfg.Scale)
	end := scaleDur(PaperEnd, cfg.Scale)
	phases, err := Phases(events, end, PaperUsers, PaperTypes, cfg.NodesPerType*cfg.Slots)
	if err != nil {
		return Report{}, err
	}
	rep := NewReport(cfg, PaperUsers, PaperTypes, PaperEvents, PaperEnd, phases)
	for _, s := range setups {
		before, _ := live.ReadLoadAvg()
		m, err := Measure(ctx, cfg, s, PaperUsers, PaperTypes, events, end)
		if err != nil {
			return rep, fmt.Errorf("setup %s: %w", s.Name, err)
		}
		after, _ := live.ReadLoadAvg()
		sr := Analyze(cfg, s, m, PaperUsers, phases)
		sr.LoadBefore, sr.LoadAfter = before, after
		cfg.say("%s: %d tasks, deviation %s, busy %.0f%%, load %.1f -> %.1f", s.Name, sr.Tasks, fmtPtr(sr.Deviation, "%.3f"), 100*sr.Utilization, before[0], after[0])
		rep.Setups = append(rep.Setups, sr)
	}
	return rep, nil
}
