package calibrate

import (
	"testing"

	"github.com/sparrowfleet/sparrow/core/perfmodel"
)

// TestMeasureGivesAUsableProfile checks what calibration promises: a
// profile the planner accepts, which survives the gossip attribute. It
// asserts no speed: any positive rate is a valid measurement.
func TestMeasureGivesAUsableProfile(t *testing.T) {
	m, err := Measure("here", Options{Dir: t.TempDir(), DiskBytes: 4 << 20, Loop: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("profile %+v: %v", m, err)
	}
	if m.Net != 1e9/8 {
		t.Errorf("net %v, want the 1 Gbit/s default", m.Net)
	}
	if _, err := perfmodel.ParseProfile("here", perfmodel.FormatProfile(m)); err != nil {
		t.Errorf("calibrated profile does not survive its attribute: %v", err)
	}
}

func TestDiskNeedsAWritableDir(t *testing.T) {
	if _, _, err := Disk("/nonexistent/dir", 1<<20); err == nil {
		t.Fatal("Disk in a missing directory succeeded")
	}
}
