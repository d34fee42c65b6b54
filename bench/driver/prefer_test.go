package driver

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("nm%d", i+1)
	}
	return out
}

func TestPreferencesValidate(t *testing.T) {
	ok := Preferences{Nodes: names(12), Racks: 3, Replicas: 3, Blocks: 100, Zipf: 1.1, DelayThreshold: 300 * time.Millisecond}
	for _, tc := range []struct {
		name string
		edit func(*Preferences)
		want string // substring of the error; "" for none
	}{
		{"valid", func(*Preferences) {}, ""},
		{"off", func(p *Preferences) { *p = Preferences{} }, ""},
		{"one rack", func(p *Preferences) { p.Racks = 1 }, ""},
		{"uniform popularity", func(p *Preferences) { p.Zipf = 0 }, ""},
		{"no racks", func(p *Preferences) { p.Racks = 0 }, "racks"},
		{"more racks than nodes", func(p *Preferences) { p.Racks = 13 }, "racks"},
		{"no replicas", func(p *Preferences) { p.Replicas = 0 }, "replicas"},
		{"more replicas than nodes", func(p *Preferences) { p.Replicas = 13 }, "replicas"},
		{"no blocks", func(p *Preferences) { p.Blocks = 0 }, "blocks"},
		{"negative zipf", func(p *Preferences) { p.Zipf = -1 }, "Zipf"},
		{"negative delay", func(p *Preferences) { p.DelayThreshold = -time.Millisecond }, "delay"},
		{"sub-millisecond delay", func(p *Preferences) { p.DelayThreshold = 1500 * time.Microsecond }, "delay"},
		{"negative input", func(p *Preferences) { p.InputBytes = -1 }, "input"},
		{"duplicate node", func(p *Preferences) { p.Nodes = []string{"a", "b", "a"}; p.Racks = 1 }, "twice"},
		{"empty node", func(p *Preferences) { p.Nodes = []string{"a", ""}; p.Racks = 1 }, "bad node"},
	} {
		p := ok
		p.Nodes = slices.Clone(ok.Nodes)
		tc.edit(&p)
		err := p.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

// The same seed gives the same catalogue and draws; another seed other
// ones. Every block's replicas are distinct nodes, placed as HDFS does
// when there are racks to spread over.
func TestPreferencesGenerate(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		nodes, racks, replicas int
		hdfs                   bool // first replica's rack differs from the others', which share one
	}{
		{"12 nodes, 3 racks, 3 replicas", 12, 3, 3, true},
		{"13 nodes, 4 racks, 3 replicas", 13, 4, 3, true},
		{"one rack", 6, 1, 3, false},
		{"rack smaller than the replicas", 6, 3, 4, false},
		{"one replica", 5, 2, 1, false},
		{"every node a replica", 4, 2, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Preferences{Nodes: names(tc.nodes), Racks: tc.racks, Replicas: tc.replicas, Blocks: 50, Zipf: 1.1}
			a, err := p.Generate(7, 40, 4)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := p.Generate(7, 40, 4)
			if !reflect.DeepEqual(a, b) {
				t.Fatal("the same seed gave two placements")
			}
			if c, _ := p.Generate(8, 40, 4); reflect.DeepEqual(a, c) {
				t.Error("seeds 7 and 8 gave the same placement")
			}
			if len(a.Replicas) != 50 || len(a.Block) != 40 {
				t.Fatalf("%d blocks and %d jobs, want 50 and 40", len(a.Replicas), len(a.Block))
			}
			for blk, rs := range a.Replicas {
				if len(rs) != tc.replicas {
					t.Fatalf("block %d: %d replicas, want %d", blk, len(rs), tc.replicas)
				}
				s := slices.Clone(rs)
				slices.Sort(s)
				if len(slices.Compact(s)) != len(rs) || s[0] < 0 || s[len(s)-1] >= tc.nodes {
					t.Fatalf("block %d: replicas %v not distinct nodes of 0..%d", blk, rs, tc.nodes-1)
				}
				if tc.hdfs {
					home := p.RackOf(rs[0])
					for _, n := range rs[1:] {
						if p.RackOf(n) == home || p.RackOf(n) != p.RackOf(rs[1]) {
							t.Fatalf("block %d: replicas %v in racks %d, %d, %d; want the first alone, the others in one other rack",
								blk, rs, p.RackOf(rs[0]), p.RackOf(rs[1]), p.RackOf(rs[2]))
						}
					}
				}
			}
			for j, job := range a.Block {
				if len(job) != 4 {
					t.Fatalf("job %d: %d tasks, want 4", j, len(job))
				}
				for _, blk := range job {
					if blk < 0 || blk >= 50 {
						t.Fatalf("job %d reads block %d of 50", j, blk)
					}
				}
			}
		})
	}
}

