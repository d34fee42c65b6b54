package membership

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/memberlist"
)

// apps returns n app names of length size each, in descending order.
func apps(n, size int) []string {
	out := make([]string, n)
	for i := range out {
		name := fmt.Sprintf("%02d", n-i)
		out[i] = name + strings.Repeat("x", size-len(name))
	}
	return out
}

// A scheduler's backlog advert names its backlogged apps, sorted, only
// with a backlog and at most MaxBacklogApps of them; otherwise none,
// which says any app.
func TestWithBacklog(t *testing.T) {
	tests := []struct {
		name string
		w    float64
		apps []string
		want []string
	}{
		{"no backlog names no app", 0, []string{"a"}, nil},
		{"one app", 2, []string{"a"}, []string{"a"}},
		{"several apps, sorted", 1, []string{"c", "a", "b"}, []string{"a", "b", "c"}},
		{"the most apps named", 4, apps(MaxBacklogApps, 3), slices.Sorted(slices.Values(apps(MaxBacklogApps, 3)))},
		{"one app too many: any app", 4, apps(MaxBacklogApps+1, 3), nil},
		{"a backlog of no app named: any app", 4, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.apps)
			m := Meta{Role: RoleScheduler, BacklogApps: []string{"stale"}}.WithBacklog(tt.w, in)
			if m.Backlog != tt.w || !slices.Equal(m.BacklogApps, tt.want) {
				t.Fatalf("WithBacklog(%v, %v) = %v %v, want %v %v", tt.w, tt.apps, m.Backlog, m.BacklogApps, tt.w, tt.want)
			}
			if !slices.Equal(in, tt.apps) {
				t.Fatalf("WithBacklog changed its argument to %v", in)
			}
		})
	}
}

// The backlog's apps travel only while the whole metadata fits in
// memberlist's limit; when they would not, the metadata goes without
// them (any app) rather than not at all.
func TestEncodeBacklogApps(t *testing.T) {
	// A scheduler's metadata as the cluster stores it: addresses, the
	// load-report attribute, the operator endpoint and a version.
	sched := Meta{
		Role: RoleScheduler, Service: "scheduler-17.sparrow.example.internal:20503",
		Internal: "scheduler-17.sparrow.example.internal:20507",
		Attrs:    map[string]string{AttrLoadReports: "1"},
		HTTP:     "scheduler-17.sparrow.example.internal:9090", Version: "v1.2.3-45-gabcdef0",
	}
	tests := []struct {
		name     string
		meta     Meta
		wantApps bool // the list travels
		wantErr  bool
	}{
		{"short names fit", sched.WithBacklog(2, apps(MaxBacklogApps, 8)), true, false},
		{"one long name fits", sched.WithBacklog(2, apps(1, 100)), true, false},
		{"many long names do not: any app", sched.WithBacklog(2, apps(MaxBacklogApps, 64)), false, false},
		{"a list alone too long: any app", Meta{Role: RoleScheduler, Backlog: 1, BacklogApps: apps(MaxBacklogApps, 80)}, false, false},
		{"metadata too long without the list fails", Meta{Role: RoleScheduler, Service: strings.Repeat("s", 600)}.WithBacklog(1, []string{"a"}), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.meta.Encode()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Encode: %v, want an error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if len(b) > memberlist.MetaMaxSize {
				t.Fatalf("encoded %d bytes, over %d", len(b), memberlist.MetaMaxSize)
			}
			got, err := DecodeMeta(b)
			if err != nil {
				t.Fatal(err)
			}
			if got.Backlog != tt.meta.Backlog || got.Service != tt.meta.Service || got.HTTP != tt.meta.HTTP {
				t.Fatalf("decoded %+v, want the rest of %+v", got, tt.meta)
			}
			want := tt.meta.BacklogApps
			if !tt.wantApps {
				want = nil
			}
			if !slices.Equal(got.BacklogApps, want) {
				t.Fatalf("decoded backlog apps %v, want %v", got.BacklogApps, want)
			}
		})
	}
}

// The backlog's apps are an additive field: a scheduler built before it
// sends a backlog without them (any app), and an old member decodes a new
// scheduler's metadata, ignoring them.
func TestBacklogAppsAreAdditive(t *testing.T) {
	type oldMeta struct {
		Role    Role    `json:"r"`
		Service string  `json:"s,omitempty"`
		Backlog float64 `json:"w,omitempty"`
	}
	tests := []struct {
		name     string
		wire     string
		wantApps []string
	}{
		{"old scheduler: any app", `{"r":"scheduler","s":"10.0.0.1:20503","w":4}`, nil},
		{"new scheduler", `{"r":"scheduler","s":"10.0.0.1:20503","w":4,"wa":["a","b"]}`, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeMeta([]byte(tt.wire))
			if err != nil {
				t.Fatal(err)
			}
			if got.Backlog != 4 || !slices.Equal(got.BacklogApps, tt.wantApps) {
				t.Fatalf("DecodeMeta = %+v, want backlog 4 for apps %v", got, tt.wantApps)
			}
			var old oldMeta
			if err := json.Unmarshal([]byte(tt.wire), &old); err != nil {
				t.Fatalf("an old member cannot decode %s: %v", tt.wire, err)
			}
			if old.Backlog != 4 || old.Service != "10.0.0.1:20503" {
				t.Fatalf("an old member decodes %s as %+v", tt.wire, old)
			}
		})
	}
	// Without a backlog, the field is not sent.
	b, err := Meta{Role: RoleScheduler}.WithBacklog(0, []string{"a"}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"wa"`) || strings.Contains(string(b), `"w"`) {
		t.Fatalf("metadata without a backlog is %s", b)
	}
}
