package main

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/core/shortjobs"
)

// parseShortJobFlags returns the policy's settings a scheduler's or a
// node monitor's flags give for args, failing the test on an error.
func parseShortJobFlags(t *testing.T, scheduler bool, args []string) *shortjobs.Config {
	t.Helper()
	var f shortJobFlags
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	f.register(fs, scheduler)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	c, err := f.config()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// --long-steer is on by default with --short-jobs, on schedulers and node
// monitors alike, and can be turned off.
func TestLongSteerFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"--short-jobs"}, true},
		{[]string{"--short-jobs", "--long-steer=false"}, false},
		{[]string{"--short-jobs", "--long-steer"}, true},
	} {
		for _, scheduler := range []bool{true, false} {
			if c := parseShortJobFlags(t, scheduler, tc.args); c.LongSteer != tc.want {
				t.Errorf("scheduler=%v %v: LongSteer %v, want %v", scheduler, tc.args, c.LongSteer, tc.want)
			}
		}
	}
}

// --short-unestimated takes tasks (the default) or history on schedulers,
// and a bad name is refused with the flag named.
func TestShortUnestimatedFlag(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    shortjobs.Unestimated
		wantErr bool
	}{
		{[]string{"--short-jobs"}, shortjobs.UnestimatedByTasks, false},
		{[]string{"--short-jobs", "--short-unestimated", "history"}, shortjobs.UnestimatedByHistory, false},
		{[]string{"--short-jobs", "--short-unestimated", "guess"}, 0, true},
	} {
		var f shortJobFlags
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		f.register(fs, true)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		c, err := f.config()
		if tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), "--short-unestimated") {
				t.Errorf("%v: error %v, want one naming --short-unestimated", tc.args, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if c.Unestimated != tc.want {
			t.Errorf("%v: Unestimated %v, want %v", tc.args, c.Unestimated, tc.want)
		}
	}
}

// Pulls run by default with --short-jobs, after --short-pull-after, on
// schedulers and node monitors alike; --short-pull=false turns them off;
// without --short-jobs there are none, and asking for them is an error
// naming the flag.
func TestShortPullFlag(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    time.Duration
		wantErr bool
	}{
		{[]string{"--short-jobs"}, time.Second, false},
		{[]string{"--short-jobs", "--short-pull-after", "200ms"}, 200 * time.Millisecond, false},
		{[]string{"--short-jobs", "--short-pull=false"}, 0, false},
		{nil, 0, false},
		{[]string{"--short-pull"}, 0, true},
		{[]string{"--short-jobs", "--short-pull-after", "0s"}, 0, true},
	} {
		for _, scheduler := range []bool{true, false} {
			var f shortJobFlags
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			f.register(fs, scheduler)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			got, err := f.pullDelay()
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "--short-pull") {
					t.Errorf("scheduler=%v %v: error %v, want one naming --short-pull", scheduler, tc.args, err)
				}
				continue
			}
			if err != nil || got != tc.want {
				t.Errorf("scheduler=%v %v: pull delay %v, %v; want %v", scheduler, tc.args, got, err, tc.want)
			}
		}
	}
}

// --short-class-first is a node monitor's flag, off by default; schedulers
// have none, the queues it orders being the node monitors'.
func TestShortClassFirstFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"--short-jobs"}, false},
		{[]string{"--short-jobs", "--short-class-first"}, true},
	} {
		if c := parseShortJobFlags(t, false, tc.args); c.ClassFirst != tc.want {
			t.Errorf("%v: ClassFirst %v, want %v", tc.args, c.ClassFirst, tc.want)
		}
	}
	var f shortJobFlags
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	f.register(fs, true)
	if fs.Lookup("short-class-first") != nil {
		t.Error("schedulers register --short-class-first; it orders node monitors' queues only")
	}
}
