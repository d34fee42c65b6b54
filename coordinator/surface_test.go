package coordinator

import (
	"encoding/json"
	"testing"
	"time"
)

// The coordinator's /status part: what the fairness fault tests
// (scripts/e2e/fairness_report.py) read, under these JSON names.
func TestHTTPStatusJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   GuidanceStatus
		want string
	}{
		{name: "never published", in: GuidanceStatus{},
			want: `{"active":false,"version":0,"reports":0,"users":{}}`},
		{name: "published", in: GuidanceStatus{
			Active: true, Version: 42, At: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600)), Reports: 8,
			Users: map[string]UserShare{"spark": {Running: 3, Target: 4}, "hadoop": {Running: 12, Target: 12}},
		}, want: `{"active":true,"version":42,"at":"2026-01-02T02:04:05.000000006Z","reports":8,` +
			`"users":{"hadoop":{"running":12,"target":12},"spark":{"running":3,"target":4}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(httpStatus(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Fatalf("got  %s\nwant %s", b, tc.want)
			}
		})
	}
}

func TestHTTPStatusLocalityJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := httpStatus(GuidanceStatus{Version: 1, Users: map[string]UserShare{},
		Locality: &LocalityStatus{Version: 9, At: at, Solve: 3 * time.Millisecond, Nodes: 40, TaskMillis: 120,
			Local: 30, Rack: 5, Core: 1, Cluster: 50, Racks: map[string]int64{"r1": 50}, Bytes: 200, Sent: 4, SentBytes: 800}})
	b, err := json.Marshal(st.Locality)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":9,"at":"2026-01-02T03:04:05Z","solve_seconds":0.003,"nodes":40,"task_ms":120,"local":30,"rack":5,"core":1,` +
		`"cluster":50,"racks":{"r1":50},"bytes":200,"sent":4,"sent_bytes":800,"send_failures":0}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}
