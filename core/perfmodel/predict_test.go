package perfmodel

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestPredictHandChecked is the notes' hand-checked case P1: reference
// 2 GHz × 4 cores, disk 100/100 MB/s, 200 MB input.
func TestPredictHandChecked(t *testing.T) {
	ref := Machine{Name: "ref", Cores: 4, GHz: 2, DiskRead: 100 * MB, DiskWrite: 100 * MB, Net: 100 * MB}
	m := Model{Type: "p1", Ref: ref, Groups: []PhaseGroup{
		{Label: "init", Kind: Init, Phases: 1, Run: 1},
		{Label: "read", Kind: IO, Phases: 1, CPU: []float64{1, 2}, Read: []float64{200 * MB}},
		{Label: "comp", Kind: Compute, Phases: 1, CPU: []float64{1}, Blocked: 0.5},
		{Label: "write", Kind: IO, Phases: 1, CPU: []float64{0.5}, Write: []float64{100 * MB}},
	}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	slow := Machine{Name: "slow", Cores: 1, GHz: 1, DiskRead: 50 * MB, DiskWrite: 25 * MB, Net: 25 * MB}
	cluster := []Machine{ref, slow}
	cases := []struct {
		name string
		b    Binding
		want float64
	}{
		{"self", Binding{Machine: 0}, 5.5},
		{"slow, double input", Binding{Machine: 1, Read: [][]Part{{{Machine: 1, Bytes: 400 * MB}}}}, 23.5},
		// Remote input from the reference machine: slow's NIC (25 MB/s) is the bottleneck: 16 s.
		{"slow, double input, remote", Binding{Machine: 1, Read: [][]Part{{{Machine: 0, Bytes: 400 * MB}}}}, 27.5},
		// Pipelined from memory on the same machine: no disk read, CPU-bound 12 s.
		{"slow, piped locally", Binding{Machine: 1, Read: [][]Part{{{Machine: 1, Bytes: 400 * MB, Pipe: true}}}}, 23.5},
	}
	for _, c := range cases {
		got, err := m.Predict(cluster, c.b)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !near(got, c.want, 1e-9) {
			t.Errorf("%s: predicted %.4f s, want %.4f", c.name, got, c.want)
		}
	}
}

func TestStepsErrors(t *testing.T) {
	ref := Machine{Name: "ref", Cores: 1, GHz: 1, DiskRead: 1, DiskWrite: 1, Net: 1}
	m := Model{Type: "x", Ref: ref, Groups: []PhaseGroup{{Kind: IO, Phases: 1, Read: []float64{1}}}}
	for name, b := range map[string]Binding{
		"machine out of range": {Machine: 3},
		"too many channels":    {Read: [][]Part{{}, {}}},
		"part machine":         {Read: [][]Part{{{Machine: 7, Bytes: 1}}}},
		"negative bytes":       {Read: [][]Part{{{Machine: 0, Bytes: -1}}}},
		"write without ref":    {Write: []float64{5}},
	} {
		if _, err := m.Steps([]Machine{ref}, b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestValidate(t *testing.T) {
	ref := Machine{Name: "ref", Cores: 1, GHz: 1, DiskRead: 1, DiskWrite: 1, Net: 1}
	for name, m := range map[string]Model{
		"no groups":      {Type: "a", Ref: ref},
		"bad ref":        {Type: "a", Groups: []PhaseGroup{{Kind: Init, Phases: 1}}},
		"zero phases":    {Type: "a", Ref: ref, Groups: []PhaseGroup{{Kind: Init}}},
		"io no bytes":    {Type: "a", Ref: ref, Groups: []PhaseGroup{{Kind: IO, Phases: 1}}},
		"compute bytes":  {Type: "a", Ref: ref, Groups: []PhaseGroup{{Kind: Compute, Phases: 1, Read: []float64{1}}}},
		"nan cpu":        {Type: "a", Ref: ref, Groups: []PhaseGroup{{Kind: Compute, Phases: 1, CPU: []float64{math.NaN()}}}},
		"stretch below1": {Type: "a", Ref: ref, Groups: []PhaseGroup{{Kind: Compute, Phases: 1, Stretch: 0.5}}},
		"unknown kind":   {Type: "a", Ref: ref, Groups: []PhaseGroup{{Kind: 9, Phases: 1}}},
	} {
		if err := m.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
