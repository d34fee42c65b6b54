package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/coordinator"
	"github.com/sparrowfleet/sparrow/core/locality"
)

// TestCoordinatorLocalityFlags: the locality flags take Quincy's units,
// default to its weights, and refuse nonsense; every coordinator flag has
// help.
func TestCoordinatorLocalityFlags(t *testing.T) {
	parse := func(args ...string) (locality.Params, error) {
		var l localityFlags
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		l.register(fs)
		if err := fs.Parse(args); err != nil {
			return locality.Params{}, err
		}
		return l.params()
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
	cmd := newCoordinatorCmd()
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if strings.TrimSpace(f.Usage) == "" {
			t.Errorf("coordinator --%s has no help", f.Name)
		}
	})
	if cmd.Flags().Lookup("locality") == nil {
		t.Fatal("no --locality flag")
	}
}

func TestCoordinatorStatusLocalityJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := coordinatorStatus(coordinator.GuidanceStatus{Version: 1, Users: map[string]coordinator.UserShare{},
		Locality: &coordinator.LocalityStatus{Version: 9, At: at, Solve: 3 * time.Millisecond, Nodes: 40, TaskMillis: 120,
			Local: 30, Rack: 5, Core: 1, Cluster: 50, Racks: map[string]int64{"r1": 50}, Bytes: 200, Sent: 4, SentBytes: 800}})
	b, err := json.Marshal(st.Locality)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":9,"at":"2026-01-02T03:04:05Z","solve_seconds":0.003,"nodes":40,"task_ms":120,"local":30,"rack":5,"core":1,` +
		`"cluster":50,"racks":{"r1":50},"bytes":200,"sent":4,"sent_bytes":800,"send_failures":0}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}
