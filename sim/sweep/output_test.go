package sweep

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// simDefaults is a sweep with sparrow sim's flag defaults, on two
// goroutines.
func simDefaults() Spec {
	var s Spec
	s.AddFlags(pflag.NewFlagSet("sim", pflag.ContinueOnError))
	s.Parallel = 2
	return s
}

// TestRunAndWriteTables prints the zero-wait comparison and the table.
func TestRunAndWriteTables(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Spec)
		o    Output
		want []string
	}{
		{"zero wait", func(s *Spec) { s.Policies = "random,batch,late" }, Output{ZeroWait: true}, []string{"batch formula", "late sim"}},
		{"table", func(s *Spec) { s.Policies, s.ProbeRatios = "late", "1.5,2" }, Output{}, []string{"late d=1.5", "mean_ms"}},
		{"json", func(s *Spec) { s.Policies = "late" }, Output{JSON: true}, []string{`"policy": "late"`}},
	} {
		s := simDefaults()
		s.Nodes, s.Tasks, s.Jobs, s.Loads = 50, 5, 50, "0.5"
		c.edit(&s)
		var out, progress bytes.Buffer
		if err := s.RunAndWrite(c.o, &out, &progress); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", c.name, w, out.String())
			}
		}
	}
}

func TestRunAndWritePlotAndProfile(t *testing.T) {
	dir := t.TempDir()
	s := simDefaults()
	s.Policies, s.Nodes, s.Tasks, s.Jobs, s.Loads = "late", 50, 5, 50, "0.5"
	o := Output{Plot: filepath.Join(dir, "p.svg"), CPUProfile: filepath.Join(dir, "cpu.pprof")}
	var out, progress bytes.Buffer
	if err := s.RunAndWrite(o, &out, &progress); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{o.Plot, o.CPUProfile} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", p, err)
		}
	}
	if !strings.Contains(progress.String(), "wrote "+o.Plot) {
		t.Errorf("progress does not name the plot:\n%s", progress.String())
	}
	o = Output{Plot: filepath.Join(dir, "p.gif")}
	if err := s.RunAndWrite(o, &out, &progress); err == nil || !strings.Contains(err.Error(), "--plot") {
		t.Errorf("a .gif plot: error %v", err)
	}
}

