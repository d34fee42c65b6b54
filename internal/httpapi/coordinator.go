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
}

// UserShare is one user's cluster-wide running tasks and CMMF target.
type UserShare struct {
	Running int     `json:"running"`
	Target  float64 `json:"target"`
}
