package daemon

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/core/locality"
	"github.com/sparrowfleet/sparrow/core/quincy"
)

// LocalityFlags are the coordinator's locality price weights, in Quincy's
// units (§6: ω = 0.5, ψ = 1, ξ = 2).
type LocalityFlags struct {
	wait, rack, core, probeRatio float64
	input                        int64
}

// Register adds the flags to fs, defaulting to locality.DefaultParams.
func (l *LocalityFlags) Register(fs *pflag.FlagSet) {
	d := locality.DefaultParams()
	unit := float64(quincy.CostUnit)
	fs.Float64Var(&l.wait, "wait-weight", float64(d.WaitPerSecond)/unit, "locality: cost of a task waiting one second in a queue, in Quincy's units (ω; a second of running is 1)")
	fs.Float64Var(&l.rack, "rack-cost-per-gb", float64(d.RackPerGB)/unit, "locality: cost of reading 10^9 bytes of a task's input across a rack switch (ψ)")
	fs.Float64Var(&l.core, "core-cost-per-gb", float64(d.CorePerGB)/unit, "locality: cost of reading 10^9 bytes across the core switch (ξ; Quincy's QFPX uses 20 for a constrained core)")
	fs.Int64Var(&l.input, "locality-input-bytes", d.InputBytes, "locality: input size assumed for every queued task (bytes that move when it runs away from its data)")
	fs.Float64Var(&l.probeRatio, "locality-probe-ratio", d.ProbeRatio, "locality: reservations each task queues (the schedulers' --probe-ratio d); a node's queued reservations divided by it estimate its queued tasks (1: count reservations as tasks)")
}

// Params converts the flags to cost units and checks them.
func (l *LocalityFlags) Params() (locality.Params, error) {
	p := locality.DefaultParams()
	toUnits := func(name string, v float64) (int64, error) {
		if v < 0 || v > 1e9 || v != v {
			return 0, fmt.Errorf("--%s %v: want a number in [0, 1e9]", name, v)
		}
		return int64(v*quincy.CostUnit + 0.5), nil
	}
	var err error
	if p.WaitPerSecond, err = toUnits("wait-weight", l.wait); err != nil {
		return p, err
	}
	if p.RackPerGB, err = toUnits("rack-cost-per-gb", l.rack); err != nil {
		return p, err
	}
	if p.CorePerGB, err = toUnits("core-cost-per-gb", l.core); err != nil {
		return p, err
	}
	p.InputBytes, p.ProbeRatio = l.input, l.probeRatio
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("locality flags: %w", err)
	}
	return p, nil
}
