package flowbench

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sparrowfleet/sparrow/core/flow"
	"github.com/sparrowfleet/sparrow/core/flow/gen"
	"github.com/sparrowfleet/sparrow/internal/stats"
)

// Row is one instance's timings; times are medians in ms.
type Row struct {
	Instance   string  `json:"instance"`
	Nodes      int     `json:"nodes"`
	Arcs       int     `json:"arcs"`
	Cost       int64   `json:"cost"`
	OursMs     float64 `json:"ours_ms"`
	LemonNSMs  float64 `json:"lemon_ns_ms,omitempty"`
	LemonCSMs  float64 `json:"lemon_cs_ms,omitempty"`
	Ratio      float64 `json:"ratio_vs_faster_lemon,omitempty"`
	ChurnTasks int     `json:"churn_tasks,omitempty"`
	WarmMs     float64 `json:"warm_resolve_ms,omitempty"`
	LemonCost  int64   `json:"lemon_cost,omitempty"`
}

// WriteTable prints rows as a table.
func WriteTable(out io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "instance\tnodes\tarcs\tours ms\tLEMON NS ms\tLEMON CS ms\tratio\twarm ms (churn)\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.2f\t%.2f (%d)\t\n", r.Instance, r.Nodes, r.Arcs, r.OursMs, r.LemonNSMs, r.LemonCSMs, r.Ratio, r.WarmMs, r.ChurnTasks)
	}
	return tw.Flush()
}

// median is the median of xs in milliseconds, by stats.Quantile.
func median(xs []time.Duration) float64 {
	ms := make([]float64, len(xs))
	for i, x := range xs {
		ms[i] = float64(x) / 1e6
	}
	slices.Sort(ms)
	return stats.Quantile(ms, 0.5)
}

// One times core/flow on g from scratch reps times and, with lemon, the
// LEMON driver at that path on the same problem (its costs must agree);
// for a generated graph q and churn > 0, it also times warm re-solves
// after churn of q's tasks change. Progress goes to progress.
func One(progress io.Writer, name string, g *flow.Network, q *gen.Graph, lemon string, reps int, churn float64) (Row, error) {
	row := Row{Instance: name, Nodes: g.NumNodes(), Arcs: g.NumArcs()}
	reps = max(reps, 1)
	var dimacs bytes.Buffer
	if lemon != "" {
		if err := flow.WriteDIMACS(&dimacs, g); err != nil {
			return row, err
		}
	}
	var times []time.Duration
	for range reps {
		t0 := time.Now()
		s, err := flow.Solve(g)
		times = append(times, time.Since(t0))
		if err != nil {
			return row, fmt.Errorf("%s: %w", name, err)
		}
		row.Cost = s.Cost
	}
	row.OursMs = median(times)
	fmt.Fprintf(progress, "  ours: %.1f ms\n", row.OursMs)
	if lemon != "" {
		c := exec.Command(lemon, "-r", strconv.Itoa(reps), "-")
		c.Stdin = &dimacs
		out, err := c.Output()
		if err != nil {
			return row, fmt.Errorf("LEMON driver %s: %w", lemon, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fs := strings.Fields(line)
			if len(fs) != 5 {
				return row, fmt.Errorf("LEMON driver printed %q", line)
			}
			cost, _ := strconv.ParseInt(fs[2], 10, 64)
			med, _ := strconv.ParseFloat(fs[4], 64)
			if fs[1] != "OPTIMAL" || cost != row.Cost {
				return row, fmt.Errorf("%s: LEMON %s says %s %d, ours %d", name, fs[0], fs[1], cost, row.Cost)
			}
			row.LemonCost = cost
			switch fs[0] {
			case "ns":
				row.LemonNSMs = med / 1e6
			case "cs":
				row.LemonCSMs = med / 1e6
			}
		}
		row.Ratio = row.OursMs / min(row.LemonNSMs, row.LemonCSMs)
		fmt.Fprintf(progress, "  LEMON: NS %.1f ms, CS %.1f ms\n", row.LemonNSMs, row.LemonCSMs)
	}
	if q != nil && churn > 0 {
		s := flow.NewSolver(q.Net)
		if _, err := s.Solve(); err != nil {
			return row, err
		}
		k := max(1, int(churn*float64(q.Tasks())/2))
		row.ChurnTasks = 2 * k
		times = times[:0]
		for range max(reps, 5) {
			q.Churn(k)
			t0 := time.Now()
			_, err := s.Solve()
			times = append(times, time.Since(t0))
			if err != nil {
				return row, fmt.Errorf("%s warm re-solve: %w", name, err)
			}
		}
		row.WarmMs = median(times)
		fmt.Fprintf(progress, "  warm re-solve after %d task changes: %.2f ms\n", row.ChurnTasks, row.WarmMs)
	}
	return row, nil
}
