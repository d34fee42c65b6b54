package daemon

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/core/locality"
)

// TestLocalityFlags: the locality flags take Quincy's units, default to
// its weights, and refuse nonsense.
func TestLocalityFlags(t *testing.T) {
	parse := func(args ...string) (locality.Params, error) {
		var l LocalityFlags
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		l.Register(fs)
		if err := fs.Parse(args); err != nil {
			return locality.Params{}, err
		}
		return l.Params()
	}
	p, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	if p != locality.DefaultParams() {
		t.Fatalf("defaults %+v, want %+v", p, locality.DefaultParams())
	}
	p, err = parse("--wait-weight", "0.25", "--rack-cost-per-gb", "1.5", "--core-cost-per-gb", "20", "--locality-input-bytes", "1000000000")
	if err != nil {
		t.Fatal(err)
	}
	if p.WaitPerSecond != 250 || p.RackPerGB != 1500 || p.CorePerGB != 20000 || p.InputBytes != 1e9 || p.ProbeRatio != 2 {
		t.Fatalf("params %+v", p)
	}
	for _, bad := range [][]string{{"--wait-weight", "-1"}, {"--core-cost-per-gb", "NaN"}, {"--locality-input-bytes", "-5"}, {"--locality-probe-ratio", "0.5"}} {
		if _, err := parse(bad...); err == nil {
			t.Errorf("%q accepted", bad)
		} else {
			t.Log(err)
		}
	}
}
