package scheduler

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
)

// levelView is a fakeView whose node monitors advertise the long-work
// levels of level (by address; absent: 0) and long work on the nodes of
// busy.
type levelView struct {
	*fakeView
	level map[string]uint8
	busy  map[string]bool
}

func (v *levelView) LongLevel(addr string) uint8 { return v.level[addr] }
func (v *levelView) LongWork(addr string) bool   { return v.busy[addr] }

// levelNodes returns n nodes named nm0.. for app "app", with their
// levels by index.
func levelNodes(n int, levels ...uint8) (*levelView, []placement.Node) {
	v := &levelView{fakeView: &fakeView{byApp: map[string][]placement.Node{}}, level: map[string]uint8{}, busy: map[string]bool{}}
	nodes := make([]placement.Node, n)
	for i := range nodes {
		nodes[i] = placement.Node{Addr: fmt.Sprintf("10.0.0.%d:20502", i), Host: fmt.Sprintf("10.0.0.%d", i), Name: fmt.Sprintf("nm%d", i)}
		if i < len(levels) {
			v.level[nodes[i].Addr] = levels[i]
		}
	}
	v.byApp["app"] = nodes
	return v, nodes
}

// The policy's steering of long jobs by the advertised long-work level:
// the general nodes of the lowest levels, whole levels from the lowest
// until there are enough for the job's reservations.
func TestSteerLongJobsByLevel(t *testing.T) {
	levels := []uint8{3, 0, 0, 1, 1, 2, 2, 2, 0, 5}
	plainView := &fakeView{byApp: map[string][]placement.Node{}}
	tests := []struct {
		name  string
		cfg   shortjobs.Config
		class shortjobs.Class
		tasks int
		ratio float64
		plain bool // a view without levels
		want  []int
	}{
		{"one task: the level-0 nodes", shortjobs.Config{Cutoff: 10, StarveLimit: 4, LongSteer: true}, shortjobs.Long, 1, 2, false, []int{1, 2, 8}},
		{"exactly enough at level 0", shortjobs.Config{Cutoff: 10, StarveLimit: 4, LongSteer: true}, shortjobs.Long, 3, 1, false, []int{1, 2, 8}},
		{"two tasks at d=2: levels 0 and 1", shortjobs.Config{Cutoff: 10, StarveLimit: 4, LongSteer: true}, shortjobs.Long, 2, 2, false, []int{1, 2, 3, 4, 8}},
		{"levels up to 2", shortjobs.Config{Cutoff: 10, StarveLimit: 4, LongSteer: true}, shortjobs.Long, 3, 2, false, []int{1, 2, 3, 4, 5, 6, 7, 8}},
		{"more reservations than nodes: every node", shortjobs.Config{Cutoff: 10, StarveLimit: 4, LongSteer: true}, shortjobs.Long, 20, 2, false, nil},
		{"a short job is not steered by level", shortjobs.Config{Cutoff: 10, StarveLimit: 4, LongSteer: true}, shortjobs.Short, 1, 2, false, nil},
		{"long steering off", shortjobs.Config{Cutoff: 10, StarveLimit: 4}, shortjobs.Long, 1, 2, false, nil},
		{"a view without levels: every node level 0", shortjobs.Config{Cutoff: 10, StarveLimit: 4, LongSteer: true}, shortjobs.Long, 1, 2, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := newShortPolicy(&tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			v, nodes := levelNodes(10, levels...)
			var view NodeView = v
			if tt.plain {
				plainView.byApp["app"] = nodes
				view = plainView
			}
			got := p.steer("app", nodes, tt.class, tt.tasks, tt.ratio, view)
			var gotIdx []int
			for _, n := range got {
				gotIdx = append(gotIdx, slices.IndexFunc(nodes, func(m placement.Node) bool { return m.Addr == n.Addr }))
			}
			want := tt.want
			if want == nil {
				want = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
			}
			if !slices.Equal(gotIdx, want) {
				t.Fatalf("candidates %v, want %v", gotIdx, want)
			}
		})
	}
}

// Long jobs never go to the short-only share, whatever its levels: the
// lowest levels are taken among the general nodes only.
func TestSteerLongJobsAvoidShortOnly(t *testing.T) {
	cfg := shortjobs.Config{Cutoff: 10, ShortShare: 0.3, StarveLimit: 4, LongSteer: true}
	p, err := newShortPolicy(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Every node at level 4 but the short-only ones (0) and one general
	// node (1).
	v, nodes := levelNodes(10)
	hashes := make([]uint64, len(nodes))
	for i, n := range nodes {
		hashes[i] = shortjobs.NodeHash(n.Name)
	}
	part := shortjobs.NewPartition(slices.Clone(hashes), cfg.ShortShare)
	low := -1
	for i, n := range nodes {
		switch {
		case part.ShortOnly(hashes[i]):
		case low < 0:
			low = i
			v.level[n.Addr] = 1
		default:
			v.level[n.Addr] = 4
		}
	}
	got := p.steer("app", nodes, shortjobs.Long, 1, 1, v)
	if len(got) != 1 || got[0].Addr != nodes[low].Addr {
		t.Fatalf("candidates %v, want only nm%d, the general node of the lowest level", got, low)
	}
	// Enough reservations for every general node, or every node at level
	// 0: the general nodes, still none short-only.
	for _, tc := range []struct {
		name  string
		tasks int
		view  NodeView
	}{
		{"every general node wanted", 10, v},
		{"a view without levels", 1, v.fakeView},
	} {
		got := p.steer("app", nodes, shortjobs.Long, tc.tasks, 1, tc.view)
		if len(got) != len(nodes)-3 {
			t.Errorf("%s: %d candidates, want the %d general nodes", tc.name, len(got), len(nodes)-3)
		}
		for _, n := range got {
			if part.ShortOnly(shortjobs.NodeHash(n.Name)) {
				t.Errorf("%s: candidate %s is short-only", tc.name, n.Name)
			}
		}
	}
}

// Through submission, a long job's reservations go only to the general
// nodes of the lowest advertised levels.
func TestLongJobReservationsOnLowestLevels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 10, Config{NoOffers: true})
		v := &levelView{fakeView: c.view, level: map[string]uint8{}, busy: map[string]bool{}}
		for i, nm := range c.nms {
			v.level[nm.addr] = uint8(2 + i%3)
		}
		lowest := []int{3, 7} // level 1
		for _, i := range lowest {
			v.level[c.nms[i].addr] = 1
		}
		s, err := newWith(Config{Address: schedAddr, Seed: 1, NoOffers: true, ShortJobs: &shortjobs.Config{Cutoff: 10, StarveLimit: 4, LongSteer: true}}, v, c.net, c.net)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		c.s = s
		if err := c.s.SubmitJob(context.Background(), withSeconds(job("l", 1, freeTasks(2)...), 100)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "l", 2)
		nodes, _ := c.reservedOn("l")
		for i := range nodes {
			if !slices.Contains(lowest, i) {
				t.Fatalf("reservations on nodes %v, want only on %v (the lowest level)", nodes, lowest)
			}
		}
	})
}
