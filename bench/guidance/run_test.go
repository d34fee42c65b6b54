package guidance

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/internal/fairgossip"
	"github.com/sparrowfleet/sparrow/internal/report"
)

func TestParseGossip(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		err  string
	}{
		{in: "", want: nil},
		{in: "100, 1000", want: []int{100, 1000}},
		{in: "1", err: `--gossip: "1" is not a member count >= 2`},
		{in: "x", err: `--gossip: "x" is not a member count >= 2`},
	} {
		got, err := ParseGossip(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%q: %v, %v", c.in, got, err)
		}
		for _, n := range c.want {
			if !got[n] {
				t.Errorf("%q: %d missing from %v", c.in, n, got)
			}
		}
	}
}

// TestMeasureAllReport measures the smallest size for two periods and
// prints it as `sparrow bench coordinator --json` does: the table, then
// the rows as one JSON array on the last line.
func TestMeasureAllReport(t *testing.T) {
	cfg := Config{Periods: 2, Slots: 8, Churn: 0.1, RetransmitMult: 4, SnapshotEvery: fairgossip.DefaultSnapshotEvery,
		TableEvery: fairgossip.DefaultTableEvery, GossipPeriods: 1, Seed: 1}
	var progress, out bytes.Buffer
	rep, err := MeasureAll([]Size{{100, 4, 20}}, nil, cfg, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.Print(&out, rep, report.TableThenJSON); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
	}
	if !strings.HasPrefix(lines[0], "churn 10% of users per period") || !strings.Contains(progress.String(), "100 nodes, 4 types, 20 users: 2 periods") {
		t.Errorf("table:\n%s\nprogress:\n%s", out.String(), progress.String())
	}
}

// TestOptionsRejects: the lists and the settings are checked, with the
// flag named, before anything is measured.
func TestOptionsRejects(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sizes", "x"}, `--sizes: "x" is not nodes:types:users`},
		{[]string{"--gossip", "1"}, `--gossip: "1" is not a member count >= 2`},
		{[]string{"--periods", "0"}, "--periods must be at least 1"},
		{[]string{"--churn", "2"}, "--churn must be in [0, 1]"},
	} {
		var o Options
		fs := pflag.NewFlagSet("coordinator", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		var out, progress bytes.Buffer
		if err := o.Run(&out, &progress); err == nil || err.Error() != c.want {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
		if out.Len() > 0 || progress.Len() > 0 {
			t.Errorf("%v: wrote %q and %q before failing", c.args, out.String(), progress.String())
		}
	}
}
