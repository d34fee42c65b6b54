package coordinator

import (
	"maps"
	"sync"
	"time"

	"github.com/sparrowfleet/sparrow/core/fairshare"
)

// UserShare is one user's line of a published guidance: its running tasks
// summed over the node monitors' reports, and its CMMF allocation.
type UserShare struct {
	Running int
	Target  float64
}

// GuidanceStatus is the last guidance this coordinator published, for
// operators and the fairness fault tests (/status): did the constrained
// user get back to its CMMF share?
type GuidanceStatus struct {
	// Active is whether this coordinator publishes now (the others stand
	// by); a standby's last guidance is from when it last published.
	Active bool
	// Version is the last published version (zero: never published), At
	// when it was computed.
	Version uint64
	At      time.Time
	// Reports is how many node reports the guidance covered.
	Reports int
	// Users has every user with work queued or running in those reports.
	Users map[string]UserShare
}

// published is a coordinator's last published guidance, kept beside the
// daemon rather than in it so that recording it costs the publish path a
// single call. Entries live as long as the process, one per coordinator
// that ever published: one in a daemon, a handful in a test.
var published sync.Map // *Daemon -> GuidanceStatus

// recordGuidance keeps g, published as version at, for Guidance. It
// copies g's maps: the caller may reuse them.
func (d *Daemon) recordGuidance(version uint64, at time.Time, reports int, g fairshare.Guidance) {
	st := GuidanceStatus{Version: version, At: at, Reports: reports, Users: make(map[string]UserShare, len(g.Target))}
	for u, target := range g.Target {
		st.Users[u] = UserShare{Running: g.Running[u], Target: target}
	}
	published.Store(d, st)
}

// Guidance returns a copy of the last guidance this coordinator published
// and whether it publishes now. Safe for concurrent use.
func (d *Daemon) Guidance() GuidanceStatus {
	var st GuidanceStatus
	if v, ok := published.Load(d); ok {
		st = v.(GuidanceStatus)
		st.Users = maps.Clone(st.Users)
	}
	st.Active = d.Stats().Active
	return st
}