// TestSpecFlagErrors names the flag each bad setting of sparrow sim is
// given by; given lists the flags set, as the command reports them.
func TestSpecFlagErrors(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "trace")
	if err := os.WriteFile(trace, []byte("10\nfoo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args  string
		edit  func(*Spec)
		given []string
		want  string
	}{
		{"--policy nope", func(s *Spec) { s.Policies = "nope" }, nil, "unknown policy"},
		{"--load 0.5,1.2", func(s *Spec) { s.Loads = "0.5,1.2" }, nil, "load must be in (0, 1)"},
		{"--load x", func(s *Spec) { s.Loads = "x" }, nil, "--load: \"x\" is not a number"},
		{"--dist weibull", func(s *Spec) { s.Dist = "weibull" }, []string{"dist"}, "unknown duration distribution"},
		{"--dist trace", func(s *Spec) { s.Dist = "trace" }, []string{"dist"}, "--dist trace needs --trace FILE"},
		{"--trace FILE", func(s *Spec) { s.Trace = trace }, nil, ":2: \"foo\" is not a duration"},
		{"--trace /nonexistent/file", func(s *Spec) { s.Trace = "/nonexistent/file" }, nil, "no such file"},
		{"--warmup abc", func(s *Spec) { s.Warmup = "abc" }, nil, "--warmup"},
		{"--warmup 10%,bogus=3", func(s *Spec) { s.Warmup = "10%,bogus=3" }, nil, "unknown policy"},
		{"--probe-ratio 0.5", func(s *Spec) { s.ProbeRatios = "0.5" }, nil, "probe ratio 0.5 is below 1"},
		{"--dist pareto --pareto-alpha 1", func(s *Spec) { s.Dist, s.ParetoAlpha = "pareto", 1 }, []string{"dist", "pareto-alpha"}, "pareto shape alpha"},
		{"--cancel --policy random", func(s *Spec) { s.Cancel, s.Policies = true, "random" }, nil, "--cancel only applies"},
		{"--parallel 0", func(s *Spec) { s.Parallel = 0 }, nil, "--parallel must be"},
		{"--nodes 0", func(s *Spec) { s.Nodes = 0 }, nil, "nodes must be"},
		{"--long-mean 5", func(s *Spec) { s.LongMean = 5 }, []string{"long-mean"}, "--long-mean needs --long-frac"},
		{"--pareto-alpha 3", func(s *Spec) { s.ParetoAlpha = 3 }, []string{"pareto-alpha"}, "--pareto-alpha only applies"},
		{"--policy batch --nodes 10", func(s *Spec) { s.Policies, s.Nodes = "batch", 10 }, nil, "must not exceed nodes"},
		{"--dist exp --trace FILE", func(s *Spec) { s.Dist, s.Trace = "exp", trace }, []string{"dist"}, "--trace needs --dist trace"},
		{"--jobs 0", func(s *Spec) { s.Jobs = 0 }, nil, "--jobs must be"},
		{"--load 0.5 --probe-ratio 2,2", func(s *Spec) { s.Loads, s.ProbeRatios = "0.5", "2,2" }, nil, "listed twice"},
		{"--policy late --long-frac 0.5 --dist trace --trace FILE", func(s *Spec) {
			s.Policies, s.LongFrac, s.Dist, s.Trace = "late", 0.5, "trace", trace
		}, []string{"dist"}, ":2:"},
	} {
		s := simDefaults()
		c.edit(&s)
		s.Given = func(flag string) bool {
			for _, g := range c.given {
				if g == flag {
					return true
				}
			}
			return false
		}
		var out, progress bytes.Buffer
		err := s.RunAndWrite(Output{}, &out, &progress)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want error containing %q", c.args, err, c.want)
		}
	}
}

// TestJSONProcessCPU: a sweep of one point reports the process CPU time
// Output.ProcessCPU gives and divides its tasks by it; a sweep of several
// points, whose CPU time cannot be told apart, reports neither.
func TestJSONProcessCPU(t *testing.T) {
	for _, c := range []struct {
		loads   string
		wantCPU bool
	}{
		{"0.5", true},
		{"0.5,0.7", false},
	} {
		s := simDefaults()
		s.Policies, s.Nodes, s.Tasks, s.Jobs, s.Loads = "late", 50, 5, 50, c.loads
		o := Output{JSON: true, ProcessCPU: func() (time.Duration, error) { return 2 * time.Second, nil }}
		var out, progress bytes.Buffer
		if err := s.RunAndWrite(o, &out, &progress); err != nil {
			t.Fatal(err)
		}
		var rows []struct {
			Tasks          int64    `json:"tasks_simulated"`
			CPUSeconds     *float64 `json:"cpu_seconds"`
			TasksPerCPUSec *float64 `json:"tasks_per_cpu_sec"`
		}
		if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			switch {
			case !c.wantCPU && (r.CPUSeconds != nil || r.TasksPerCPUSec != nil):
				t.Errorf("loads %s: CPU fields in a sweep of %d points", c.loads, len(rows))
			case c.wantCPU && (r.CPUSeconds == nil || *r.CPUSeconds != 2):
				t.Errorf("loads %s: cpu_seconds %v, want 2", c.loads, r.CPUSeconds)
			case c.wantCPU && (r.TasksPerCPUSec == nil || *r.TasksPerCPUSec != float64(r.Tasks)/2):
				t.Errorf("loads %s: tasks_per_cpu_sec %v, want %d/2", c.loads, r.TasksPerCPUSec, r.Tasks)
			}
		}
	}
}
