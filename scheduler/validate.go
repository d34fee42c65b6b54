package scheduler

import (
	"fmt"

	"github.com/sparrowfleet/sparrow/placement"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Limits on a request's identifiers, so that a client cannot make the
// scheduler keep arbitrarily large keys.
const (
	maxIDBytes    = 256
	maxAppBytes   = 256
	maxTasksInJob = 1 << 20
)

// Job is a validated scheduling request.
type Job struct {
	// RequestID is the frontend's chosen id, or "" to have one made up.
	RequestID  string
	App        string
	User       *sparrowrpc.TUserGroupInfo
	ProbeRatio float64
	Tasks      []placement.Task
	Specs      []*sparrowrpc.TTaskSpec
}

// ParseRequest validates req and returns the job it describes, or an error
// naming the first fault found. It has no side effects, so a bad request is
// never partly scheduled. An empty task list is valid: frontends use it as a
// liveness check.
func ParseRequest(req *sparrowrpc.TSchedulingRequest, defaultRatio float64) (Job, error) {
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
	job := Job{App: req.App, User: req.User, ProbeRatio: defaultRatio}
	if job.User == nil {
		job.User = &sparrowrpc.TUserGroupInfo{}
	}
	if req.ProbeRatio != nil {
		job.ProbeRatio = *req.ProbeRatio
	}
	if err := placement.CheckProbeRatio(job.ProbeRatio); err != nil {
		return Job{}, err
	}
	if req.RequestId != nil && *req.RequestId != "" {
		if len(*req.RequestId) > maxIDBytes {
			return Job{}, fmt.Errorf("request id is %d bytes, over the %d-byte limit", len(*req.RequestId), maxIDBytes)
		}
		job.RequestID = *req.RequestId
	}
	if len(req.Constraints) > 0 {
		return Job{}, fmt.Errorf("job-level constraints are not supported by this scheduler yet")
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
		}
		job.Tasks[i] = t
		job.Specs[i] = spec
	}
	return job, nil
}
