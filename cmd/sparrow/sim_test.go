package main

import (
	"bytes"
	"encoding/json"
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

func TestSimCmdJSON(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "p.svg")
	out, errOut, err := execSimCmd(t, "--nodes", "50", "--tasks", "5", "--jobs", "100",
		"--load", "0.5,0.8", "--policy", "late,random", "--json", "--plot", svg, "--parallel", "2")
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("stdout is not a JSON array: %v\n%s", err, out)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	for _, k := range []string{"policy", "load", "jobs", "median_ms", "mean_ms", "p95_ms", "p99_ms", "optimal_ms", "tasks_per_sec", "events_per_sec"} {
		if _, ok := rows[0][k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	// In --policy order, then load order.
	if rows[0]["policy"] != "late" || rows[3]["policy"] != "random" || rows[1]["load"] != 0.8 {
		t.Errorf("rows out of order: %v %v %v", rows[0]["policy"], rows[3]["policy"], rows[1]["load"])
	}
	if _, ok := rows[2]["zero_wait_closed_form"]; !ok {
		t.Error("random row lacks its closed form")
	}
	if _, ok := rows[0]["zero_wait_closed_form"]; ok {
		t.Error("late row has a closed form")
	}
	if strings.Count(errOut, "\n[") < 3 || !strings.Contains(errOut, "points in") {
		t.Errorf("progress lines missing from stderr:\n%s", errOut)
	}
	b, err := os.ReadFile(svg)
	// An XML declaration comes first, then the <svg> root.
	if err != nil || !bytes.HasPrefix(b, []byte("<?xml")) || !bytes.Contains(b, []byte("<svg")) ||
		!bytes.Contains(b, []byte(">optimal<")) || !bytes.Contains(b, []byte(">late<")) {
		t.Errorf("plot: %v\n%.200s", err, b)
	}
}

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
