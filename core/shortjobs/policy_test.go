package shortjobs

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	ok := Config{Cutoff: 90.5811, ShortShare: 0.02, StarveLimit: 8}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []Config{
		{Cutoff: 0, StarveLimit: 1},
		{Cutoff: math.NaN(), StarveLimit: 1},
		{Cutoff: math.Inf(1), StarveLimit: 1},
		{Cutoff: 1, ShortShare: 1, StarveLimit: 1},
		{Cutoff: 1, ShortShare: -0.1, StarveLimit: 1},
		{Cutoff: 1, StarveLimit: 0},
	}
	for _, c := range bad {
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func TestClassifyAndEstimate(t *testing.T) {
	c := Config{Cutoff: 100}
	h := NewHistory(0.5)
	h.Observe("web", 10)
	h.Observe("web", 30) // 10 + 0.5*(30-10) = 20
	h.Observe("web", math.NaN())
	h.Observe("batch", 500)
	tests := []struct {
		own  float64
		app  string
		want Class
		est  float64
	}{
		{own: 50, app: "batch", want: Short, est: 50}, // the job's own estimate wins
		{own: 0, app: "web", want: Short, est: 20},    // history
		{own: 0, app: "batch", want: Long, est: 500},  // history
		{own: 100, app: "web", want: Long, est: 100},  // at the cutoff is long
		{own: -1, app: "unknown", want: Long, est: 0}, // nothing known: long
		{own: math.Inf(1), app: "web", want: Short, est: 20},
	}
	for _, tc := range tests {
		est, known := Estimate(tc.own, h, tc.app)
		if est != tc.est {
			t.Errorf("Estimate(%v, %s) = %v, want %v", tc.own, tc.app, est, tc.est)
		}
		if got := c.Classify(est, known); got != tc.want {
			t.Errorf("own %v app %s: %v, want %v", tc.own, tc.app, got, tc.want)
		}
	}
	if _, known := Estimate(0, nil, "web"); known {
		t.Error("nil history knows something")
	}
}

// TestJudge: a job's own estimate decides under either rule; without
// one, UnestimatedByTasks makes it short at half the cutoff per task,
// whatever its app's history, and UnestimatedByHistory follows History.
func TestJudge(t *testing.T) {
	h := NewHistory(1)
	h.Observe("web", 20)
	h.Observe("batch", 500)
	byTasks := Config{Cutoff: 100}
	byHistory := Config{Cutoff: 100, Unestimated: UnestimatedByHistory}
	tests := []struct {
		name  string
		cfg   Config
		own   float64
		app   string
		class Class
		est   float64
		known bool
	}{
		{"own estimate, by tasks", byTasks, 300, "web", Long, 300, true},
		{"own estimate, by history", byHistory, 30, "batch", Short, 30, true},
		{"none, by tasks, long history", byTasks, 0, "batch", Short, 50, true},
		{"none, by tasks, no history", byTasks, 0, "new", Short, 50, true},
		{"NaN, by tasks", byTasks, math.NaN(), "batch", Short, 50, true},
		{"infinite, by tasks", byTasks, math.Inf(1), "batch", Short, 50, true},
		{"none, by history", byHistory, 0, "batch", Long, 500, true},
		{"none, by history, short history", byHistory, -2, "web", Short, 20, true},
		{"none, by history, no history", byHistory, 0, "new", Long, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			class, est, known := tc.cfg.Judge(tc.own, h, tc.app)
			if class != tc.class || est != tc.est || known != tc.known {
				t.Fatalf("Judge(%v, %s) = %v, %v, %v; want %v, %v, %v", tc.own, tc.app, class, est, known, tc.class, tc.est, tc.known)
			}
		})
	}
	if c, _, known := byHistory.Judge(0, nil, "web"); c != Long || known {
		t.Fatalf("by history with no History: %v, known %v; want long, unknown", c, known)
	}
}

func TestParseUnestimated(t *testing.T) {
	for _, u := range []Unestimated{UnestimatedByTasks, UnestimatedByHistory} {
		got, err := ParseUnestimated(u.String())
		if err != nil || got != u {
			t.Fatalf("ParseUnestimated(%q) = %v, %v", u.String(), got, err)
		}
	}
	if _, err := ParseUnestimated("oracle"); err == nil || !strings.Contains(err.Error(), "oracle") {
		t.Fatalf("ParseUnestimated(oracle) error %v, want one naming it", err)
	}
	if err := (Config{Cutoff: 1, StarveLimit: 1, Unestimated: numUnestimated}).Validate(); err == nil {
		t.Fatal("an unknown rule validated")
	}
}

func TestShortOnlyCount(t *testing.T) {
	tests := []struct {
		n     int
		share float64
		want  int
	}{
		{10, 0, 0}, {0, 0.05, 0}, {10, 0.05, 1}, {1, 0.05, 1}, {20, 0.05, 1}, {21, 0.05, 2},
		{100, 0.07, 7}, {4000, 0.02, 80}, {3, 0.5, 2}, {10, 0.999, 10}, {10, math.NaN(), 0},
	}
	for _, tc := range tests {
		if got := ShortOnlyCount(tc.n, tc.share); got != tc.want {
			t.Errorf("ShortOnlyCount(%d, %v) = %d, want %d", tc.n, tc.share, got, tc.want)
		}
	}
}

