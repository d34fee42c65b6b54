package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimFairnessCmdJSON(t *testing.T) {
	dir := t.TempDir()
	rmse, resp := filepath.Join(dir, "r.svg"), filepath.Join(dir, "c.svg")
	cmd := newSimFairnessCmd()
	var o, e bytes.Buffer
	cmd.SetOut(&o)
	cmd.SetErr(&e)
	cmd.SetArgs([]string{"--nodes", "40", "--slots", "2", "--jobs", "15", "--duration", "100", "--task-mean", "3",
		"--seeds", "2", "--json", "--plot-rmse", rmse, "--plot-response", resp})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Runs []struct {
			Seed     uint64           `json:"seed"`
			Policies []map[string]any `json:"policies"`
		} `json:"runs"`
		Summary []map[string]any `json:"summary"`
	}
	if err := json.Unmarshal(o.Bytes(), &out); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, o.String())
	}
	if len(out.Runs) != 2 || out.Runs[1].Seed != 2 || len(out.Summary) != 4 {
		t.Fatalf("got %d runs (second seed %v) and %d summaries, want 2 runs and 4 policies", len(out.Runs), out.Runs[1].Seed, len(out.Summary))
	}
	for i, want := range []string{"fair", "choosy", "choosy-exact", "offline"} {
		if out.Summary[i]["policy"] != want {
			t.Errorf("summary %d is %v, want %s", i, out.Summary[i]["policy"], want)
		}
	}
	if v := out.Summary[3]["rmse_vs_offline_mean_pct"]; v != 0.0 {
		t.Errorf("offline's RMSE against itself = %v, want 0", v)
	}
	if !strings.Contains(e.String(), "offline      done") {
		t.Errorf("progress missing from stderr:\n%s", e.String())
	}
	for _, p := range []string{rmse, resp} {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte(">choosy<")) {
			t.Errorf("plot %s: %v", p, err)
		}
	}
}

func TestSimFairnessCmdRejects(t *testing.T) {
	for _, args := range [][]string{
		{"--policy", "nope"},
		{"--seeds", "0"},
		{"--nodes", "0"},
		{"--plot-rmse", "x.txt"},
	} {
		cmd := newSimFairnessCmd()
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs(args)
		if err := cmd.Execute(); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}
