package scale

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sparrowfleet/sparrow/internal/membership"
)

// GossipCounter counts the bytes and packets memberlist sends, from the
// counters it reports through go-metrics, which the membership package
// forwards (memberlist.udp.sent and memberlist.tcp.sent, each call one
// packet or one stream write of that many bytes). It sees every member in
// the process.
type GossipCounter struct {
	udpBytes, udpPackets, tcpBytes, tcpWrites atomic.Int64
	alive, suspect                            atomic.Int64
}

// GossipTotals are a GossipCounter's counts at one moment.
type GossipTotals struct {
	UDPBytes, UDPPackets, TCPBytes, TCPWrites int64
	// Alive counts alive messages a member accepted as news (a join, a
	// metadata change, a refuted suspicion), Suspect suspicions accepted
	// (memberlist.msg.alive and memberlist.msg.suspect).
	Alive, Suspect int64
}

var (
	installOnce sync.Once
	installed   *GossipCounter
)

// InstallGossipCounter makes a GossipCounter receive memberlist's
// counters, once per process, and returns it.
func InstallGossipCounter() *GossipCounter {
	installOnce.Do(func() {
		installed = &GossipCounter{}
		membership.ForwardGossipCounters(installed.count)
	})
	return installed
}

func (g *GossipCounter) count(key []string, val float32) {
	switch strings.Join(key, ".") {
	case "memberlist.udp.sent":
		g.udpBytes.Add(int64(val))
		g.udpPackets.Add(1)
	case "memberlist.tcp.sent":
		g.tcpBytes.Add(int64(val))
		g.tcpWrites.Add(1)
	case "memberlist.msg.alive":
		g.alive.Add(1)
	case "memberlist.msg.suspect":
		g.suspect.Add(1)
	}
}

// Totals reads the counts so far.
func (g *GossipCounter) Totals() GossipTotals {
	return GossipTotals{
		UDPBytes: g.udpBytes.Load(), UDPPackets: g.udpPackets.Load(),
		TCPBytes: g.tcpBytes.Load(), TCPWrites: g.tcpWrites.Load(),
		Alive: g.alive.Load(), Suspect: g.suspect.Load(),
	}
}

// Sub is t minus an earlier reading.
func (t GossipTotals) Sub(o GossipTotals) GossipTotals {
	return GossipTotals{
		UDPBytes: t.UDPBytes - o.UDPBytes, UDPPackets: t.UDPPackets - o.UDPPackets,
		TCPBytes: t.TCPBytes - o.TCPBytes, TCPWrites: t.TCPWrites - o.TCPWrites,
		Alive: t.Alive - o.Alive, Suspect: t.Suspect - o.Suspect,
	}
}

// Add is t plus another process's counts.
func (t GossipTotals) Add(o GossipTotals) GossipTotals {
	return GossipTotals{
		UDPBytes: t.UDPBytes + o.UDPBytes, UDPPackets: t.UDPPackets + o.UDPPackets,
		TCPBytes: t.TCPBytes + o.TCPBytes, TCPWrites: t.TCPWrites + o.TCPWrites,
		Alive: t.Alive + o.Alive, Suspect: t.Suspect + o.Suspect,
	}
}
