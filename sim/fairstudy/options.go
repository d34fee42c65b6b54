package fairstudy

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/sparrowfleet/sparrow/internal/plot"
	"github.com/sparrowfleet/sparrow/sim/constrained"
)

// Options are a study as `sparrow sim fairness` runs it: Base, every
// seed's configuration, with its round trip as RTTms (Base.RTT is set
// from it), the policies as a list, the seeds and the outputs. Its errors
// name the command's flags.
type Options struct {
	Base   constrained.Config
	RTTms  float64
	Policy string
	Seeds  int
	// JSON prints the per-seed results and the summary as JSON instead
	// of the tables; PlotRMSE and PlotResponse, if set, receive the
	// first seed's charts.
	JSON                   bool
	PlotRMSE, PlotResponse string
}

// Run runs the study, with progress lines on progress, writes the plots
// and prints the result on out.
func (o Options) Run(out, progress io.Writer) error {
	policies, err := constrained.ParsePolicies(o.Policy)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	if o.Seeds < 1 {
		return fmt.Errorf("--seeds must be at least 1, got %d", o.Seeds)
	}
	for _, p := range []string{o.PlotRMSE, o.PlotResponse} {
		if p != "" {
			if err := plot.CheckPath(p); err != nil {
				return err
			}
		}
	}
	base := o.Base
	base.RTT = o.RTTms / 1000
	st, err := Run(Config{Base: base, Policies: policies, Seeds: o.Seeds, Progress: progress})
	if err != nil {
		return err
	}
	if o.PlotRMSE != "" {
		if err := st.RMSEChart().Save(o.PlotRMSE); err != nil {
			return err
		}
	}
	if o.PlotResponse != "" {
		if err := st.ResponseChart().Save(o.PlotResponse); err != nil {
			return err
		}
	}
	if o.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(st.JSON(o.config()))
	}
	return st.WriteTable(out)
}

// config is the settings recorded in the JSON, in the flags' units.
func (o Options) config() map[string]any {
	b := o.Base
	return map[string]any{
		"nodes": b.Nodes, "slots": b.Slots, "jobs": b.Jobs, "duration_s": b.Duration,
		"task_mean_s": b.TaskMean, "pareto_alpha": b.ParetoAlpha, "rtt_ms": o.RTTms,
		"probe_ratio": b.ProbeRatio, "period_s": b.Period, "sample_s": b.Sample,
		"seed": b.Seed, "seeds": o.Seeds,
	}
}
