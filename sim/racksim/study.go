package racksim

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sparrowfleet/sparrow/internal/parallel"
	"github.com/sparrowfleet/sparrow/internal/plot"
)

// StudyConfig is a reproduction of the paper's experiments.
type StudyConfig struct {
	// Experiments to run.
	Experiments []Experiment
	// Seed is the first seed; Seeds runs per policy take Seed ..
	// Seed+Seeds-1.
	Seed  uint64
	Seeds int
	// Parallel runs are simulated at once, each on its own goroutine.
	Parallel int
	// GFH also runs GFH in Figure 6.
	GFH bool
	// FitRounds are rounds of FitCPU before the runs; 0 keeps Base's
	// CPU times.
	FitRounds int
	// Base is every run's configuration before the experiment's policy,
	// K, network and seed are set.
	Base Config
	// Progress, if not nil, receives a line per finished run.
	Progress io.Writer
	// Clock times the runs for Progress.
	Clock func() time.Time
}

// Study is a reproduction's outcome; its JSON form is sparrow sim
// quincy --json's output.
type Study struct {
	Seeds       []uint64           `json:"seeds"`
	Experiments []ExperimentOutput `json:"experiments"`
	Runs        []*Result          `json:"runs"`
}

// RunStudy fits the CPU times if asked, then runs every experiment's runs
// once each (Table 2's QP runs are Figure 6's ideal), cfg.Parallel at a
// time, and summarises them.
func RunStudy(cfg StudyConfig) (*Study, error) {
	if cfg.Seeds < 1 || cfg.Parallel < 1 {
		return nil, fmt.Errorf("--seeds and --parallel must be at least 1, got %d and %d", cfg.Seeds, cfg.Parallel)
	}
	base := cfg.Base
	if err := base.Validate(); err != nil {
		return nil, err
	}
	clock := cfg.Clock
	if clock == nil {
		clock = time.Now
	}
	errw := cfg.Progress
	if errw == nil {
		errw = io.Discard
	}
	start := clock()
	if cfg.FitRounds > 0 {
		fitCfg := base
		fitCfg.Seed = cfg.Seed
		fit, err := FitCPU(fitCfg, cfg.FitRounds)
		if err != nil {
			return nil, err
		}
		base.CPU = fit
		fmt.Fprintf(errw, "[%6.1fs] fitted CPU times to Table 3 (%d rounds of QP at K=1, seed %d)\n", clock().Sub(start).Seconds(), cfg.FitRounds, cfg.Seed)
	}
	seeds := make([]uint64, cfg.Seeds)
	for i := range seeds {
		seeds[i] = cfg.Seed + uint64(i)
	}
	// Plan the runs, each once even where experiments share it.
	var runs []*studyRun
	byKey := map[string]*studyRun{}
	add := func(c Config) {
		k := runKey(c)
		if _, ok := byKey[k]; !ok {
			r := &studyRun{key: k, cfg: c}
			byKey[k] = r
			runs = append(runs, r)
		}
	}
	for _, x := range cfg.Experiments {
		for _, s := range seeds {
			add(x.IdealConfig(base, s))
			for _, p := range x.Policies(cfg.GFH) {
				add(x.Config(base, p, s))
			}
		}
	}
	parallel.Each(cfg.Parallel, runs, func(r *studyRun) {
		t0 := clock()
		r.res, r.err = Run(r.cfg)
		r.wall = clock().Sub(t0)
	}, func(r *studyRun, done int) {
		fmt.Fprintf(errw, "[%6.1fs] %d/%d %-34s %6.1fs wall\n", clock().Sub(start).Seconds(), done, len(runs), r.key, r.wall.Seconds())
	})
	for _, r := range runs {
		if r.err != nil {
			return nil, fmt.Errorf("run %s: %w", r.key, r.err)
		}
	}
	results := func(c func(uint64) Config) []*Result {
		var out []*Result
		for _, s := range seeds {
			out = append(out, byKey[runKey(c(s))].res)
		}
		return out
	}
	st := &Study{Seeds: seeds}
	for _, x := range cfg.Experiments {
		idealRuns := results(func(s uint64) Config { return x.IdealConfig(base, s) })
		o := ExperimentOutput{Experiment: x, IdealPolicy: string(x.IdealConfig(base, 0).Policy) + " K=1", Ideal: IdealTimes(idealRuns)}
		is := Summarize(x.IdealConfig(base, 0).Policy, idealRuns, o.Ideal)
		o.IdealDT = &is
		for _, p := range x.Policies(cfg.GFH) {
			o.Summaries = append(o.Summaries, Summarize(p, results(func(s uint64) Config { return x.Config(base, p, s) }), o.Ideal))
		}
		st.Experiments = append(st.Experiments, o)
	}
	for _, r := range runs {
		st.Runs = append(st.Runs, r.res)
	}
	fmt.Fprintf(errw, "[%6.1fs] %d runs done\n", clock().Sub(start).Seconds(), len(runs))
	return st, nil
}

