package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const googSlice = "../../internal/jobtrace/testdata/goog_slice.tr"

func TestSimJobTraceJSON(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "cdf.svg")
	out, errOut, err := execSimCmd(t, "--job-trace", googSlice, "--nodes", "400", "--cutoff", "1129.532",
		"--short-share", "0.17", "--load", "0.9", "--json", "--plot", svg)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d JSON lines, want one per policy:\n%s", len(lines), out)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		var row map[string]any
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		seen[row["policy"].(string)] = true
		for _, class := range []string{"short", "long"} {
			c, ok := row[class].(map[string]any)
			if !ok {
				t.Fatalf("row lacks %q: %s", class, l)
			}
			for _, k := range []string{"n", "mean", "p50", "p90", "p99"} {
				if _, ok := c[k]; !ok {
					t.Errorf("%s lacks %q", class, k)
				}
			}
		}
		if row["load"] != 0.9 || row["trace_load"].(float64) <= 0 {
			t.Errorf("loads: %v %v", row["load"], row["trace_load"])
		}
	}
	if !seen["ideal"] || !seen["sparrow"] || !seen["aware"] {
		t.Errorf("policies %v", seen)
	}
	for _, p := range []string{svg, filepath.Join(filepath.Dir(svg), "cdf-long.svg")} {
		if b, err := os.ReadFile(p); err != nil || !strings.Contains(string(b), "<svg") {
			t.Errorf("plot %s: %v", p, err)
		}
	}
}

func TestSimJobTraceTableAndErrors(t *testing.T) {
	out, errOut, err := execSimCmd(t, "--job-trace", googSlice, "--nodes", "300", "--policy", "sparrow,ideal", "--time-scale", "10")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	for _, want := range []string{"p99/ideal", "sparrow", "short", "long", "time scale 10"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.tr")
	if err := os.WriteFile(bad, []byte("1 2 1.5 1 2\n2 2 1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--job-trace", bad}, "bad.tr:2: field d_2"},
		{[]string{"--job-trace", googSlice, "--tasks", "5"}, "--tasks does not apply"},
		{[]string{"--job-trace", googSlice, "--policy", "late"}, "unknown trace policy"},
		{[]string{"--job-trace", googSlice, "--time-scale", "0"}, "--time-scale"},
		{[]string{"--job-trace", filepath.Join(t.TempDir(), "none.tr")}, "no such file"},
	} {
		_, _, err := execSimCmd(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}
