package coordinator

import (
	"maps"
	"sync"
	"time"

	"github.com/sparrowfleet/sparrow/core/fairshare"
	"github.com/sparrowfleet/sparrow/core/locality"
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
	// Locality is the last locality prices this coordinator computed (nil:
	// none; see Config.Locality).
	Locality *LocalityStatus
}

// LocalityStatus is a period's locality prices, for operators: what the
// flow did with the queued work and what it charges per rack.
type LocalityStatus struct {
	Version uint64
	At      time.Time
	// Solve is how long building, solving and encoding took; Nodes the
	// node monitors priced.
	Solve time.Duration
	Nodes int
	// TaskMillis is the mean of the task run times the node monitors
	// measured (0: none yet), which prices the nodes that measured none.
	TaskMillis int64
	// Local, Rack and Core count queued tasks the flow left on their node,
	// moved within their rack and across the core.
	Local, Rack, Core int64
	// Cluster and Racks are the cluster's and each rack's price (cost
	// units: core/quincy.CostUnit per second of running).
	Cluster int64
	Racks   map[string]int64
	// Bytes is the prices message's size; Sent, SentBytes and Failed count
	// the sends to schedulers so far (LocalityStats), as of the call.
	Bytes           int
	Sent, SentBytes uint64
	Failed          uint64
}

// published is a coordinator's last published guidance, kept beside the
// daemon rather than in it so that recording it costs the publish path a
// single call. Entries live as long as the process, one per coordinator
// that ever published: one in a daemon, a handful in a test.
var published sync.Map // *Daemon -> GuidanceStatus

// priced holds each coordinator's last LocalityStatus, as published does
// its guidance.
var priced sync.Map // *Daemon -> LocalityStatus

// recordLocality keeps a period's outcome, priced as version at, for
// Guidance. It copies the rack prices.
func (d *Daemon) recordLocality(version uint64, at time.Time, nodes int, taskMillis int64, out locality.Outcome) {
	priced.Store(d, LocalityStatus{Version: version, At: at, Solve: d.Stats().Locality.Solve, Nodes: nodes, TaskMillis: taskMillis,
		Local: out.Local, Rack: out.Rack, Core: out.Core, Cluster: out.Prices.Cluster, Racks: maps.Clone(out.Prices.Rack)})
}

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
	if v, ok := priced.Load(d); ok {
		l := v.(LocalityStatus)
		l.Racks = maps.Clone(l.Racks)
		ls := d.Stats().Locality
		l.Bytes, l.Sent, l.SentBytes, l.Failed = ls.Bytes, ls.Sent, ls.SentBytes, ls.Failed
		st.Locality = &l
	}
	return st
}
