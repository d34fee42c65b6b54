package membership

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hashicorp/memberlist"
)

// Role is what a member does in the fleet.
type Role string

// The roles a member can advertise.
const (
	RoleScheduler   Role = "scheduler"
	RoleNodeMonitor Role = "nodemonitor"
	// RoleObserver is a short-lived member that only watches the view
	// (`sparrow status`). Daemons select peers by exact role, so an
	// observer is never sampled as a node monitor nor asked for tasks as
	// a scheduler.
	RoleObserver Role = "observer"
)

// Meta is what a member advertises through memberlist's node metadata. It
// must encode within memberlist.MetaMaxSize (512 bytes), so keys are short.
type Meta struct {
	Role Role `json:"r"`
	// Service is the public Thrift address: SchedulerService for a
	// scheduler, NodeMonitorService for a node monitor.
	Service string `json:"s,omitempty"`
	// Internal is the Thrift address peers call: GetTaskService for a
	// scheduler, InternalService for a node monitor.
	Internal string `json:"i,omitempty"`
	// Slots is a node monitor's slot count.
	Slots int `json:"n,omitempty"`
	// Apps lists the apps with an executor on a node monitor.
	Apps []string `json:"a,omitempty"`
	// Attrs are a node monitor's attributes, e.g. "rack"; a scheduler's
	// say what it wants from node monitors (AttrLoadReports).
	Attrs map[string]string `json:"t,omitempty"`
	// HTTP is the daemon's operator endpoint ("host:port" serving
	// /status, /readyz and /metrics), empty when it serves none. It is
	// advertised so that `sparrow status` can fetch what does not fit in
	// the 512 bytes of gossip metadata, such as per-user counts.
	HTTP string `json:"h,omitempty"`
	// Boot is a node monitor's start nonce, new each time the process
	// starts. A member declared dead that is live again with the same Boot
	// never stopped (gossip can declare a member dead on a partitioned
	// peer's stale word); one with a new Boot restarted and lost its
	// running tasks.
	Boot string `json:"b,omitempty"`
	// Version is the member's build (buildinfo.Info.Short), so that
	// operators see mixed versions during a rolling upgrade. Cluster fills
	// it in; members built before it was advertised leave it empty, and
	// their decoders ignore it.
	Version string `json:"v,omitempty"`
	// LongWork is a node monitor's long-work advert under the
	// long-task-aware policy (shortjobs.LongWork.Advert): how many of its
	// slots fetch or run a long job's task, saturated at 255. Zero, or
	// absent from a node monitor without the policy, says none; it adds
	// at most 9 bytes to the metadata.
	LongWork uint8 `json:"l,omitempty"`
	// LongLevel is the second byte of a node monitor's long-work advert
	// (shortjobs.Monitor.Advert2): the coarse level of its long work
	// running, being fetched and queued (shortjobs.LongLevel), by which
	// schedulers steer long jobs. It is additive: members built before it
	// ignore it and read LongWork as before. Absent says the node
	// monitor sends the one-byte advert (LongAdvert); a node monitor that
	// sends levels leaves it out only at level 0, which its LongWork of 0
	// says as well.
	LongLevel uint8 `json:"ll,omitempty"`
	// Backlog is a scheduler's short-backlog advert when it answers pulls
	// (shortjobs.AdvertWork): the least estimated remaining work, in
	// seconds and rounded up to a power of two, of its short jobs still
	// waiting with unlaunched tasks. Zero, or absent, says none.
	Backlog float64 `json:"w,omitempty"`
	// BacklogApps names, sorted, the apps of the jobs in a scheduler's
	// short backlog, so that a node monitor hosting none of them does
	// not pull from it for nothing. It is set only with Backlog > 0
	// (WithBacklog), holds at most MaxBacklogApps names, and Encode
	// leaves it out when the metadata would not fit otherwise. Absent
	// (or empty) with Backlog > 0 says any app: the node monitor pulls
	// whatever apps it hosts, as from a scheduler that does not send
	// it. It is additive: members built before it ignore it, as
	// DecodeMeta (encoding/json) ignores fields it does not know, and
	// pull from the scheduler whatever its backlog's apps.
	BacklogApps []string `json:"wa,omitempty"`
}

// MaxBacklogApps bounds Meta.BacklogApps: a backlog of more apps is
// advertised as one of any app.
const MaxBacklogApps = 8

// WithBacklog returns m advertising short-backlog advert w for the
// backlogged apps (Meta.Backlog, Meta.BacklogApps): apps, sorted, when w
// is above zero and there are at most MaxBacklogApps of them; none, which
// says any app, otherwise. It does not keep apps.
func (m Meta) WithBacklog(w float64, apps []string) Meta {
	m.Backlog, m.BacklogApps = w, nil
	if w > 0 && len(apps) > 0 && len(apps) <= MaxBacklogApps {
		m.BacklogApps = slices.Sorted(slices.Values(apps))
	}
	return m
}

// WithLongWork returns m advertising the node monitor's two-byte
// long-work advert a (shortjobs.Monitor.Advert2): LongWork, then
// LongLevel.
func (m Meta) WithLongWork(a [2]byte) Meta {
	m.LongWork, m.LongLevel = a[0], a[1]
	return m
}

// LongAdvert returns the long-work advert m carries, as
// shortjobs.AdvertLevel and shortjobs.AdvertBusy read it: two bytes
// (LongWork, LongLevel) when it has a level, else the one byte LongWork,
// as a node monitor that sends no level (built before levels, or not
// steering long jobs) advertises it.
func (m Meta) LongAdvert() []byte {
	if m.LongLevel > 0 {
		return []byte{m.LongWork, m.LongLevel}
	}
	return []byte{m.LongWork}
}

// AttrLoadReports, set to "1" in a scheduler's Attrs, asks node monitors
// for their load reports (scheduler --max-queue-wait): only schedulers
// that use them receive them, so the rest of the fleet pays nothing.
const AttrLoadReports = "load"

// Encode returns m's wire form, or an error naming the size if it does not
// fit in memberlist's metadata limit. A Meta.BacklogApps that would not
// fit is left out, which says any app.
func (m Meta) Encode() ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode member metadata: %w", err)
	}
	if len(b) > memberlist.MetaMaxSize && len(m.BacklogApps) > 0 {
		m.BacklogApps = nil
		if b, err = json.Marshal(m); err != nil {
			return nil, fmt.Errorf("encode member metadata: %w", err)
		}
	}
	if len(b) > memberlist.MetaMaxSize {
		return nil, fmt.Errorf("member metadata is %d bytes, over memberlist's %d-byte limit (too many apps or attributes)",
			len(b), memberlist.MetaMaxSize)
	}
	return b, nil
}

// HostsApp reports whether a node monitor advertises an executor for app.
func (m Meta) HostsApp(app string) bool {
	for _, a := range m.Apps {
		if a == app {
			return true
		}
	}
	return false
}

// DecodeMeta parses a member's metadata.
func DecodeMeta(b []byte) (Meta, error) {
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return Meta{}, fmt.Errorf("decode member metadata: %w", err)
	}
	return m, nil
}
