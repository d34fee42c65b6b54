package live

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestOptionsValidate(t *testing.T) {
	common := Common{Fleet: FleetConfig{Schedulers: 1, NodeMonitors: 4, Slots: 2}, TasksPerJob: 4, TaskDuration: 50 * time.Millisecond}
	fair := FairnessOptions{Interval: time.Second, Bin: time.Second, User0Load: 1, User1Loads: []float64{0, 0.5}, WeightSpec: "1:1"}
	prio := PriorityOptions{HPLoad: 0.25, LPLoads: []float64{0, 1}, Duration: 15 * time.Second, Drain: time.Second, Warmup: time.Second}
	cons := ConstraintsOptions{AttrKey: "gpu", AttrValue: "yes", AttrFraction: 0.2, ConstrainedLoad: 0.5, FreeLoad: 0.5, Duration: 30 * time.Second, Warmup: time.Second}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"common ok", common.Validate(), ""},
		{"fairness ok", func() error { o := fair; return o.Validate() }(), ""},
		{"priority ok", prio.Validate(), ""},
		{"constraints ok", func() error { o := cons; return o.Validate() }(), ""},
		{"no node monitors", func() error { c := common; c.Fleet.NodeMonitors = 0; return c.Validate() }(), "--nodes"},
		{"no schedulers", func() error { c := common; c.Fleet.Schedulers = 0; return c.Validate() }(), "--schedulers"},
		{"no slots", func() error { c := common; c.Fleet.Slots = 0; return c.Validate() }(), "--slots"},
		{"no tasks", func() error { c := common; c.TasksPerJob = 0; return c.Validate() }(), "--tasks"},
		{"instant tasks", func() error { c := common; c.TaskDuration = 0; return c.Validate() }(), "--task-duration"},
		{"negative user1 load", func() error { o := fair; o.User1Loads = []float64{0, -1}; return o.Validate() }(), "--user1-loads"},
		{"negative user0 load", func() error { o := fair; o.User0Load = -1; return o.Validate() }(), "--user0-load"},
		{"no interval", func() error { o := fair; o.Interval = 0; return o.Validate() }(), "--interval"},
		{"no bin", func() error { o := fair; o.Bin = 0; return o.Validate() }(), "--bin"},
		{"no HP load", func() error { o := prio; o.HPLoad = 0; return o.Validate() }(), "--hp-load"},
		{"negative LP load", func() error { o := prio; o.LPLoads = []float64{-1}; return o.Validate() }(), "--lp-loads"},
		{"warmup past the window", func() error { o := prio; o.Warmup = 20 * time.Second; return o.Validate() }(), "--warmup"},
		{"negative drain", func() error { o := prio; o.Drain = -time.Second; return o.Validate() }(), "--drain"},
		{"attribute on too many nodes", func() error { o := cons; o.AttrFraction = 1.5; return o.Validate() }(), "--attr-fraction"},
		{"negative free load", func() error { o := cons; o.FreeLoad = -1; return o.Validate() }(), "--constrained-load/--free-load"},
		{"constraints warmup", func() error { o := cons; o.Warmup = time.Minute; return o.Validate() }(), "--warmup"},
		{"one weight", func() error { o := fair; o.WeightSpec = "1"; return o.Validate() }(), "w0:w1"},
		{"zero weight", func() error { o := fair; o.WeightSpec = "1:0"; return o.Validate() }(), "> 0"},
		{"attribute without value", func() error { o := cons; o.Attr = "gpu"; return o.Validate() }(), "key=value"},
		{"empty weights", func() error { o := fair; o.WeightSpec = ""; return o.Validate() }(), "w0:w1"},
		{"empty attribute", func() error { o := cons; o.AttrKey, o.AttrValue = "", ""; return o.Validate() }(), "key=value"},
		{"weights given as numbers", func() error { o := fair; o.WeightSpec, o.Weights = "", [2]float64{1, 3}; return o.Validate() }(), ""},
		{"plot format", func() error { c := Command{Common: common, Plot: "x.pdf"}; return c.Validate() }(), "--plot x.pdf: want a .svg or .png"},
		{"command's common", func() error { c := Command{Common: common}; c.TaskDuration = 0; return c.Validate() }(), "--task-duration"},
		{"command ok", func() error { c := Command{Common: common, Plot: "x.png"}; return c.Validate() }(), ""},
	} {
		if c.want == "" {
			if c.err != nil {
				t.Errorf("%s: %v", c.name, c.err)
			}
		} else if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, c.err, c.want)
		}
	}
}

func TestParseAttr(t *testing.T) {
	for _, c := range []struct {
		in, key, val string
		ok           bool
	}{
		{"gpu=yes", "gpu", "yes", true},
		{"rack=r=1", "rack", "r=1", true},
		{"gpu", "", "", false},
		{"=yes", "", "", false},
		{"gpu=", "", "", false},
	} {
		k, v, err := ParseAttr(c.in)
		if (err == nil) != c.ok || k != c.key || v != c.val {
			t.Errorf("ParseAttr(%q) = %q, %q, %v", c.in, k, v, err)
		}
		if err != nil && !strings.Contains(err.Error(), "key=value") {
			t.Errorf("ParseAttr(%q): error %v does not say what it wants", c.in, err)
		}
	}
}

// TestAddFlags: the flags' defaults are the experiments' and the text
// forms are parsed by Validate.
func TestAddFlags(t *testing.T) {
	var c Command
	var f FairnessOptions
	var k ConstraintsOptions
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	c.AddFlags(fs, 20)
	f.AddFlags(fs)
	ks := pflag.NewFlagSet("constraints", pflag.ContinueOnError)
	k.AddFlags(ks)
	if err := fs.Parse([]string{"--weights", "1:3", "--slots", "2"}); err != nil {
		t.Fatal(err)
	}
	if err := ks.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil || c.Fleet.NodeMonitors != 20 || c.Fleet.Slots != 2 || c.TaskDuration != 100*time.Millisecond {
		t.Errorf("common %+v: %v", c.Common, err)
	}
	if err := f.Validate(); err != nil || f.Weights != [2]float64{1, 3} || len(f.User1Loads) != 5 {
		t.Errorf("fairness %+v: %v", f, err)
	}
	if err := k.Validate(); err != nil || k.AttrKey != "gpu" || k.AttrValue != "yes" || k.Queue != "fifo" {
		t.Errorf("constraints %+v: %v", k, err)
	}
}
