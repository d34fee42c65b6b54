package coordinator

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/core/fairshare"
)

func TestGuidanceSnapshot(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, tc := range []struct {
		name   string
		record *fairshare.Guidance
		active bool
		want   GuidanceStatus
	}{
		{name: "never published", want: GuidanceStatus{}},
		{name: "standby that never published", active: false, want: GuidanceStatus{}},
		{
			name: "published, active",
			record: &fairshare.Guidance{
				Running: map[string]int{"spark": 3, "hadoop": 12, "idle": 0},
				Target:  map[string]float64{"spark": 4, "hadoop": 12},
			},
			active: true,
			want: GuidanceStatus{Active: true, Version: 7, At: at, Reports: 8, Users: map[string]UserShare{
				"spark": {Running: 3, Target: 4}, "hadoop": {Running: 12, Target: 12},
			}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &Daemon{}
			d.stats.Active = tc.active
			if tc.record != nil {
				d.recordGuidance(7, at, 8, *tc.record)
			}
			got := d.Guidance()
			if got.Users == nil && tc.want.Users == nil {
				got.Users = nil
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Guidance() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A snapshot is a copy: neither the recorder's maps nor a reader's edits
// change what the next reader sees.
func TestGuidanceSnapshotIsACopy(t *testing.T) {
	d := &Daemon{}
	g := fairshare.Guidance{Running: map[string]int{"a": 1}, Target: map[string]float64{"a": 2}}
	d.recordGuidance(1, time.Unix(1, 0), 1, g)
	g.Running["a"], g.Target["a"] = 100, 100
	first := d.Guidance()
	first.Users["a"] = UserShare{Running: 50}
	if got := d.Guidance().Users["a"]; got != (UserShare{Running: 1, Target: 2}) {
		t.Fatalf("snapshot changed under a writer or reader: %+v", got)
	}
}

// Readers and the publisher may run at once (go test -race).
func TestGuidanceSnapshotConcurrent(t *testing.T) {
	d := &Daemon{}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range 200 {
			d.recordGuidance(uint64(i+1), time.Unix(int64(i), 0), 1, fairshare.Guidance{
				Running: map[string]int{"u": i}, Target: map[string]float64{"u": float64(i)}})
		}
	}()
	go func() {
		defer wg.Done()
		for range 200 {
			st := d.Guidance()
			if u, ok := st.Users["u"]; ok && float64(u.Running) != u.Target {
				t.Errorf("torn snapshot: %+v", u)
				return
			}
		}
	}()
	wg.Wait()
	if v := d.Guidance().Version; v != 200 {
		t.Fatalf("last version %d, want 200", v)
	}
}
