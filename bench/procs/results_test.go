package procs

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
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

func TestOptionsFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []float64
		err  string
	}{
		{args: nil, want: []float64{200}},
		{args: []string{"--rates", "50,200"}, want: []float64{50, 200}},
		{args: []string{"--rates", "0"}, err: `--rates: "0" is not a positive number`},
		{args: []string{"--rates", ","}, err: "--rates: no values"},
	} {
		var o Options
		fs := pflag.NewFlagSet("procs", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := o.Validate()
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%v: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(o.rates, c.want) || o.Out != "bin/bench-procs" || o.NodeMonitors != 10 {
			t.Errorf("%v: rates %v, out %q, nodes %d, %v", c.args, o.rates, o.Out, o.NodeMonitors, err)
		}
	}
}
