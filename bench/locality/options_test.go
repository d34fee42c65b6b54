package locality

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOptionsValidate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ok := func() Options {
		o := Options{BlockMiB: 64, RackMiBps: 640, CoreMiBps: 64 / 0.6, Modes: "strict, delay,guided", OutDir: filepath.Join(dir, "out")}
		o.Workload = WorkloadConfig{Topology: Topology{Nodes: 8, Racks: 2}, Slots: 1, Blocks: 40, ZipfS: 1.1, TasksPerJob: 10,
			Load: 0.7, CPU: 200 * time.Millisecond, Duration: time.Minute}
		o.Schedulers, o.Period, o.Drain, o.RackCost, o.CoreCost = 1, time.Second, 30*time.Second, 1, 2
		return o
	}
	for _, c := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{name: "defaults", edit: func(*Options) {}},
		{name: "unknown mode", edit: func(o *Options) { o.Modes = "bogus" }, want: `--modes: unknown mode "bogus"`},
		{name: "no nodes", edit: func(o *Options) { o.Workload.Topology.Nodes = 0 }, want: "--nodes, --racks"},
		{name: "no schedulers", edit: func(o *Options) { o.Schedulers = 0 }, want: "--schedulers"},
		{name: "no blocks", edit: func(o *Options) { o.Workload.Blocks = 0 }, want: "--blocks"},
		{name: "empty blocks", edit: func(o *Options) { o.BlockMiB = 0 }, want: "--block-mib"},
		{name: "negative zipf", edit: func(o *Options) { o.Workload.ZipfS = -1 }, want: "--zipf"},
		{name: "no load", edit: func(o *Options) { o.Workload.Load = 0 }, want: "--load"},
		{name: "no CPU", edit: func(o *Options) { o.Workload.CPU = 0 }, want: "--cpu"},
		{name: "negative delay", edit: func(o *Options) { o.DelayThreshold = -time.Second }, want: "--delay-threshold"},
		{name: "no period", edit: func(o *Options) { o.Period = 0 }, want: "--period"},
		{name: "no drain", edit: func(o *Options) { o.Drain = 0 }, want: "--drain"},
		{name: "no rack bandwidth", edit: func(o *Options) { o.RackMiBps = 0 }, want: "--rack-mibps"},
		{name: "no rack cost", edit: func(o *Options) { o.RackCost = 0 }, want: "--rack-cost"},
		{name: "huge core cost", edit: func(o *Options) { o.CoreCost = 2e6 }, want: "--core-cost"},
		{name: "out dir under a file", edit: func(o *Options) { o.OutDir = filepath.Join(file, "x") }, want: "--out-dir"},
	} {
		o := ok()
		c.edit(&o)
		err := o.Validate()
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(o.modes) != 3 || o.Workload.BlockBytes != 64<<20 || o.Read.RackBandwidth != 640<<20 {
			t.Errorf("%s: modes %v, block %d B, rack %g B/s", c.name, o.modes, o.Workload.BlockBytes, o.Read.RackBandwidth)
		}
	}
}
