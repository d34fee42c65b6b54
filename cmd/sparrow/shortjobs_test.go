package main

import (
	"testing"

	"github.com/spf13/pflag"
)

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
			var f shortJobFlags
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			f.register(fs, scheduler)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			c, err := f.config()
			if err != nil {
				t.Fatal(err)
			}
			if c.LongSteer != tc.want {
				t.Errorf("scheduler=%v %v: LongSteer %v, want %v", scheduler, tc.args, c.LongSteer, tc.want)
			}
		}
	}
}
