package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func execSimCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newSimCmd()
	var o, e bytes.Buffer
	cmd.SetOut(&o)
	cmd.SetErr(&e)
	cmd.SetArgs(args)
	err = cmd.Execute()
	return o.String(), e.String(), err
}

// TestSimCmdTablesAndErrors runs the command through its flags: the
// tables it prints, and the flag each bad setting is named by (the sweep
// itself is tested in sim/sweep).
func TestSimCmdTablesAndErrors(t *testing.T) {
	out, _, err := execSimCmd(t, "--nodes", "50", "--tasks", "5", "--jobs", "50", "--load", "0.5", "--zero-wait", "--policy", "random,batch,late")
	if err != nil || !strings.Contains(out, "batch formula") || !strings.Contains(out, "late sim") {
		t.Errorf("zero-wait table: %v\n%s", err, out)
	}
	out, _, err = execSimCmd(t, "--nodes", "50", "--tasks", "5", "--jobs", "50", "--load", "0.5", "--policy", "late", "--probe-ratio", "1.5,2")
	if err != nil || !strings.Contains(out, "late d=1.5") || !strings.Contains(out, "mean_ms") {
		t.Errorf("table: %v\n%s", err, out)
	}
	trace := filepath.Join(t.TempDir(), "trace")
	os.WriteFile(trace, []byte("10\nfoo\n"), 0o644)
	for args, want := range map[string]string{
		"--policy nope":                  "unknown policy",
		"--load 0.5,1.2":                 "load must be in (0, 1)",
		"--load x":                       "--load: \"x\" is not a number",
		"--dist weibull":                 "unknown duration distribution",
		"--dist trace":                   "--dist trace needs --trace FILE",
		"--trace " + trace:               ":2: \"foo\" is not a duration",
		"--trace /nonexistent/file":      "no such file",
		"--warmup abc":                   "--warmup",
		"--warmup 10%,bogus=3":           "unknown policy",
		"--probe-ratio 0.5":              "probe ratio 0.5 is below 1",
		"--dist pareto --pareto-alpha 1": "pareto shape alpha",
		"--cancel --policy random":       "--cancel only applies",
		"--parallel 0":                   "--parallel must be",
		"--nodes 0":                      "nodes must be",
		"--long-mean 5":                  "--long-mean needs --long-frac",
		"--pareto-alpha 3":               "--pareto-alpha only applies",
		"--policy batch --nodes 10":      "must not exceed nodes",
		"--dist exp --trace " + trace:    "--trace needs --dist trace",
		"--jobs 0":                       "--jobs must be",
		"--load 0.5 --probe-ratio 2,2":   "listed twice",
		"--policy late --long-frac 0.5 --dist trace --trace " + trace: ":2:",
	} {
		_, _, err := execSimCmd(t, strings.Fields(args)...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want error containing %q", args, err, want)
		}
	}
}
