package sweep

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/spf13/pflag"
)

// Output is how `sparrow sim` runs a sweep and prints it.
type Output struct {
	// JSON prints a JSON array instead of the table; ZeroWait the Table 2
	// comparison instead of the table.
	JSON, ZeroWait bool
	// Plot, if set, also receives the chart of mean response time
	// against load.
	Plot string
	// CPUProfile, if set, receives a CPU profile of the simulation.
	CPUProfile string
	// ProcessCPU, if set, returns the CPU time the whole process has used
	// so far; a sweep of one point reports it, and its tasks per
	// CPU-second, in the JSON.
	ProcessCPU func() (time.Duration, error)
}

// RunAndWrite lists and simulates the spec's points, with a progress line
// per point on progress, and prints them on out as o says. Unless GOGC or
// GOMEMLIMIT is set it trades memory for fewer collections for the rest of
// the process (setGC).
func (f *Spec) RunAndWrite(o Output, out, progress io.Writer) error {
	pts, err := f.Points()
	if err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		setGC(pts)
	}
	if o.CPUProfile != "" {
		pf, err := os.Create(o.CPUProfile)
		if err != nil {
			return fmt.Errorf("sim: cpu profile: %w", err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fmt.Errorf("sim: cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if err := Run(pts, f.Parallel, progress); err != nil {
		return err
	}
	if o.ProcessCPU != nil && len(pts) == 1 {
		cpu, err := o.ProcessCPU()
		if err != nil {
			return fmt.Errorf("sim: process CPU time: %w", err)
		}
		pts[0].cpu = cpu
	}
	multiD := MultiD(pts)
	if o.Plot != "" {
		if err := Chart(pts, multiD).Save(o.Plot); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		fmt.Fprintf(progress, "wrote %s\n", o.Plot)
	}
	switch {
	case o.JSON:
		return WriteJSON(out, pts)
	case o.ZeroWait:
		return WriteZeroWait(out, pts, multiD)
	}
	return WriteTable(out, pts, multiD, f.LongFrac > 0)
}

// setGC sets the garbage collector for simulating pts. A sweep of several
// points collects when the heap has grown fivefold: each finished point's
// state is garbage, and the engine's own is mostly placement's per-request
// tables and queue nodes. A single point's heap is almost all live state
// (node monitors, job tables, reused from job to job), so collecting during
// it would free next to nothing: it collects only once the heap passes a
// limit well above what its nodes need.
func setGC(pts []*Point) {
	if len(pts) != 1 {
		debug.SetGCPercent(400)
		return
	}
	c := pts[0].cfg
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(singlePointHeap + int64(c.Nodes)*int64(c.Slots)*perSlotHeap)
}

// singlePointHeap and perSlotHeap make the heap limit of a one-point sweep
// (setGC): a late-binding node monitor with one slot takes about 1.5 KB.
const (
	singlePointHeap = 1 << 30
	perSlotHeap     = 16 << 10
)

// AddFlags declares the flags of `sparrow sim` that say how it prints on fs,
// with their defaults.
func (o *Output) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.JSON, "json", false, "print a JSON array, one object per point, instead of the table")
	fs.StringVar(&o.Plot, "plot", "", "also write a plot of mean response time vs load per policy, with the optimal line, to this file (.svg or .png)")
	fs.BoolVar(&o.ZeroWait, "zero-wait", false, "print the Table 2 comparison: closed-form vs simulated probability that a job has zero wait")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile (pprof format) of the whole run to this file")
}
