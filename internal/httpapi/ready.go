package httpapi

import (
	"strings"

	"github.com/sparrowfleet/sparrow/internal/membership"
)

// Check reports why a daemon is not ready, or "" when it is. The reason is
// one short line; /readyz prints it after "not ready: ".
type Check func() string

// All is ready when every check is, and otherwise gives the first reason,
// so checks go cheapest and most fundamental first.
func All(checks ...Check) Check {
	return func() string {
		for _, c := range checks {
			if r := c(); r != "" {
				return r
			}
		}
		return ""
	}
}

// Serving fails once the daemon's Thrift services have stopped. They are
// bound before the HTTP listener opens, so "up" needs no other check.
func Serving(serving func() bool) Check {
	return func() string {
		if !serving() {
			return "Thrift services stopped"
		}
		return ""
	}
}

// GossipView is what readiness reads from a member's gossip cluster
// (*membership.Cluster).
type GossipView interface {
	Name() string
	Addr() string
	Members(role membership.Role) []membership.Member
}

// Joined fails while a member that was given seeds other than itself sees
// no other daemon in its view. A member with no such seed is the first of
// its fleet and is ready alone: requiring a peer would deadlock a fleet
// whose other members wait for the seed to be ready before they start (an
// orchestrator that publishes only ready addresses). Observers do not
// count: a `sparrow status` passing through does not make a member joined.
func Joined(c GossipView, seeds []string) Check {
	var others []string
	for _, s := range seeds {
		if s != "" && s != c.Addr() {
			others = append(others, s)
		}
	}
	if len(others) == 0 {
		return func() string { return "" }
	}
	reason := "not joined to gossip: no other member in view (seeds " + strings.Join(others, ",") + ")"
	return func() string {
		for _, m := range c.Members("") {
			if m.Name != c.Name() && m.Meta.Role != membership.RoleObserver {
				return ""
			}
		}
		return reason
	}
}

// HasMember fails, giving reason, while no live member with role is in
// the view.
func HasMember(c GossipView, role membership.Role, reason string) Check {
	return func() string {
		if len(c.Members(role)) == 0 {
			return reason
		}
		return ""
	}
}
