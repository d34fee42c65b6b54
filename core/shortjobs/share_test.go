package shortjobs

import (
	"testing"
	"time"
)

func TestAdaptiveShare(t *testing.T) {
	const min = time.Minute
	a := NewAdaptiveShare(0.05, 10*min, 30*min, 2)
	const slots, nodes = 1000, 1000
	steps := []struct {
		name       string
		at         time.Duration
		work       float64 // short slot-seconds arriving at at
		longBusy   int
		wantShare  float64
		wantChange bool
	}{
		{"idle fleet keeps the floor", 0, 0, 0, 0.05, false},
		{"demand without long work keeps the floor", 1 * min, 600 * 1000, 0, 0.05, false},
		// 600,000 slot-s over 600 s = 1,000 busy slots; x2 x 0.3 / 1000 = 0.6
		{"a burst with long occupancy grows at once", 2 * min, 0, 300, 0.65, true},
		{"still high", 5 * min, 0, 300, 0.65, false},
		// at 12 min the burst left the window: target 0
		{"below: hold starts", 12 * min, 0, 300, 0.65, false},
		{"held 29 min", 41 * min, 0, 300, 0.65, false},
		{"one step down after the hold", 42 * min, 0, 300, 0.50, true},
		{"not two steps at once", 43 * min, 0, 300, 0.50, false},
		{"next step after another hold", 72 * min, 0, 300, 0.35, true},
		// 120,000 slot-s / 600 s = 200 slots; x2 x 0.5 / 1000 = 0.2
		{"a target between steps does not move the share", 73 * min, 120 * 1000, 500, 0.35, false},
		{"a step down a hold after the last", 102 * min, 0, 500, 0.20, true},
		// 480,000 slot-s / 600 s = 800 slots; x2 x 0.5 / 1000 = 0.8
		{"a new burst grows at once", 103 * min, 480 * 1000, 500, 0.65, true},
	}
	for _, s := range steps {
		a.AddShortWork(s.at, s.work)
		got, changed := a.Update(s.at, slots, s.longBusy, nodes)
		if got != s.wantShare || changed != s.wantChange || a.Share() != got {
			t.Fatalf("%s: share %v changed %v, want %v %v", s.name, got, changed, s.wantShare, s.wantChange)
		}
	}
}

func TestAdaptiveShareDemandWindow(t *testing.T) {
	a := NewAdaptiveShare(0, time.Minute*10, 0, 0)
	a.AddShortWork(0, 600)
	a.AddShortWork(5*time.Minute, 600)
	a.AddShortWork(5*time.Minute, -5) // ignored
	if d := a.Demand(9 * time.Minute); d != 2 {
		t.Fatalf("demand %v, want 2 busy slots", d)
	}
	if d := a.Demand(11 * time.Minute); d != 1 {
		t.Fatalf("demand %v after the first minute left the window, want 1", d)
	}
	if d := a.Demand(10 * time.Hour); d != 0 {
		t.Fatalf("demand %v long after, want 0", d)
	}
}
