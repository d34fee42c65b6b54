package client

import (
	"math"
	"time"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Status codes the fleet itself uses in frontend messages. Applications
// use their own codes, which sparrowfleet never interprets.
const (
	StatusOK     int32 = sparrowrpc.STATUS_APP
	StatusLost   int32 = sparrowrpc.STATUS_TASK_LOST
	StatusFailed int32 = sparrowrpc.STATUS_TASK_FAILED
)

// Task is one task of a job.
type Task struct {
	// ID must be unique within the job.
	ID string
	// Message is passed, opaque, to the executor that runs the task.
	Message []byte
	// Nodes and Racks restrict where the task may run (host names or IPs,
	// and values of the nodes' "rack" attribute). Empty means anywhere.
	Nodes []string
	Racks []string
	// DelayThreshold, when positive, opts the task into relaxing its
	// preferences: if it has not launched that long after submission the
	// scheduler may also run it in its preferred nodes' racks, after as
	// long again anywhere, and sooner if the coordinator's locality prices
	// say waiting costs more. Zero keeps Nodes and Racks strict, as in
	// original Sparrow. Sent in whole milliseconds.
	DelayThreshold time.Duration
	// InputBytes is the size of the input the task reads from its
	// preferred nodes, which prices moving it elsewhere; zero leaves it
	// unset (the scheduler's default).
	InputBytes int64
}

// User says on whose behalf a job runs, for fair sharing and priorities.
type User struct {
	Name, Group string
	// Priority: a smaller number is served first.
	Priority int32
}

// Constraint restricts every task of a job to node monitors whose
// attribute Key satisfies Op: "=" (one of Values), "!=" (none of Values,
// or absent) or "exists".
type Constraint struct {
	Key    string
	Op     string
	Values []string
}

// Job is a set of tasks to schedule together.
type Job struct {
	// RequestID identifies the job in messages; the Frontend makes one up
	// when it is empty.
	RequestID string
	Tasks     []Task
	User      User
	// ProbeRatio overrides the scheduler's default d when above zero.
	ProbeRatio  float64
	Description string
	// Constraints apply to every task of the job.
	Constraints []Constraint
	// TaskDuration, when above zero, is the job's estimated mean task
	// duration, sent to schedulers run with --short-jobs, which class the
	// job short or long by it (others ignore it). Zero leaves the
	// estimate to the scheduler's history of the app.
	TaskDuration time.Duration
}

// TaskRef identifies a launched task, as the fleet names it.
type TaskRef struct {
	TaskID, RequestID, App string
	// Scheduler is the SchedulerService address that placed the task.
	Scheduler string
}

func refFromWire(id *sparrowrpc.TFullTaskId) TaskRef {
	if id == nil {
		return TaskRef{}
	}
	return TaskRef{TaskID: id.TaskId, RequestID: id.RequestId, App: id.AppId, Scheduler: rpc.HostPortString(id.SchedulerAddress)}
}

func (r TaskRef) wire() *sparrowrpc.TFullTaskId {
	hp, _ := rpc.ParseHostPort(r.Scheduler)
	return &sparrowrpc.TFullTaskId{TaskId: r.TaskID, RequestId: r.RequestID, AppId: r.App, SchedulerAddress: hp}
}

// Message is a task message delivered to a frontend.
type Message struct {
	Task   TaskRef
	Status int32
	Body   []byte
}

func (j Job) wire(app string) *sparrowrpc.TSchedulingRequest {
	req := &sparrowrpc.TSchedulingRequest{
		App:   app,
		Tasks: make([]*sparrowrpc.TTaskSpec, len(j.Tasks)),
		User:  &sparrowrpc.TUserGroupInfo{User: j.User.Name, Group: j.User.Group, Priority: j.User.Priority},
	}
	for i, t := range j.Tasks {
		req.Tasks[i] = &sparrowrpc.TTaskSpec{
			TaskId: t.ID, Message: t.Message,
			Preference: &sparrowrpc.TPlacementPreference{Nodes: t.Nodes, Racks: t.Racks,
				DelayThreshold: int32(min(t.DelayThreshold/time.Millisecond, math.MaxInt32))},
		}
		if t.InputBytes > 0 {
			n := t.InputBytes
			req.Tasks[i].Preference.InputBytes = &n
		}
	}
	if j.ProbeRatio > 0 {
		d := j.ProbeRatio
		req.ProbeRatio = &d
	}
	if j.TaskDuration > 0 {
		sec := j.TaskDuration.Seconds()
		req.TaskSeconds = &sec
	}
	if j.Description != "" {
		desc := j.Description
		req.Description = &desc
	}
	if j.RequestID != "" {
		id := j.RequestID
		req.RequestId = &id
	}
	for _, c := range j.Constraints {
		req.Constraints = append(req.Constraints, &sparrowrpc.TConstraint{Key: c.Key, Op: c.Op, Values: c.Values})
	}
	return req
}
