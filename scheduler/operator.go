package scheduler

import (
	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// OperatorStatus is the daemon's /status document: its view and load.
// It is a cheap snapshot, taken once per request.
func (d *Daemon) OperatorStatus() httpapi.Status {
	st := d.Stats()
	return httpapi.Status{
		Name: d.Cluster.Name(), Role: membership.RoleScheduler, Gossip: d.Cluster.Addr(),
		Scheduler: &httpapi.SchedulerStatus{
			NodeMonitors:   len(d.Cluster.Members(membership.RoleNodeMonitor)),
			ActiveRequests: st.ActiveRequests, RunningTracked: st.RunningTracked,
			JobsSubmitted: st.JobsSubmitted, TasksLaunched: st.TasksLaunched,
			Held: st.Hold.Held, HoldRefused: st.Hold.Refused,
			LaunchDelaySeconds: st.LaunchDelaySeconds, LaunchDelays: st.TasksLaunched,
		},
	}
}
