package httpapi

// CoordinatorStatus is a fairness coordinator's role and the guidance it
// last published: each user's cluster-wide running tasks (summed from the
// node monitors' reports) and CMMF target, in slots.
type CoordinatorStatus struct {
	// Active is whether it publishes now (the others stand by).
	Active bool `json:"active"`
	// Version is the last published guidance version (0: none yet); At is
	// when it was computed (RFC 3339, nanoseconds; empty: none yet).
	Version uint64 `json:"version"`
	At      string `json:"at,omitempty"`
	// Reports is how many node monitors' reports it covered.
	Reports int                  `json:"reports"`
	Users   map[string]UserShare `json:"users"`
	// Locality is the last locality prices (coordinator --locality).
	Locality *LocalityStatus `json:"locality,omitempty"`
}

// LocalityStatus is a coordinator's last locality prices: the solve, what
// the flow did with the queued tasks, and the cluster's and racks' prices
// in cost units (1000 per second of running).
type LocalityStatus struct {
	Version      uint64           `json:"version"`
	At           string           `json:"at"`
	SolveSeconds float64          `json:"solve_seconds"`
	Nodes        int              `json:"nodes"`
	TaskMillis   int64            `json:"task_ms"`
	Local        int64            `json:"local"`
	Rack         int64            `json:"rack"`
	Core         int64            `json:"core"`
	Cluster      int64            `json:"cluster"`
	Racks        map[string]int64 `json:"racks"`
	// Bytes is the prices message's size; Sent, SentBytes and Failed
	// count the sends to schedulers since the coordinator started.
	Bytes     int    `json:"bytes"`
	Sent      uint64 `json:"sent"`
	SentBytes uint64 `json:"sent_bytes"`
	Failed    uint64 `json:"send_failures"`
}

// UserShare is one user's cluster-wide running tasks and CMMF target.
type UserShare struct {
	Running int     `json:"running"`
	Target  float64 `json:"target"`
}