// Print prints every experiment's tables, the paper's numbers beside
// ours.
func (st *Study) Print(w io.Writer) {
	for _, o := range st.Experiments {
		printExperiment(w, o, len(st.Seeds))
	}
}

// Plot writes the per-job times of Figures 5 and 9 and the DT chart
// (quincy-fig5.png, quincy-fig9.png, quincy-dt.png) to dir.
func (st *Study) Plot(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out-dir: %w", err)
	}
	return plotStudy(dir, st.Experiments, len(st.Seeds))
}

// studyRun is one simulation to run.
type studyRun struct {
	key  string
	cfg  Config
	res  *Result
	err  error
	wall time.Duration
}

// ExperimentOutput is one experiment's summaries.
type ExperimentOutput struct {
	Experiment Experiment `json:"experiment"`
	// IdealPolicy names the K = 1 runs whose per-instance times are the
	// ideal of ANP; Ideal holds them.
	IdealPolicy string             `json:"ideal_policy"`
	Ideal       map[string]float64 `json:"ideal_s"`
	IdealDT     *Summary           `json:"ideal_summary,omitempty"`
	Summaries   []Summary          `json:"summaries"`
}

func runKey(c Config) string {
	return fmt.Sprintf("%s/K%d/up%.0f/nopl%v/seed%d", c.Policy, c.K, c.Uplink, c.NoPrimeLarge, c.Seed)
}

func pct(part, total float64) string {
	if total == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*part/total)
}

