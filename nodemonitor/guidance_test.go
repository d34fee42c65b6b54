package nodemonitor

import (
	"context"
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
