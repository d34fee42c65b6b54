package perfmodel

import (
	"testing"
)

// TestContentionModels is the notes' case C1: one disk at 100 MB/s shared
// equally; V1 reads 200 MB from t=0, V2 300 MB from t=1. Isolated, they end
// at 2 and 4; fixing rates at start (Figure 12's third model) gives 2 and 7;
// re-evaluating at every start and finish gives 3 and 5.
func TestContentionModels(t *testing.T) {
	m := []Machine{{Name: "a", Cores: 1, GHz: 1, DiskRead: 100 * MB, DiskWrite: 100 * MB, Net: 100 * MB}}
	read := func(mb float64) []Step { return []Step{{Demands: []Demand{{0, DiskRead, mb * MB}}}} }
	end, err := Simulate(m, []Release{{At: 0, Steps: read(200)}, {At: 1, Steps: read(300)}})
	if err != nil {
		t.Fatal(err)
	}
	if !near(end[0], 3, 1e-9) || !near(end[1], 5, 1e-9) {
		t.Errorf("event model ends %v, want [3 5]", end)
	}
	alone, _ := Simulate(m, []Release{{At: 1, Steps: read(300)}})
	if !near(alone[0], 4, 1e-9) {
		t.Errorf("isolated V2 ends %v, want 4", alone[0])
	}
}

func TestEngineCases(t *testing.T) {
	ms := []Machine{
		{Name: "a", Cores: 2, GHz: 1, DiskRead: 10, DiskWrite: 10, Net: 5},
		{Name: "b", Cores: 2, GHz: 1, DiskRead: 20, DiskWrite: 20, Net: 5},
	}
	cases := []struct {
		name  string
		tasks []Release
		want  []float64
	}{
		{"delay then cpu", []Release{{Steps: []Step{{Delay: 1}, {Demands: []Demand{{0, CPU, 2}}}}}}, []float64{3}},
		{"cpu shared", []Release{
			{Steps: []Step{{Demands: []Demand{{0, CPU, 2}}}}},
			{Steps: []Step{{Demands: []Demand{{0, CPU, 1}}}}},
		}, []float64{3, 2}},
		{"different machines do not contend", []Release{
			{Steps: []Step{{Demands: []Demand{{0, CPU, 2}}}}},
			{Steps: []Step{{Demands: []Demand{{1, CPU, 1}}}}},
		}, []float64{2, 1}},
		// A remote read of 10 bytes from b: b's NIC at 5 B/s is the bottleneck (2 s);
		// a second reader sharing b's NIC-out halves both rates.
		{"remote readers share the link", []Release{
			{Steps: []Step{{Demands: []Demand{{1, DiskRead, 10}, {1, NetOut, 10}, {0, NetIn, 10}}}}},
			{Steps: []Step{{Demands: []Demand{{1, NetOut, 10}, {0, NetIn, 10}}}}},
		}, []float64{4, 4}},
		{"empty task", []Release{{At: 2}}, []float64{2}},
		{"idle gap", []Release{{At: 0, Steps: []Step{{Delay: 1}}}, {At: 5, Steps: []Step{{Delay: 1}}}}, []float64{1, 6}},
	}
	for _, c := range cases {
		got, err := Simulate(ms, c.tasks)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for i := range c.want {
			if !near(got[i], c.want[i], 1e-9) {
				t.Errorf("%s: ends %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

func TestEngineRejects(t *testing.T) {
	e, err := NewEngine([]Machine{{Name: "a", Cores: 1, GHz: 1, DiskRead: 1, DiskWrite: 1, Net: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(1, []Step{{Demands: []Demand{{3, CPU, 1}}}}); err == nil {
		t.Error("demand on a missing machine accepted")
	}
	if err := e.Start(1, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.Start(1, nil); err == nil {
		t.Error("duplicate id accepted")
	}
	if _, err := NewEngine(nil); err == nil {
		t.Error("empty cluster accepted")
	}
}