// printExperiment prints one experiment's tables, the paper's numbers beside
// ours.
func printExperiment(w io.Writer, o ExperimentOutput, seeds int) {
	table := func(title string, rows [][]string) {
		fmt.Fprintf(w, "%s\n", title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, r := range rows {
			for _, c := range r {
				fmt.Fprintf(tw, "%s\t", c)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	f := func(format string, a ...any) string { return fmt.Sprintf(format, a...) }
	switch o.Experiment {
	case Table2:
		rows := [][]string{{"policy", "makespan s", "(paper)", "DT TB", "(paper)", "rack switch TB", "(paper)", "core switch TB", "(paper)", "core less gathers", "kills", "solve ms mean/max"}}
		for _, s := range o.Summaries {
			p, _ := PaperTable2Row(string(s.Policy))
			m := s.Mean
			rows = append(rows, []string{string(s.Policy), f("%.0f ±%.0f", m.Makespan, s.Std.Makespan), f("%.0f", p.Makespan),
				f("%.2f", m.DTTotal), f("%.2f", p.Total),
				f("%.3f (%s)", m.DTRack, pct(m.DTRack, m.DTTotal)), f("%.3f (%s)", p.Rack, pct(p.Rack, p.Total)),
				f("%.3f (%s)", m.DTCore, pct(m.DTCore, m.DTTotal)), f("%.3f (%s)", p.Core, pct(p.Core, p.Total)),
				f("%.3f", m.DTCore-m.DTGatherCore), f("%.0f", s.Kills), solveMS(s)})
		}
		table(f("Table 2: K=1, unconstrained network, mean of %d seed(s)", seeds), rows)
		rows = [][]string{{"instance", "Table 3 s", "ours s", "ours/paper"}}
		for _, j := range quincyJobs(o) {
			rows = append(rows, []string{j.name, f("%.0f", j.table3), f("%.1f", o.Ideal[j.name]), f("%.2f", o.Ideal[j.name]/j.table3)})
		}
		table("Table 3: ideal running time per instance (QP at K=1, mean over seeds)", rows)
	case Fig6, Table4:
		title := "Figure 6: K=10, unconstrained network"
		if o.Experiment == Table4 {
			title = "Figure 8: K=10, constrained network (1 Gbit/s uplinks), no PrimeLarge"
		}
		summaries := o.Summaries
		if o.IdealDT != nil {
			summaries = append([]Summary{*o.IdealDT}, summaries...)
		}
		rows := [][]string{{"policy", "makespan s", "SNP", "SNP cpu", "SNP nw", "l1", "l2", "l∞", "unfairness", "DT TB", "rack switch TB", "core switch TB", "kills", "solve ms mean/max"}}
		for i, s := range summaries {
			name := string(s.Policy)
			if i == 0 && o.IdealDT != nil {
				name = "ideal: " + o.IdealPolicy
			}
			m := s.Mean
			rows = append(rows, []string{name, f("%.0f ±%.0f", m.Makespan, s.Std.Makespan), f("%.3f", m.SNP), f("%.3f", m.SNPCPU), f("%.3f", m.SNPNW),
				f("%.2f", m.L1), f("%.2f", m.L2), f("%.1f", m.LInf), f("%.3f", m.Unfairness), f("%.2f", m.DTTotal),
				f("%.3f (%s)", m.DTRack, pct(m.DTRack, m.DTTotal)), f("%.3f (%s)", m.DTCore, pct(m.DTCore, m.DTTotal)), f("%.0f", s.Kills), solveMS(s)})
		}
		table(f("%s; mean of %d seed(s); ANP against %s", title, seeds, o.IdealPolicy), rows)
		fmt.Fprintf(w, "Paper §6.5: flow.Solve's counterpart (CS2) took %.2f ms per solve on average, %.2f ms at most.\n\n", PaperSolve.MeanMS, PaperSolve.MaxMS)
		if o.Experiment == Table4 {
			var gfp float64
			for _, s := range o.Summaries {
				if s.Policy == GFP {
					gfp = s.Mean.DTCore
				}
			}
			pg, _ := PaperTable4Row("GFP")
			rows = [][]string{{"policy", "DT TB", "(paper)", "same rack TB", "(paper)", "cross cluster TB", "(paper)", "core less gathers", "GFP core / core", "(paper)"}}
			for i, s := range summaries {
				name := string(s.Policy)
				if i == 0 {
					name = "ideal"
				}
				p, _ := PaperTable4Row(name)
				m := s.Mean
				rows = append(rows, []string{name, f("%.2f", m.DTTotal), f("%.2f", p.Total),
					f("%.3f (%s)", m.DTRack, pct(m.DTRack, m.DTTotal)), f("%.3f (%s)", p.Rack, pct(p.Rack, p.Total)),
					f("%.3f (%s)", m.DTCore, pct(m.DTCore, m.DTTotal)), f("%.3f (%s)", p.Core, pct(p.Core, p.Total)),
					f("%.3f", m.DTCore-m.DTGatherCore), f("%.2f", gfp/m.DTCore), f("%.2f", pg.Core/p.Core)})
			}
			table(f("Table 4: data transfer, constrained network, mean of %d seed(s)", seeds), rows)
		}
	}
}

func solveMS(s Summary) string {
	if s.Solves == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f/%.0f (%.0f solves)", s.SolveMeanMS, s.SolveMaxMS, s.Solves)
}

// quincyShort abbreviates an instance name for an axis label.
func quincyShort(name string) string {
	r := strings.NewReplacer("PrimeSmall", "PS", "PrimeLarge", "PL", "DatabaseJoin", "Join", "PageRank", "PR")
	return r.Replace(name)
}

type quincyJob struct {
	name   string
	table3 float64
}

// quincyJobs lists the experiment's instances in Table 3's order.
func quincyJobs(o ExperimentOutput) []quincyJob {
	var out []quincyJob
	for _, in := range Table3() {
		if _, ok := o.Ideal[in.Name]; ok {
			out = append(out, quincyJob{in.Name, in.Ideal})
		}
	}
	return out
}

// plotStudy writes the per-job times of Figures 5 and 9 and the DT
// chart.
func plotStudy(dir string, outs []ExperimentOutput, seeds int) error {
	for _, o := range outs {
		var name, title string
		switch o.Experiment {
		case Fig6:
			name, title = "quincy-fig5.png", "Per-instance running time, K=10, unconstrained (cf. Quincy Fig. 5)"
		case Table4:
			name, title = "quincy-fig9.png", "Per-instance running time, K=10, constrained network (cf. Quincy Fig. 9)"
		default:
			continue
		}
		jobs := quincyJobs(o)
		ch := &plot.Chart{
			Title:    title,
			Subtitle: fmt.Sprintf("mean of %d seed(s); instances in Table 3's order; ideal = %s", seeds, o.IdealPolicy),
			X:        plot.Axis{Label: "instance, Table 3's order (PS = PrimeSmall, PL = PrimeLarge, PR = PageRank)"},
			Y:        plot.Axis{Label: "running time (s, log scale)", Log: true},
		}
		for i, j := range jobs {
			if i%5 == 0 || j.name == "PageRank" {
				ch.X.Ticks = append(ch.X.Ticks, plot.Tick{Value: float64(i), Label: quincyShort(j.name)})
			}
		}
		ideal := plot.Series{Name: "ideal", Color: plot.Palette[7], Dashed: true, Marker: plot.Ring}
		for i, j := range jobs {
			ideal.Points = append(ideal.Points, plot.Point{X: float64(i), Y: o.Ideal[j.name]})
		}
		ch.Series = append(ch.Series, ideal)
		for _, s := range o.Summaries {
			ser := plot.Series{Name: string(s.Policy), Marker: plot.Circle}
			for i, j := range jobs {
				ser.Points = append(ser.Points, plot.Point{X: float64(i), Y: s.JobTime[j.name]})
			}
			ch.Series = append(ch.Series, ser)
		}
		if err := ch.Save(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
	}
	// DT: core-switch TB per policy, ours and the paper's.
	ch := &plot.Chart{
		Title:    "Data read across the core switch (TB): ours (filled) vs the paper's (hollow)",
		Subtitle: fmt.Sprintf("mean of %d seed(s); Table 2 at K=1, Table 4 at K=10 constrained; squares: ours less all-to-all gathers", seeds),
		X:        plot.Axis{Label: "policy"},
		Y:        plot.Axis{Label: "TB across the core switch", Min: 0},
	}
	x := 0.0
	var ours, paper, placeable []plot.Point
	for _, o := range outs {
		var rows []Summary
		var lookup func(string) (PaperDT, bool)
		switch o.Experiment {
		case Table2:
			rows, lookup = o.Summaries, PaperTable2Row
		case Table4:
			rows = append([]Summary{*o.IdealDT}, o.Summaries...)
			lookup = PaperTable4Row
		default:
			continue
		}
		for i, s := range rows {
			label := string(s.Policy)
			if o.Experiment == Table4 && i == 0 {
				label = "ideal"
			}
			ours = append(ours, plot.Point{X: x, Y: s.Mean.DTCore})
			placeable = append(placeable, plot.Point{X: x, Y: s.Mean.DTCore - s.Mean.DTGatherCore})
			if p, ok := lookup(label); ok {
				paper = append(paper, plot.Point{X: x, Y: p.Core})
			}
			tag := "T2 "
			if o.Experiment == Table4 {
				tag = "T4 "
			}
			ch.X.Ticks = append(ch.X.Ticks, plot.Tick{Value: x, Label: tag + label})
			x++
		}
		x += 0.5
	}
	if len(ours) == 0 {
		return nil
	}
	ch.X.Min, ch.X.Max = -0.5, x-0.5
	top := 0.0
	for _, p := range append(append(slices.Clone(ours), paper...), placeable...) {
		top = max(top, p.Y)
	}
	ch.Y.Max = top * 1.1
	ch.Series = []plot.Series{
		{Name: "ours", Points: ours, NoLine: true, Marker: plot.Circle, Color: plot.Palette[0]},
		{Name: "ours less gathers", Points: placeable, NoLine: true, Marker: plot.Square, Color: plot.Palette[2]},
		{Name: "paper", Points: paper, NoLine: true, Marker: plot.Ring, Color: plot.Palette[1]},
	}
	if err := ch.Save(filepath.Join(dir, "quincy-dt.png")); err != nil {
		return fmt.Errorf("plot quincy-dt.png: %w", err)
	}
	return nil
}
