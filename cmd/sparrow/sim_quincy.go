package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/internal/plot"
	"github.com/sparrowfleet/sparrow/sim/racksim"
)

type simQuincyFlags struct {
	experiment string
	seed       uint64
	seeds      int
	json       bool
	outDir     string
	parallel   int
	gfh        bool
	solveGap   float64
	solveTimer float64
	fitRounds  int
	gather     float64
}

func newSimQuincyCmd() *cobra.Command {
	f := &simQuincyFlags{}
	d := racksim.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "quincy",
		Short: "Reproduce Quincy's Tables 2 and 4 and Figure 6 in simulation (Quincy §5–§6)",
		Long: `quincy runs the deterministic simulation in package sim/racksim: Quincy's
243-computer cluster (8 racks, one task per computer, 1 Gbit/s NICs, rack
uplinks of 6 Gbit/s or, constrained, 1 Gbit/s, bandwidth shared max-min
fairly) running Table 3's 30 application instances K at a time, under the
queue-based schedulers of §3 (G, GF, GFP, GFH) and Quincy's flow policies
(Q, QP, QF, QFP, QFPX: the product's core/quincy graph and core/flow solver).

Experiments:
  table2  G, Q, QP at K = 1, unconstrained (§6.1); QP's times are the ideal
  fig6    G, GF, GFP, Q, QF, QFP, QFPX at K = 10, unconstrained (§6.2)
  table4  GFP, QFP, QFPX at K = 10, constrained, no PrimeLarge (§6.3),
          against QFPX at K = 1 there

Tables print our numbers (mean over --seeds) beside the paper's. Progress
goes to stderr. See docs/QUINCY-SIM.md.`,
		Example: `  sparrow sim quincy --experiment table4
  sparrow sim quincy --experiment all --seeds 3 --out-dir docs/img
  sparrow sim quincy --experiment fig6 --json > fig6.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSimQuincy(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.experiment, "experiment", "all", "table2, fig6, table4, a comma list, or all")
	fl.Uint64Var(&f.seed, "seed", 1, "first seed (data and root placement, tie-breaking); a run is a function of its flags and seed")
	fl.IntVar(&f.seeds, "seeds", 1, "runs per policy, seeds --seed .. --seed+seeds-1 (the paper averages 3)")
	fl.BoolVar(&f.json, "json", false, "print JSON (summaries and per-run results) instead of tables")
	fl.StringVar(&f.outDir, "out-dir", "", "write PNG plots (quincy-fig5.png, quincy-fig9.png, quincy-dt.png) to this directory")
	fl.IntVar(&f.parallel, "parallel", 2, "runs simulated at once, on this many goroutines (each run is single-threaded)")
	fl.BoolVar(&f.gfh, "gfh", false, "also run GFH (GF with hysteresis, §3.5) in fig6")
	fl.Float64Var(&f.solveGap, "solve-gap", d.SolveGap, "flow policies: least simulated seconds between solves (event-driven solves are coalesced)")
	fl.IntVar(&f.fitRounds, "fit-rounds", 2, "rounds of fitting the instances' CPU times by simulating QP at K=1 (unconstrained, first seed) against Table 3; 0 keeps the closed-form estimate")
	fl.Float64Var(&f.gather, "gather-scale", d.GatherScale, "scale of the data all-to-all phases shuffle (1: Sort moves all its input, as §5.1 says; see docs/QUINCY-SIM.md)")
	fl.Float64Var(&f.solveTimer, "solve-timer", d.SolveTimer, "flow policies: re-solve this many simulated seconds after the last solve while workers wait")
	return cmd
}

// quincyRun is one simulation to run.
type quincyRun struct {
	key string
	cfg racksim.Config
	res *racksim.Result
	err error
}

// quincyExperimentOut is one experiment's summaries.
type quincyExperimentOut struct {
	Experiment racksim.Experiment `json:"experiment"`
	// IdealPolicy names the K = 1 runs whose per-instance times are the
	// ideal of ANP; Ideal holds them.
	IdealPolicy string             `json:"ideal_policy"`
	Ideal       map[string]float64 `json:"ideal_s"`
	IdealDT     *racksim.Summary   `json:"ideal_summary,omitempty"`
	Summaries   []racksim.Summary  `json:"summaries"`
}

func quincyKey(c racksim.Config) string {
	return fmt.Sprintf("%s/K%d/up%.0f/nopl%v/seed%d", c.Policy, c.K, c.Uplink, c.NoPrimeLarge, c.Seed)
}

func runSimQuincy(cmd *cobra.Command, f *simQuincyFlags) error {
	exps, err := racksim.ParseExperiments(f.experiment)
	if err != nil {
		return fmt.Errorf("--experiment: %w", err)
	}
	if f.seeds < 1 || f.parallel < 1 {
		return fmt.Errorf("--seeds and --parallel must be at least 1, got %d and %d", f.seeds, f.parallel)
	}
	if f.outDir != "" {
		if err := os.MkdirAll(f.outDir, 0o755); err != nil {
			return fmt.Errorf("--out-dir: %w", err)
		}
	}
	base := racksim.DefaultConfig()
	base.SolveGap, base.SolveTimer, base.GatherScale = f.solveGap, f.solveTimer, f.gather
	base.Clock = time.Now
	if err := base.Validate(); err != nil {
		return err
	}
	errw := cmd.ErrOrStderr()
	start := time.Now()
	if f.fitRounds > 0 {
		fitCfg := base
		fitCfg.Seed = f.seed
		fit, err := racksim.FitCPU(fitCfg, f.fitRounds)
		if err != nil {
			return err
		}
		base.CPU = fit
		fmt.Fprintf(errw, "[%6.1fs] fitted CPU times to Table 3 (%d rounds of QP at K=1, seed %d)\n", time.Since(start).Seconds(), f.fitRounds, f.seed)
	}
	seeds := make([]uint64, f.seeds)
	for i := range seeds {
		seeds[i] = f.seed + uint64(i)
	}
	// Plan the runs, each once even where experiments share it (Table 2's
	// QP runs are Figure 6's ideal).
	var runs []*quincyRun
	byKey := map[string]*quincyRun{}
	add := func(c racksim.Config) {
		k := quincyKey(c)
		if _, ok := byKey[k]; !ok {
			r := &quincyRun{key: k, cfg: c}
			byKey[k] = r
			runs = append(runs, r)
		}
	}
	for _, x := range exps {
		for _, s := range seeds {
			add(x.IdealConfig(base, s))
			for _, p := range x.Policies(f.gfh) {
				add(x.Config(base, p, s))
			}
		}
	}
	var mu sync.Mutex
	done := 0
	work := make(chan *quincyRun)
	var wg sync.WaitGroup
	for range f.parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				t0 := time.Now()
				r.res, r.err = racksim.Run(r.cfg)
				mu.Lock()
				done++
				fmt.Fprintf(errw, "[%6.1fs] %d/%d %-34s %6.1fs wall\n", time.Since(start).Seconds(), done, len(runs), r.key, time.Since(t0).Seconds())
				mu.Unlock()
			}
		}()
	}
	for _, r := range runs {
		work <- r
	}
	close(work)
	wg.Wait()
	for _, r := range runs {
		if r.err != nil {
			return fmt.Errorf("run %s: %w", r.key, r.err)
		}
	}
	results := func(c func(uint64) racksim.Config) []*racksim.Result {
		var out []*racksim.Result
		for _, s := range seeds {
			out = append(out, byKey[quincyKey(c(s))].res)
		}
		return out
	}
	var outs []quincyExperimentOut
	for _, x := range exps {
		idealRuns := results(func(s uint64) racksim.Config { return x.IdealConfig(base, s) })
		o := quincyExperimentOut{Experiment: x, IdealPolicy: string(x.IdealConfig(base, 0).Policy) + " K=1", Ideal: racksim.IdealTimes(idealRuns)}
		is := racksim.Summarize(x.IdealConfig(base, 0).Policy, idealRuns, o.Ideal)
		o.IdealDT = &is
		for _, p := range x.Policies(f.gfh) {
			o.Summaries = append(o.Summaries, racksim.Summarize(p, results(func(s uint64) racksim.Config { return x.Config(base, p, s) }), o.Ideal))
		}
		outs = append(outs, o)
	}
	fmt.Fprintf(errw, "[%6.1fs] %d runs done\n", time.Since(start).Seconds(), len(runs))
	if f.outDir != "" {
		if err := quincyPlots(f.outDir, outs, f.seeds); err != nil {
			return err
		}
	}
	w := cmd.OutOrStdout()
	if f.json {
		var all []*racksim.Result
		for _, r := range runs {
			all = append(all, r.res)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Seeds       []uint64              `json:"seeds"`
			Experiments []quincyExperimentOut `json:"experiments"`
			Runs        []*racksim.Result     `json:"runs"`
		}{seeds, outs, all})
	}
	for _, o := range outs {
		quincyPrint(w, o, f.seeds)
	}
	return nil
}

func pct(part, total float64) string {
	if total == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*part/total)
}

// quincyPrint prints one experiment's tables, the paper's numbers beside
// ours.
func quincyPrint(w io.Writer, o quincyExperimentOut, seeds int) {
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
	case racksim.Table2:
		rows := [][]string{{"policy", "makespan s", "(paper)", "DT TB", "(paper)", "rack switch TB", "(paper)", "core switch TB", "(paper)", "core less gathers", "kills", "solve ms mean/max"}}
		for _, s := range o.Summaries {
			p, _ := racksim.PaperTable2Row(string(s.Policy))
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
	case racksim.Fig6, racksim.Table4:
		title := "Figure 6: K=10, unconstrained network"
		if o.Experiment == racksim.Table4 {
			title = "Figure 8: K=10, constrained network (1 Gbit/s uplinks), no PrimeLarge"
		}
		summaries := o.Summaries
		if o.IdealDT != nil {
			summaries = append([]racksim.Summary{*o.IdealDT}, summaries...)
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
		fmt.Fprintf(w, "Paper §6.5: flow.Solve's counterpart (CS2) took %.2f ms per solve on average, %.2f ms at most.\n\n", racksim.PaperSolve.MeanMS, racksim.PaperSolve.MaxMS)
		if o.Experiment == racksim.Table4 {
			var gfp float64
			for _, s := range o.Summaries {
				if s.Policy == racksim.GFP {
					gfp = s.Mean.DTCore
				}
			}
			pg, _ := racksim.PaperTable4Row("GFP")
			rows = [][]string{{"policy", "DT TB", "(paper)", "same rack TB", "(paper)", "cross cluster TB", "(paper)", "core less gathers", "GFP core / core", "(paper)"}}
			for i, s := range summaries {
				name := string(s.Policy)
				if i == 0 {
					name = "ideal"
				}
				p, _ := racksim.PaperTable4Row(name)
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

func solveMS(s racksim.Summary) string {
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
func quincyJobs(o quincyExperimentOut) []quincyJob {
	var out []quincyJob
	for _, in := range racksim.Table3() {
		if _, ok := o.Ideal[in.Name]; ok {
			out = append(out, quincyJob{in.Name, in.Ideal})
		}
	}
	return out
}

// quincyPlots writes the per-job times of Figures 5 and 9 and the DT
// chart.
func quincyPlots(dir string, outs []quincyExperimentOut, seeds int) error {
	for _, o := range outs {
		var name, title string
		switch o.Experiment {
		case racksim.Fig6:
			name, title = "quincy-fig5.png", "Per-instance running time, K=10, unconstrained (cf. Quincy Fig. 5)"
		case racksim.Table4:
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
		var rows []racksim.Summary
		var lookup func(string) (racksim.PaperDT, bool)
		switch o.Experiment {
		case racksim.Table2:
			rows, lookup = o.Summaries, racksim.PaperTable2Row
		case racksim.Table4:
			rows = append([]racksim.Summary{*o.IdealDT}, o.Summaries...)
			lookup = racksim.PaperTable4Row
		default:
			continue
		}
		for i, s := range rows {
			label := string(s.Policy)
			if o.Experiment == racksim.Table4 && i == 0 {
				label = "ideal"
			}
			ours = append(ours, plot.Point{X: x, Y: s.Mean.DTCore})
			placeable = append(placeable, plot.Point{X: x, Y: s.Mean.DTCore - s.Mean.DTGatherCore})
			if p, ok := lookup(label); ok {
				paper = append(paper, plot.Point{X: x, Y: p.Core})
			}
			tag := "T2 "
			if o.Experiment == racksim.Table4 {
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
