package racksim

import (
	"fmt"
	"math"
)

// FitCPU refines the instances' CPU times by simulation, so that their
// simulated ideal times match Table 3: it runs Table 3's workload alone
// (K = 1) under QP on base's cluster with base's seed, the paper's ideal
// run (§6.1), and for each instance spreads the gap between Table 3's time
// and the simulated one over its phases in proportion to their weights and
// waves, as the closed-form fit does; then it runs again, rounds times in
// all. Only the unconstrained network should be fitted: the constrained
// runs execute the same programs. It returns the CPU seconds per phase by
// instance, for Config.CPU.
func FitCPU(base Config, rounds int) (map[string][]float64, error) {
	cfg := base
	cfg.Policy, cfg.K, cfg.NoPrimeLarge, cfg.Clock, cfg.Progress = QP, 1, false, nil, nil
	computers := 0
	for _, n := range cfg.RackSizes {
		computers += n
	}
	free := float64(max(computers-1, 1))
	fit := map[string][]float64{}
	for range rounds {
		cfg.CPU = fit
		ins := Workload(&cfg)
		r, err := Run(cfg)
		if err != nil {
			return nil, fmt.Errorf("racksim: fitting CPU times: %w", err)
		}
		byName := map[string]*Instance{}
		for i := range ins {
			byName[ins[i].Name] = &ins[i]
		}
		next := map[string][]float64{}
		for _, j := range r.Jobs {
			in := byName[j.Name]
			if in == nil || in.CPUFrom != "" || in.Ideal <= 0 {
				continue
			}
			weighted := 0.0
			for _, p := range in.Phases {
				weighted += math.Ceil(float64(p.Tasks)/free) * p.Weight
			}
			unit := (in.Ideal - j.Time) / weighted
			cpu := make([]float64, len(in.Phases))
			for k, p := range in.Phases {
				cpu[k] = max(p.CPU+unit*p.Weight, 0.1*p.CPU)
			}
			next[j.Name] = cpu
		}
		for _, in := range ins {
			if src, ok := next[in.CPUFrom]; ok && in.CPUFrom != "" {
				next[in.Name] = src
			}
		}
		fit = next
	}
	return fit, nil
}
