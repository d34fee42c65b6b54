package scheduler

import (
	"fmt"
	"net"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Limits on a request's identifiers, so that a client cannot make the
// scheduler keep arbitrarily large keys.
const (
	maxIDBytes    = 256
	maxAppBytes   = 256
	maxTasksInJob = 1 << 20
)

// maxConstraints bounds a job's constraints.
const maxConstraints = 64

// Ratios are the default probe ratios: one for unconstrained jobs, and
// one for jobs with job-level constraints or task placement preferences.
// A request's own probeRatio overrides either. A zero Constrained falls
// back to Default.
type Ratios struct {
	Default, Constrained float64
}

// Job is a validated scheduling request.
type Job struct {
	// RequestID is the frontend's chosen id, or "" to have one made up.
	RequestID   string
	App         string
	User        *sparrowrpc.TUserGroupInfo
	ProbeRatio  float64
	Constraints []placement.Constraint
	Tasks       []placement.Task
	Specs       []*sparrowrpc.TTaskSpec
	// Relax lists the tasks with preferences that opted into relaxation
	// (a positive delayThreshold), in task order; see locality.go.
	Relax []Relaxation
	// FrontendAddress is the "host:port" the job's messages go to, or ""
	// for its app's registered frontend (frontendjobs.go).
	FrontendAddress string
	// FrontendFeatures are the FRONTEND_* extensions the frontend at
	// FrontendAddress serves (frontendbatch.go); 0 without an address.
	FrontendFeatures int32
}

// Constrained reports whether the job limits where any of its tasks run.
func (j Job) Constrained() bool {
	if len(j.Constraints) > 0 {
		return true
	}
	for _, t := range j.Tasks {
		if t.Constrained() {
			return true
		}
	}
	return false
}

// ParseRequest validates req and returns the job it describes, or an error
// naming the first fault found. It has no side effects, so a bad request is
// never partly scheduled. An empty task list is valid: frontends use it as a
// liveness check.
func ParseRequest(req *sparrowrpc.TSchedulingRequest, ratios Ratios) (Job, error) {
	if req == nil {
		return Job{}, fmt.Errorf("missing scheduling request")
	}
	if req.App == "" {
		return Job{}, fmt.Errorf("missing app")
	}
	if len(req.App) > maxAppBytes {
		return Job{}, fmt.Errorf("app name is %d bytes, over the %d-byte limit", len(req.App), maxAppBytes)
	}
	if len(req.Tasks) > maxTasksInJob {
		return Job{}, fmt.Errorf("job has %d tasks, over the limit of %d", len(req.Tasks), maxTasksInJob)
	}
	job := Job{App: req.App, User: req.User}
	if job.User == nil {
		job.User = &sparrowrpc.TUserGroupInfo{}
	}
	if req.RequestId != nil && *req.RequestId != "" {
		if len(*req.RequestId) > maxIDBytes {
			return Job{}, fmt.Errorf("request id is %d bytes, over the %d-byte limit", len(*req.RequestId), maxIDBytes)
		}
		job.RequestID = *req.RequestId
	}
	if req.FrontendAddress != nil {
		if err := ParseFrontendAddress(*req.FrontendAddress); err != nil {
			return Job{}, err
		}
		job.FrontendAddress = *req.FrontendAddress
		job.FrontendFeatures = req.GetFrontendFeatures()
	}
	if len(req.Constraints) > maxConstraints {
		return Job{}, fmt.Errorf("job has %d constraints, over the limit of %d", len(req.Constraints), maxConstraints)
	}
	for i, tc := range req.Constraints {
		if tc == nil {
			return Job{}, fmt.Errorf("constraint %d is missing", i)
		}
		c := placement.Constraint{Key: tc.Key, Op: tc.Op, Values: tc.Values}
		if err := c.Validate(); err != nil {
			return Job{}, err
		}
		job.Constraints = append(job.Constraints, c)
	}
	seen := make(map[string]struct{}, len(req.Tasks))
	job.Tasks = make([]placement.Task, len(req.Tasks))
	job.Specs = make([]*sparrowrpc.TTaskSpec, len(req.Tasks))
	for i, spec := range req.Tasks {
		if spec == nil {
			return Job{}, fmt.Errorf("task %d is missing", i)
		}
		if len(spec.TaskId) > maxIDBytes {
			return Job{}, fmt.Errorf("task %d: id is %d bytes, over the %d-byte limit", i, len(spec.TaskId), maxIDBytes)
		}
		if _, dup := seen[spec.TaskId]; dup {
			return Job{}, fmt.Errorf("duplicate task id %q", spec.TaskId)
		}
		seen[spec.TaskId] = struct{}{}
		t := placement.Task{ID: spec.TaskId}
		if p := spec.Preference; p != nil {
			t.Nodes, t.Racks = p.Nodes, p.Racks
			if rx, ok := relaxOf(i, t, p); ok {
				job.Relax = append(job.Relax, rx)
			}
		}
		job.Tasks[i] = t
		job.Specs[i] = spec
	}
	job.ProbeRatio = ratios.Default
	if job.Constrained() && ratios.Constrained != 0 {
		job.ProbeRatio = ratios.Constrained
	}
	if req.ProbeRatio != nil {
		job.ProbeRatio = *req.ProbeRatio
	}
	if err := placement.CheckProbeRatio(job.ProbeRatio); err != nil {
		return Job{}, err
	}
	return job, nil
}

// ParseFrontendAddress checks a job's frontendAddress: "host:port" with a
// port in 1..65535, within maxIDBytes, and a host a scheduler can call
// back: neither empty nor a wildcard (a frontend listening on every
// interface must advertise one of them).
func ParseFrontendAddress(addr string) error {
	if len(addr) > maxIDBytes {
		return fmt.Errorf("frontend address is %d bytes, over the %d-byte limit", len(addr), maxIDBytes)
	}
	hp, err := rpc.ParseHostPort(addr)
	if err != nil {
		return fmt.Errorf("frontend %w", err)
	}
	if ip := net.ParseIP(hp.Host); ip != nil && ip.IsUnspecified() {
		return fmt.Errorf("frontend address %q has the wildcard host %s, which no scheduler can call back: the frontend must advertise its own address", addr, hp.Host)
	}
	return nil
}