// names returns n node names with prefix.
func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint(prefix, i)
	}
	return out
}

// shortOnlyOf returns which of nodes the partition over nodes makes
// short-only.
func shortOnlyOf(nodes []string, share float64) map[string]bool {
	hashes := make([]uint64, len(nodes))
	for i, n := range nodes {
		hashes[i] = NodeHash(n)
	}
	p := NewPartition(hashes, share)
	out := make(map[string]bool)
	for _, n := range nodes {
		if p.ShortOnly(NodeHash(n)) {
			out[n] = true
		}
	}
	if len(out) != p.Count() {
		panic(fmt.Sprintf("%d short-only, Count %d", len(out), p.Count()))
	}
	return out
}

// The partition makes exactly ShortOnlyCount nodes short-only, whatever
// the names, agrees whatever order the nodes are listed in, and moves at
// most one other node when one joins.
func TestPartition(t *testing.T) {
	tests := []struct {
		prefix string
		n      int
		share  float64
	}{
		{"n", 10, 0.05}, {"nm-", 10, 0.05}, {"nm-", 12, 0.05}, {"node", 4000, 0.02},
		{"n", 200, 0.17}, {"h", 7, 0.5}, {"n", 10, 0},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.prefix, tc.n, "/", tc.share), func(t *testing.T) {
			nodes := names(tc.prefix, tc.n)
			so := shortOnlyOf(nodes, tc.share)
			if want := ShortOnlyCount(tc.n, tc.share); len(so) != want {
				t.Fatalf("%d short-only, want %d", len(so), want)
			}
			rev := slices.Clone(nodes)
			slices.Reverse(rev)
			if got := shortOnlyOf(rev, tc.share); !maps.Equal(got, so) {
				t.Fatalf("listed in reverse: %v, want %v", got, so)
			}
			joined := shortOnlyOf(append(slices.Clone(nodes), "joiner"), tc.share)
			moved := 0
			for _, n := range nodes {
				if joined[n] != so[n] {
					moved++
				}
			}
			if moved > 1 {
				t.Fatalf("a node joining moved %d others", moved)
			}
		})
	}
	if NodeHash("x") != NodeHash("x") || NodeHash("n1") == NodeHash("n2") {
		t.Error("NodeHash")
	}
	if (Partition{}).ShortOnly(0) {
		t.Error("the zero Partition has a short-only node")
	}
}

func TestStarveLimitFor(t *testing.T) {
	tests := []struct{ perSlot, slots, want int }{
		{32, 1, 32}, {32, 300, 9600}, {1, 1, 1}, {0, 5, 5}, {4, 0, 4}, {math.MaxInt / 2, 3, math.MaxInt},
	}
	for _, tc := range tests {
		if got := StarveLimitFor(tc.perSlot, tc.slots); got != tc.want {
			t.Errorf("StarveLimitFor(%d, %d) = %d, want %d", tc.perSlot, tc.slots, got, tc.want)
		}
	}
}

func TestSteer(t *testing.T) {
	so := []bool{true, false, false, false, false}
	lw := []bool{false, true, false, true, false}
	all := []int32{0, 1, 2, 3, 4}
	tests := []struct {
		name      string
		c         Class
		tasks     int
		so, lw    []bool
		want      []int32
		wantSteer bool
	}{
		{"long avoids short-only", Long, 3, so, lw, []int32{1, 2, 3, 4}, true},
		{"short to nodes without long work", Short, 3, so, lw, []int32{0, 2, 4}, true},
		{"short with too few free nodes goes anywhere", Short, 4, so, lw, all, false},
		{"all nodes free is not steering", Short, 1, so, make([]bool, 5), all, false},
		{"every node short-only", Long, 1, []bool{true, true}, []bool{false, false}, []int32{0, 1}, false},
		{"all busy", Short, 1, so, []bool{true, true, true, true, true}, all, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, steered := Steer([]int32{99}, tc.c, tc.tasks, tc.so, tc.lw)
			if got[0] != 99 || !slices.Equal(got[1:], tc.want) || steered != tc.wantSteer {
				t.Fatalf("got %v %v, want [99] + %v %v", got, steered, tc.want, tc.wantSteer)
			}
		})
	}
}

func TestLongWork(t *testing.T) {
	var l LongWork
	steps := []struct {
		d       int
		changed bool
		count   int
	}{
		{1, true, 1}, {2, false, 3}, {-1, false, 2}, {-2, true, 0}, {-1, false, 0}, {300, true, 300},
	}
	for i, s := range steps {
		if got := l.Add(s.d); got != s.changed || l.Count() != s.count {
			t.Fatalf("step %d: changed %v count %d, want %v %d", i, got, l.Count(), s.changed, s.count)
		}
	}
	if l.Advert() != 255 || !AdvertBusy([]byte{l.Advert()}) || AdvertBusy(nil) || AdvertBusy([]byte{0}) {
		t.Fatal("advert")
	}
}
