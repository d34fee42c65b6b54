package httpapi

import "github.com/sparrowfleet/sparrow/internal/membership"

// Status is the JSON document a daemon serves at /status. Gossip metadata
// carries what every scheduler needs and fits in 512 bytes (role,
// addresses, slots, apps); /status carries the rest, which only operators
// read: live slot use, queue length and per-user counts.
type Status struct {
	Name   string          `json:"name"`
	Role   membership.Role `json:"role"`
	Gossip string          `json:"gossip"`
	// Version is the daemon's build (buildinfo.Info.Short); the server
	// fills it in when the daemon's Status leaves it empty.
	Version string `json:"version,omitempty"`
	// ViewSize counts the daemons (observers aside) in this daemon's
	// gossip view, itself included: every member of a formed fleet
	// reports the fleet's size.
	ViewSize int `json:"view_size,omitempty"`
	// Ready and Reason are what /readyz would answer at the same moment.
	Ready  bool   `json:"ready"`
	Reason string `json:"reason,omitempty"`
	// Started is when the daemon's process started (RFC 3339); the
	// server fills it in when the daemon's Status leaves it empty.
	Started string `json:"started,omitempty"`

	NodeMonitor *NodeMonitorStatus `json:"nodemonitor,omitempty"`
	Scheduler   *SchedulerStatus   `json:"scheduler,omitempty"`
	Coordinator *CoordinatorStatus `json:"coordinator,omitempty"`
}

// NodeMonitorStatus is a node monitor's slots, queue and executors.
type NodeMonitorStatus struct {
	Slots    int `json:"slots"`
	Free     int `json:"free"`
	Fetching int `json:"fetching"`
	Running  int `json:"running"`
	// Queued counts reservations waiting for a slot.
	Queued   int      `json:"queued"`
	Launches uint64   `json:"launches"`
	Apps     []string `json:"apps"`
	// Users has the users with reservations queued or tasks running here.
	Users map[string]UserCounts `json:"users"`
}

// UserCounts are one user's numbers on one node monitor. An empty user
// name is work sent without user information.
type UserCounts struct {
	Queued  int `json:"queued"`
	Running int `json:"running"`
}

// SchedulerStatus is a scheduler's view and load.
type SchedulerStatus struct {
	// NodeMonitors is how many live node monitors it can sample.
	NodeMonitors   int    `json:"node_monitors"`
	ActiveRequests int    `json:"active_requests"`
	RunningTracked int    `json:"running_tracked"`
	JobsSubmitted  uint64 `json:"jobs_submitted"`
	TasksLaunched  uint64 `json:"tasks_launched"`
	// Held is the submitJob calls held now on a saturated fleet;
	// HoldRefused counts jobs refused for saturation since the start.
	Held        int    `json:"held"`
	HoldRefused uint64 `json:"hold_refused"`
	// LaunchDelaySeconds sums, over the LaunchDelays tasks launched since
	// the start, each task's scheduling delay: from its job's submission
	// to its hand-out to a node monitor.
	LaunchDelaySeconds float64 `json:"launch_delay_seconds"`
	LaunchDelays       uint64  `json:"launch_delays"`
}
