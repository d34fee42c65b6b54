package scale

import (
	"fmt"
	"strconv"
	"strings"
)

// The kernel's connection tracking, where netfilter is loaded (Docker
// loads it), keeps an entry per UDP flow, loopback included: one per pair
// of gossip addresses that have exchanged a packet in the last
// nf_conntrack_udp_timeout_stream seconds (120 by default). Members
// gossip to random peers, so while a fleet forms nearly every pair of
// members talks. When the table is full the kernel refuses new flows:
// sendto fails with "operation not permitted", probes go unanswered and
// members falsely suspect each other, which is not what the fleet costs.
const (
	conntrackMaxPath   = "/proc/sys/net/netfilter/nf_conntrack_max"
	conntrackCountPath = "/proc/sys/net/netfilter/nf_conntrack_count"
)

// conntrackPerMember is the other entries a member adds: its TCP
// connections (Thrift pools, held watches, executors, HTTP) and their
// TIME_WAIT successors, rounded up.
const conntrackPerMember = 100

// conntrackNeed is about how many tracked flows a fleet of members
// gossiping on one host may hold at once: every pair of members, plus
// each member's connections.
func conntrackNeed(members int) int {
	return members*(members-1)/2 + members*conntrackPerMember
}

// readFile reads a file; a variable so that tests can fake /proc.
type readFile func(path string) ([]byte, error)

// conntrackLimit returns the table's size, and false when the kernel does
// not track connections (no netfilter, or /proc unreadable).
func conntrackLimit(read readFile) (int, bool) {
	return readProcInt(read, conntrackMaxPath)
}

// conntrackCount returns how many flows the table holds now.
func conntrackCount(read readFile) (int, bool) {
	return readProcInt(read, conntrackCountPath)
}

func readProcInt(read readFile, path string) (int, bool) {
	b, err := read(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, false
	}
	return v, true
}

// checkConntrack returns an error naming what to do when a fleet of
// members on this host would fill the kernel's connection tracking table.
func checkConntrack(members int, read readFile) error {
	limit, ok := conntrackLimit(read)
	if !ok {
		return nil
	}
	need := conntrackNeed(members)
	if need <= limit {
		return nil
	}
	return fmt.Errorf("%d members gossiping on this host may track about %d flows, but the kernel's connection tracking table holds %d "+
		"(net.netfilter.nf_conntrack_max); when it is full the kernel drops gossip packets (sendto: operation not permitted) and members falsely suspect each other. "+
		"Raise it (sysctl -w net.netfilter.nf_conntrack_max=%d), untrack loopback (iptables -t raw -I OUTPUT -o lo -j NOTRACK; iptables -t raw -I PREROUTING -i lo -j NOTRACK), or measure fewer node monitors",
		members, need, limit, roundUpPow2(need))
}

func roundUpPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}
