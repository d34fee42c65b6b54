package procs

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunRatesNamesTheFailingPoint: a point that fails says its rate and
// where its logs are, before any fleet starts for an invalid config.
func TestRunRatesNamesTheFailingPoint(t *testing.T) {
	dir := t.TempDir()
	var progress bytes.Buffer
	_, err := RunRates(context.Background(), Config{Net: "127.60"}, []float64{50, 200}, dir, &progress)
	want := "rate 50 jobs/s (logs in " + filepath.Join(dir, "rate-50") + "): no sparrow binary"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

func TestResultsWriteTable(t *testing.T) {
	rs := Results{{RateJobsPerSec: 50, TasksPerJob: 4, TasksPerSec: 199, Roles: []RoleCost{{Role: Scheduler, Processes: 1, CPUPerTaskUs: 120}}}}
	var a, b bytes.Buffer
	if err := rs.WriteTable(&a); err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(&b, rs); err != nil || a.String() != b.String() || !strings.Contains(a.String(), "200") {
		t.Errorf("Results.WriteTable:\n%s\nWriteTable:\n%s", a.String(), b.String())
	}
}
