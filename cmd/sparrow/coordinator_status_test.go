package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/coordinator"
)

// The coordinator's /status part: what the fairness fault tests
// (scripts/e2e/fairness_report.py) read, under these JSON names.
func TestCoordinatorStatusJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   coordinator.GuidanceStatus
		want string
	}{
		{name: "never published", in: coordinator.GuidanceStatus{},
			want: `{"active":false,"version":0,"reports":0,"users":{}}`},
		{name: "published", in: coordinator.GuidanceStatus{
			Active: true, Version: 42, At: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600)), Reports: 8,
			Users: map[string]coordinator.UserShare{"spark": {Running: 3, Target: 4}, "hadoop": {Running: 12, Target: 12}},
		}, want: `{"active":true,"version":42,"at":"2026-01-02T02:04:05.000000006Z","reports":8,` +
			`"users":{"hadoop":{"running":12,"target":12},"spark":{"running":3,"target":4}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(coordinatorStatus(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Fatalf("got  %s\nwant %s", b, tc.want)
			}
		})
	}
}
