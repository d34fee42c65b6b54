package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func runPolicyCmd(t *testing.T, cmd *cobra.Command, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var o, e bytes.Buffer
	cmd.SetOut(&o)
	cmd.SetErr(&e)
	cmd.SetArgs(args)
	err = cmd.Execute()
	return o.String(), e.String(), err
}

func TestBenchPolicyFlagErrors(t *testing.T) {
	cases := []struct {
		cmd  func() *cobra.Command
		args []string
		want string
	}{
		{newBenchFairnessCmd, []string{"--weights", "1"}, "w0:w1"},
		{newBenchFairnessCmd, []string{"--weights", "1:0"}, "> 0"},
		{newBenchFairnessCmd, []string{"--plot", "x.pdf"}, ".svg or .png"},
		{newBenchFairnessCmd, []string{"--user1-loads", "0,-1"}, "--user1-loads"},
		{newBenchFairnessCmd, []string{"--interval", "0s"}, "--interval"},
		{newBenchPriorityCmd, []string{"--hp-load", "0"}, "--hp-load"},
		{newBenchPriorityCmd, []string{"--warmup", "20s"}, "--warmup"},
		{newBenchPriorityCmd, []string{"--nodes", "0"}, "--nodes"},
		{newBenchConstraintsCmd, []string{"--attr", "gpu"}, "key=value"},
		{newBenchConstraintsCmd, []string{"--attr-fraction", "1.5"}, "--attr-fraction"},
		{newBenchConstraintsCmd, []string{"--task-duration", "0s"}, "--task-duration"},
		{newBenchConstraintsCmd, []string{"extra"}, "unknown command"},
	}
	for _, c := range cases {
		_, _, err := runPolicyCmd(t, c.cmd(), c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one mentioning %q", c.args, err, c.want)
		}
	}
}

func TestBenchFairnessCmdSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a loopback fleet; skipped with -short")
	}
	plot := filepath.Join(t.TempDir(), "f.png")
	out, errOut, err := runPolicyCmd(t, newBenchFairnessCmd(), "--schedulers", "1", "--nodes", "3", "--slots", "2",
		"--tasks", "3", "--task-duration", "50ms", "--interval", "1500ms", "--user1-loads", "0,0.5",
		"--weights", "1:3", "--json", "--plot", plot)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var r struct {
		Experiment string `json:"experiment"`
		Params     struct {
			Weights []float64 `json:"weights"`
		} `json:"params"`
		Intervals []struct {
			Measured []float64 `json:"measured_mean"`
		} `json:"intervals"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		t.Fatalf("last line is not JSON: %v\n%s", err, out)
	}
	if r.Experiment != "fairness" || len(r.Params.Weights) != 2 || r.Params.Weights[1] != 3 || len(r.Intervals) != 2 {
		t.Fatalf("JSON: %+v", r)
	}
	if !strings.Contains(out, "mean absolute deviation") || !strings.Contains(errOut, "user1:") {
		t.Errorf("table or progress missing:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	f, err := os.Open(plot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatalf("plot is not a PNG: %v", err)
	}
}