// Zipf popularity: block 0 is read most, and more with a larger exponent;
// s = 0 is uniform. The summary counts the reads and the preferences.
func TestPreferencesSkew(t *testing.T) {
	share := map[float64]float64{}
	for _, s := range []float64{0, 1.1, 2} {
		p := Preferences{Nodes: names(12), Racks: 3, Replicas: 3, Blocks: 100, Zipf: s}
		pl, err := p.Generate(1, 500, 10)
		if err != nil {
			t.Fatal(err)
		}
		reads := make([]int, p.Blocks)
		for _, job := range pl.Block {
			for _, b := range job {
				reads[b]++
			}
		}
		sum := p.Summarize(pl)
		share[s] = sum.HottestBlockShare
		if got := float64(slices.Max(reads)) / 5000; got != sum.HottestBlockShare {
			t.Errorf("s=%g: hottest share %g, counted %g", s, sum.HottestBlockShare, got)
		}
		if s > 0 && slices.Index(reads, slices.Max(reads)) != 0 {
			t.Errorf("s=%g: block %d read most, want block 0 (reads %v)", s, slices.Index(reads, slices.Max(reads)), reads[:5])
		}
		total := 0
		for _, n := range sum.TasksPreferring {
			total += n
		}
		if total != 5000*3 || sum.Nodes != 12 || sum.Replicas != 3 {
			t.Errorf("s=%g: summary %+v: %d preferences, want %d", s, sum, total, 5000*3)
		}
	}
	// Expected shares: 1/100 for s=0; 1/H(100, 1.1) ≈ 0.23; 1/H(100, 2) ≈ 0.61.
	if !(share[0] < 0.03 && share[1.1] > 0.18 && share[1.1] < 0.28 && share[2] > 0.55) {
		t.Errorf("hottest block's share by exponent %v, want about 0.01, 0.23, 0.61", share)
	}
}

// Every attempt of a task, resubmissions included, carries the task's
// preferences, the delay threshold and the input size.
func TestTasksCarryPreferences(t *testing.T) {
	p := Preferences{Nodes: names(6), Racks: 2, Replicas: 3, Blocks: 10, Zipf: 1.1,
		DelayThreshold: 300 * time.Millisecond, InputBytes: 64 << 20}
	pl, err := p.Generate(3, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	j := &logicalJob{n: 1}
	r := &runner{cfg: Config{Prefer: p, RunID: "x"}, attempts: map[string]*attempt{}}
	for k := range 2 {
		j.tasks = append(j.tasks, &logicalTask{job: j, idx: k, prefer: p.NodesOf(pl, pl.Block[1][k])})
	}
	for _, a := range []*attempt{r.newAttempt(j, j.tasks), r.newAttempt(j, j.tasks[1:])} {
		job := r.clientJob(a)
		for _, ct := range job.Tasks {
			var k int
			fmt.Sscan(ct.ID, &k)
			want := p.NodesOf(pl, pl.Block[1][k])
			if !reflect.DeepEqual(ct.Nodes, want) || ct.DelayThreshold != p.DelayThreshold || ct.InputBytes != p.InputBytes {
				t.Errorf("attempt %s task %s: nodes %v, delay %v, input %d; want %v, %v, %d",
					a.id, ct.ID, ct.Nodes, ct.DelayThreshold, ct.InputBytes, want, p.DelayThreshold, p.InputBytes)
			}
		}
	}
}
