package scheduler

import (
	"time"

	"github.com/sparrowfleet/sparrow/internal/membership"
)

// Node loss, as the daemon sees it through gossip.
//
// memberlist declares a member dead when it misses probes, and also when a
// peer that was itself partitioned comes back and gossips its stale
// verdict; the member refutes that within a gossip round or two and is
// live again. Reporting its running tasks lost at once would make their
// frontends run them a second time while the first run goes on. So the
// daemon re-places the node monitor's queued reservations at once
// (NodeGone), waits Config.NodeLostGrace, and reports the running tasks
// lost (NodeLost) only if the node monitor is not live again as the same
// process.

// sameProcessLive reports whether member m, declared dead, is among live
// as the same process: the same name, address and start nonce
// (membership.Meta.Boot). A node monitor without a Boot (an older build)
// is never taken for live again, as before this check existed.
func sameProcessLive(m membership.Member, live []membership.Member) bool {
	if m.Meta.Boot == "" {
		return false
	}
	for _, c := range live {
		if c.Name == m.Name && c.Meta.Internal == m.Meta.Internal && c.Meta.Boot == m.Meta.Boot {
			return true
		}
	}
	return false
}

// nodeLeft handles a node monitor's leave or death event: reservations
// now, running tasks after the grace unless it was a false death. Run on
// its own goroutine; returns early if the daemon closes.
func (d *Daemon) nodeLeft(m membership.Member) {
	addr := m.Meta.Internal
	d.NodeGone(addr)
	if g := d.Scheduler.cfg.NodeLostGrace; g > 0 {
		t := time.NewTimer(g)
		defer t.Stop()
		select {
		case <-t.C:
		case <-d.stop:
			return
		}
		if sameProcessLive(m, d.Cluster.Members(membership.RoleNodeMonitor)) {
			d.log.Info().Str("node", addr).Str("member", m.Name).Dur("grace", g).
				Msg("node monitor declared dead is live again as the same process; its running tasks are kept")
			return
		}
	}
	d.NodeLost(addr)
}
