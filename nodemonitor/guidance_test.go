package nodemonitor

import (
	"context"
	"slices"
	"testing"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/fairshare"
	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

func newWithQueue(t *testing.T, q queue.Discipline) *NodeMonitor {
	t.Helper()
	nm, err := newNodeMonitor(Config{Slots: 2, Queue: q, Internal: "127.0.0.1:2", Log: zerolog.Nop()}, staticDir{}, newFakeScheds(), &fakeExecs{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nm.Close() })
	return nm
}

func TestGuidanceWeightsAppliedAndRestored(t *testing.T) {
	f, err := queue.NewFair(1, map[string]float64{"alice": 2})
	if err != nil {
		t.Fatal(err)
	}
	nm := newWithQueue(t, f)
	changed, err := nm.ApplyGuidance(Guidance{Version: 1, Weights: map[string]float64{"alice": 30, "bob": 10}})
	if err != nil || !changed {
		t.Fatalf("ApplyGuidance = %v, %v", changed, err)
	}
	if f.Weight("alice") != 30 || f.Weight("bob") != 10 {
		t.Fatalf("weights %v, %v; want the coordinator's 30, 10", f.Weight("alice"), f.Weight("bob"))
	}
	// A weight of zero (no allocation on this type) becomes the floor.
	nm.ApplyGuidance(Guidance{Version: 2, Weights: map[string]float64{"alice": 0}})
	if f.Weight("alice") != fairshare.MinWeight {
		t.Fatalf("alice's weight %v, want the floor %v", f.Weight("alice"), fairshare.MinWeight)
	}
	nm.DropGuidance()
	if f.Weight("alice") != 2 || f.Weight("bob") != 1 {
		t.Fatalf("after DropGuidance: %v, %v; want the configured 2 and default 1", f.Weight("alice"), f.Weight("bob"))
	}
}

func TestGuidanceForChoosy(t *testing.T) {
	c, err := queue.NewChoosy(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	nm := newWithQueue(t, c)
	if ok, err := nm.ApplyGuidance(Guidance{Version: 3, Running: map[string]float64{"a": 4}, Weights: map[string]float64{"a": 9}}); !ok || err != nil {
		t.Fatalf("ApplyGuidance = %v, %v", ok, err)
	}
	if s, ok := c.Share("a"); !ok || s != 4 {
		t.Fatalf("share %v %v; want 4 (counts, not the CMMF weight)", s, ok)
	}
	if c.Weight("a") != 1 {
		t.Fatalf("a Choosy queue took a CMMF weight: %v", c.Weight("a"))
	}
	if _, err := nm.ApplyGuidance(Guidance{Version: 4, Running: map[string]float64{"a": -1}}); err == nil {
		t.Fatal("a negative count was applied")
	}
	nm.DropGuidance()
	if _, ok := c.Share("a"); ok {
		t.Fatal("Choosy still follows guidance after DropGuidance")
	}
}

func TestMachineType(t *testing.T) {
	tests := []struct {
		attrs map[string]string
		want  string
	}{
		{nil, "default"},
		{map[string]string{"rack": "r1", "gpu": "yes"}, "gpu=yes,rack=r1"},
	}
	for _, tt := range tests {
		if got := MachineType(tt.attrs); got != tt.want {
			t.Errorf("MachineType(%v) = %q, want %q", tt.attrs, got, tt.want)
		}
	}
}

// TestGuidanceWeightsReachLateUsers: a user first queued here after the
// guidance arrived takes the floor weight at once, not its configured one
// until the next period.
func TestGuidanceWeightsReachLateUsers(t *testing.T) {
	f, err := queue.NewFair(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	nm := newWithQueue(t, f)
	nm.ApplyGuidance(Guidance{Version: 1, Weights: map[string]float64{"spark": 4}})
	nm.EnqueueTaskReservations(context.Background(), &sparrowrpc.TEnqueueTaskReservationsRequest{
		AppId: "app", RequestId: "r1", NumTasks: 1, User: &sparrowrpc.TUserGroupInfo{User: "hadoop"},
		SchedulerAddress: &sparrowrpc.THostPort{Host: "127.0.0.1", Port: 1},
	})
	if w := f.Weight("hadoop"); w != fairshare.MinWeight {
		t.Fatalf("late user's weight %v, want the floor %v", w, fairshare.MinWeight)
	}
	nm.DropGuidance()
	if w := f.Weight("hadoop"); w != 1 {
		t.Fatalf("after DropGuidance: %v, want the configured 1", w)
	}
}

// weightGuide on its own: what each queue discipline takes from guidance,
// and what dropping it restores.
func TestWeightGuide(t *testing.T) {
	tests := []struct {
		name        string
		queue       func() queue.Discipline
		g           Guidance
		users       []string // queued here before the guidance
		late        string   // first queued after it
		wantChanged bool
		wantErr     bool
		wantActive  bool
		want        map[string]float64 // weights under guidance
	}{
		{"fair: CMMF weights, the floor for the rest", func() queue.Discipline { q, _ := queue.NewFair(1, map[string]float64{"a": 2}); return q },
			Guidance{Version: 1, Weights: map[string]float64{"a": 5}}, []string{"b"}, "c", true, false, true,
			map[string]float64{"a": 5, "b": fairshare.MinWeight, "c": fairshare.MinWeight}},
		{"fair without weights: nothing", func() queue.Discipline { q, _ := queue.NewFair(1, nil); return q },
			Guidance{Version: 1, Running: map[string]float64{"a": 3}}, nil, "c", false, false, false,
			map[string]float64{"a": 1, "c": 1}},
		{"fifo with weights: an error", func() queue.Discipline { return queue.NewFIFO() },
			Guidance{Version: 1, Weights: map[string]float64{"a": 5}}, nil, "", false, true, false, nil},
		{"choosy: counts, not weights", func() queue.Discipline { q, _ := queue.NewChoosy(1, nil); return q },
			Guidance{Version: 1, Running: map[string]float64{"a": 3}, Weights: map[string]float64{"a": 9}}, nil, "c", true, false, false,
			map[string]float64{"a": 1, "c": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.queue()
			var before map[string]float64
			if w, ok := q.(queue.Weights); ok {
				before = map[string]float64{}
				for u := range tt.want {
					before[u] = w.Weight(u)
				}
			}
			var g weightGuide
			changed, err := g.apply(q, tt.g, slices.Values(tt.users))
			if changed != tt.wantChanged || (err != nil) != tt.wantErr || g.active() != tt.wantActive {
				t.Fatalf("apply: changed %v, err %v, active %v", changed, err, g.active())
			}
			if tt.late != "" {
				g.guide(q, tt.late)
			}
			w, ok := q.(queue.Weights)
			if !ok {
				return
			}
			for u, want := range tt.want {
				if got := w.Weight(u); got != want {
					t.Errorf("%s's weight %v under guidance, want %v", u, got, want)
				}
			}
			g.drop(q)
			for u, want := range before {
				if got := w.Weight(u); got != want {
					t.Errorf("%s's weight %v after drop, want %v", u, got, want)
				}
			}
			if g.active() {
				t.Error("still active after drop")
			}
		})
	}
}

// A Choosy queue takes the type's CMMF allocation from guidance as its
// node quotas; guidance without one leaves it ranking by share alone.
func TestWeightGuideChoosyQuotas(t *testing.T) {
	tests := []struct {
		name   string
		alloc  map[string]float64
		wantOK bool
		want   float64 // a's quota with nothing running here
	}{
		{"allocation: quotas", map[string]float64{"a": 3, "b": 1}, true, 0.75},
		{"no allocation: no quotas", nil, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := queue.NewChoosy(1, nil)
			if err != nil {
				t.Fatal(err)
			}
			var g weightGuide
			gd := Guidance{Version: 1, Running: map[string]float64{"a": 1, "b": 1}, Alloc: tt.alloc}
			if _, err := g.apply(q, gd, slices.Values([]string(nil))); err != nil {
				t.Fatal(err)
			}
			got, ok := q.Quota("a")
			if ok != tt.wantOK || got != tt.want {
				t.Fatalf("Quota(a) = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
