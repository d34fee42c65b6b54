package scheduler

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

func ptr[T any](v T) *T { return &v }

func specs(ids ...string) []*sparrowrpc.TTaskSpec {
	out := make([]*sparrowrpc.TTaskSpec, len(ids))
	for i, id := range ids {
		out[i] = &sparrowrpc.TTaskSpec{TaskId: id, Message: []byte("msg-" + id)}
	}
	return out
}

func TestParseRequestErrors(t *testing.T) {
	long := strings.Repeat("x", maxIDBytes+1)
	tests := []struct {
		name string
		req  *sparrowrpc.TSchedulingRequest
		def  float64  // 0 means DefaultProbeRatio
		want []string // substrings of the error
	}{
		{name: "nil request", req: nil, want: []string{"missing scheduling request"}},
		{name: "missing app", req: &sparrowrpc.TSchedulingRequest{Tasks: specs("a")}, want: []string{"missing app"}},
		{name: "overlong app", req: &sparrowrpc.TSchedulingRequest{App: strings.Repeat("a", maxAppBytes+1)}, want: []string{"app name", "257 bytes", "256-byte limit"}},
		{name: "too many tasks", req: &sparrowrpc.TSchedulingRequest{App: "a", Tasks: make([]*sparrowrpc.TTaskSpec, maxTasksInJob+1)}, want: []string{"over the limit"}},
		{name: "duplicate task ids", req: &sparrowrpc.TSchedulingRequest{App: "a", Tasks: specs("t1", "t2", "t1")}, want: []string{"duplicate task id", `"t1"`}},
		{name: "duplicate empty task ids", req: &sparrowrpc.TSchedulingRequest{App: "a", Tasks: specs("", "")}, want: []string{"duplicate task id", `""`}},
		{name: "nil task", req: &sparrowrpc.TSchedulingRequest{App: "a", Tasks: append(specs("t0"), nil)}, want: []string{"task 1 is missing"}},
		{name: "overlong task id", req: &sparrowrpc.TSchedulingRequest{App: "a", Tasks: specs("ok", long)}, want: []string{"task 1", "257 bytes"}},
		{name: "overlong request id", req: &sparrowrpc.TSchedulingRequest{App: "a", RequestId: ptr(long)}, want: []string{"request id", "257 bytes"}},
		{name: "NaN ratio", req: &sparrowrpc.TSchedulingRequest{App: "a", ProbeRatio: ptr(math.NaN())}, want: []string{"not a finite number"}},
		{name: "infinite ratio", req: &sparrowrpc.TSchedulingRequest{App: "a", ProbeRatio: ptr(math.Inf(1))}, want: []string{"not a finite number"}},
		{name: "ratio below 1", req: &sparrowrpc.TSchedulingRequest{App: "a", ProbeRatio: ptr(0.5)}, want: []string{"below 1"}},
		{name: "zero ratio", req: &sparrowrpc.TSchedulingRequest{App: "a", ProbeRatio: ptr(0.0)}, want: []string{"below 1"}},
		{name: "negative ratio", req: &sparrowrpc.TSchedulingRequest{App: "a", ProbeRatio: ptr(-2.0)}, want: []string{"below 1"}},
		{name: "huge ratio", req: &sparrowrpc.TSchedulingRequest{App: "a", ProbeRatio: ptr(1e9)}, want: []string{"above the maximum"}},
		{name: "bad default ratio", req: &sparrowrpc.TSchedulingRequest{App: "a"}, def: -1, want: []string{"below 1"}},
		{
			name: "unknown constraint operator",
			req: &sparrowrpc.TSchedulingRequest{App: "a", Tasks: specs("t"), Constraints: []*sparrowrpc.TConstraint{
				{Key: "gpu", Op: "~"},
			}},
			want: []string{"unknown operator", `"~"`},
		},
		{
			name: "constraint without a key",
			req: &sparrowrpc.TSchedulingRequest{App: "a", Tasks: specs("t"), Constraints: []*sparrowrpc.TConstraint{
				{Op: "exists"},
			}},
			want: []string{"missing attribute key"},
		},
		{
			name: "= constraint without values",
			req: &sparrowrpc.TSchedulingRequest{App: "a", Tasks: specs("t"), Constraints: []*sparrowrpc.TConstraint{
				{Key: "rack", Op: "="},
			}},
			want: []string{"needs at least one value"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := tt.def
			if def == 0 {
				def = DefaultProbeRatio
			}
			job, err := ParseRequest(tt.req, Ratios{Default: def})
			if err == nil {
				t.Fatalf("ParseRequest accepted %+v", job)
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if !reflect.DeepEqual(job, Job{}) {
				t.Errorf("a refused request returned a partial job: %+v", job)
			}
		})
	}
}

func TestParseRequestAccepts(t *testing.T) {
	user := &sparrowrpc.TUserGroupInfo{User: "alice", Group: "eng", Priority: 2}
	maxID := strings.Repeat("i", maxIDBytes)
	tests := []struct {
		name  string
		req   *sparrowrpc.TSchedulingRequest
		def   float64
		check func(t *testing.T, j Job)
	}{
		{
			name: "empty task list is a liveness check",
			req:  &sparrowrpc.TSchedulingRequest{App: "a"},
			def:  2,
			check: func(t *testing.T, j Job) {
				if len(j.Tasks) != 0 || len(j.Specs) != 0 || j.App != "a" {
					t.Fatalf("job %+v", j)
				}
			},
		},
		{
			name: "default ratio applied",
			req:  &sparrowrpc.TSchedulingRequest{App: "a", Tasks: specs("t")},
			def:  1.5,
			check: func(t *testing.T, j Job) {
				if j.ProbeRatio != 1.5 {
					t.Fatalf("ratio %v, want the default 1.5", j.ProbeRatio)
				}
			},
		},
		{
			name: "request ratio used",
			req:  &sparrowrpc.TSchedulingRequest{App: "a", Tasks: specs("t"), ProbeRatio: ptr(3.0)},
			def:  1.5,
			check: func(t *testing.T, j Job) {
				if j.ProbeRatio != 3 {
					t.Fatalf("ratio %v, want the request's 3", j.ProbeRatio)
				}
			},
		},
		{
			name: "request ratio overrides a bad default",
			req:  &sparrowrpc.TSchedulingRequest{App: "a", ProbeRatio: ptr(1.0)},
			def:  math.NaN(),
			check: func(t *testing.T, j Job) {
				if j.ProbeRatio != 1 {
					t.Fatalf("ratio %v", j.ProbeRatio)
				}
			},
		},
		{
			name: "ratio at the maximum",
			req:  &sparrowrpc.TSchedulingRequest{App: "a", ProbeRatio: ptr(float64(placement.MaxProbeRatio))},
			def:  2,
			check: func(t *testing.T, j Job) {
				if j.ProbeRatio != placement.MaxProbeRatio {
					t.Fatalf("ratio %v", j.ProbeRatio)
				}
			},
		},
		{
			name: "missing user becomes empty",
			req:  &sparrowrpc.TSchedulingRequest{App: "a"},
			def:  2,
			check: func(t *testing.T, j Job) {
				if j.User == nil || *j.User != (sparrowrpc.TUserGroupInfo{}) {
					t.Fatalf("user %+v", j.User)
				}
			},
		},
		{
			name: "user kept",
			req:  &sparrowrpc.TSchedulingRequest{App: "a", User: user},
			def:  2,
			check: func(t *testing.T, j Job) {
				if j.User != user {
					t.Fatalf("user %+v", j.User)
				}
			},
		},
		{
			name: "request id kept, empty means none",
			req:  &sparrowrpc.TSchedulingRequest{App: "a", RequestId: ptr("")},
			def:  2,
			check: func(t *testing.T, j Job) {
				if j.RequestID != "" {
					t.Fatalf("request id %q", j.RequestID)
				}
			},
		},
		{
			name: "ids at the length limits",
			req:  &sparrowrpc.TSchedulingRequest{App: strings.Repeat("a", maxAppBytes), RequestId: ptr(maxID), Tasks: specs(maxID)},
			def:  2,
			check: func(t *testing.T, j Job) {
				if j.RequestID != maxID || j.Tasks[0].ID != maxID {
					t.Fatalf("job %+v", j)
				}
			},
		},
		{
			name: "empty constraint list is fine",
			req:  &sparrowrpc.TSchedulingRequest{App: "a", Constraints: []*sparrowrpc.TConstraint{}},
			def:  2,
		},
		{
			name: "tasks and preferences carried in order",
			req: &sparrowrpc.TSchedulingRequest{App: "a", RequestId: ptr("req-1"), Tasks: []*sparrowrpc.TTaskSpec{
				{TaskId: "0", Message: []byte("m0")},
				{TaskId: "1", Preference: &sparrowrpc.TPlacementPreference{Nodes: []string{"h1", "h2"}}},
				{TaskId: "2", Preference: &sparrowrpc.TPlacementPreference{Racks: []string{"r1"}}},
				{TaskId: "3", Preference: &sparrowrpc.TPlacementPreference{}},
			}},
			def: 2,
			check: func(t *testing.T, j Job) {
				want := []placement.Task{
					{ID: "0"},
					{ID: "1", Nodes: []string{"h1", "h2"}},
					{ID: "2", Racks: []string{"r1"}},
					{ID: "3"},
				}
				if !reflect.DeepEqual(j.Tasks, want) {
					t.Fatalf("tasks %+v, want %+v", j.Tasks, want)
				}
				if j.Tasks[3].Constrained() {
					t.Fatal("an empty preference made the task constrained")
				}
				if len(j.Specs) != 4 || string(j.Specs[0].Message) != "m0" || j.Specs[2].TaskId != "2" {
					t.Fatalf("specs %+v", j.Specs)
				}
				if j.RequestID != "req-1" {
					t.Fatalf("request id %q", j.RequestID)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job, err := ParseRequest(tt.req, Ratios{Default: tt.def})
			if err != nil {
				t.Fatalf("ParseRequest: %v", err)
			}
			if tt.check != nil {
				tt.check(t, job)
			}
		})
	}
}
