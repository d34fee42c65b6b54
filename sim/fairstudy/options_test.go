package fairstudy

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/sim/constrained"
)

// TestOptionsRejects: bad settings fail before any run, naming the flag
// or the setting.
func TestOptionsRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"--policy nope", func(o *Options) { o.Policy = "nope" }, "--policy"},
		{"--seeds 0", func(o *Options) { o.Seeds = 0 }, "--seeds"},
		{"--nodes 0", func(o *Options) { o.Base.Nodes = 0 }, "nodes"},
		{"--plot-rmse x.txt", func(o *Options) { o.PlotRMSE = "x.txt" }, ".svg or .png"},
		{"--plot-response x.gif", func(o *Options) { o.PlotResponse = "x.gif" }, ".svg or .png"},
	} {
		var o Options
		o.AddFlags(pflag.NewFlagSet("fairness", pflag.ContinueOnError))
		c.edit(&o)
		var out, progress bytes.Buffer
		if err := o.Run(&out, &progress); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}

// TestOptionsJSONConfig: the JSON records the settings in the flags'
// units, the round trip in ms.
func TestOptionsJSONConfig(t *testing.T) {
	var o Options
	fs := pflag.NewFlagSet("fairness", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--rtt", "2", "--policy", "fair", "--json", "--nodes", "40", "--jobs", "10", "--duration", "60"}); err != nil {
		t.Fatal(err)
	}
	want := constrained.DefaultConfig()
	want.Nodes, want.Jobs, want.Duration = 40, 10, 60
	if !reflect.DeepEqual(o.Base, want) {
		t.Fatalf("base %+v, want %+v", o.Base, want)
	}
	var out, progress bytes.Buffer
	if err := o.Run(&out, &progress); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Config map[string]any `json:"config"`
		Runs   []any          `json:"runs"`
	}
	if err := json.Unmarshal(out.Bytes(), &j); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if j.Config["rtt_ms"] != 2.0 || j.Config["nodes"] != 40.0 || j.Config["seeds"] != 1.0 || len(j.Runs) != 1 {
		t.Errorf("config %v, %d runs", j.Config, len(j.Runs))
	}
}
