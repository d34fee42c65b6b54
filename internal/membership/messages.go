package membership

import (
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/hashicorp/memberlist"
)

// messaging carries user messages over the gossip layer: broadcasts that
// spread to every member through memberlist's piggybacked gossip, and
// point-to-point messages to one member, reliable (TCP) or best effort
// (one UDP packet). The coordinator uses all three (its guidance goes out
// by broadcast or as best-effort direct replies; node monitors' reports
// come in point to point).
type messaging struct {
	mu       sync.RWMutex
	handlers []func([]byte)
	queue    *memberlist.TransmitLimitedQueue
}

// OnMessage registers fn for every user message this member receives,
// broadcast or point to point. It is called on memberlist's goroutines
// with a buffer it may keep (a copy) and must not block.
func (c *Cluster) OnMessage(fn func([]byte)) {
	c.msgs.mu.Lock()
	defer c.msgs.mu.Unlock()
	c.msgs.handlers = append(c.msgs.handlers, fn)
}

// Broadcast queues msg to spread to every member by gossip, piggybacked on
// memberlist's own messages. A queued broadcast with the same key that has
// not finished spreading is replaced, so only the newest of a series (one
// chunk of the latest version, say) is sent. msg must fit one gossip
// packet.
func (c *Cluster) Broadcast(key string, msg []byte) {
	c.msgs.queue.QueueBroadcast(&broadcast{key: key, msg: msg})
}

// PendingBroadcasts returns the number of broadcasts still being spread.
func (c *Cluster) PendingBroadcasts() int { return c.msgs.queue.NumQueued() }

// SendTo sends msg to the live member named name over a reliable (TCP)
// stream; any size is fine.
//
// The address comes from this package's own copy of the view, not from
// memberlist.Members: those are pointers into memberlist's state, which
// its gossip goroutines rewrite (a data race the race detector caught).
func (c *Cluster) SendTo(name string, msg []byte) error {
	to, err := c.nodeOf(name)
	if err != nil {
		return fmt.Errorf("send to %s: %w", name, err)
	}
	if err := c.ml.SendReliable(&to, msg); err != nil {
		return fmt.Errorf("send to %s: %w", name, err)
	}
	return nil
}

// SendBestEffortTo sends msg to the live member named name in one UDP
// packet, without acknowledgement or retry: it may be lost. It opens no
// connection, so a member can send thousands per second (the
// coordinator's direct replies). msg must fit one packet (about 1,200
// bytes leaves room for memberlist's framing and encryption).
//
// The address comes from this package's copy of the view, as in SendTo.
func (c *Cluster) SendBestEffortTo(name string, msg []byte) error {
	to, err := c.nodeOf(name)
	if err != nil {
		return fmt.Errorf("send (best effort) to %s: %w", name, err)
	}
	if err := c.ml.SendBestEffort(&to, msg); err != nil {
		return fmt.Errorf("send (best effort) to %s: %w", name, err)
	}
	return nil
}

// nodeOf returns a memberlist node for the live member named name, built
// from this package's own view (never memberlist's live *Node).
func (c *Cluster) nodeOf(name string) (memberlist.Node, error) {
	c.mu.RLock()
	m, ok := c.members[name]
	c.mu.RUnlock()
	if !ok {
		return memberlist.Node{}, fmt.Errorf("not a live member")
	}
	host, port, err := net.SplitHostPort(m.Gossip)
	if err != nil {
		return memberlist.Node{}, fmt.Errorf("gossip address %q: %w", m.Gossip, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return memberlist.Node{}, fmt.Errorf("gossip port %q: %w", port, err)
	}
	return memberlist.Node{Name: name, Addr: net.ParseIP(host), Port: uint16(p)}, nil
}

func (c *Cluster) deliver(b []byte) {
	c.msgs.mu.RLock()
	hs := c.msgs.handlers
	c.msgs.mu.RUnlock()
	if len(hs) == 0 {
		return
	}
	// memberlist reuses the buffer after NotifyMsg returns.
	msg := append([]byte(nil), b...)
	for _, h := range hs {
		h(msg)
	}
}

// broadcast is one queued user broadcast, named by its key.
type broadcast struct {
	key string
	msg []byte
}

func (b *broadcast) Name() string    { return b.key }
func (b *broadcast) Message() []byte { return b.msg }
func (b *broadcast) Finished()       {}
func (b *broadcast) Invalidates(other memberlist.Broadcast) bool {
	nb, ok := other.(memberlist.NamedBroadcast)
	return ok && nb.Name() == b.key
}

// RoleCoordinator is the optional fairness coordinator. Schedulers and
// node monitors select peers by exact role, so it is never sampled for
// work; node monitors report to the live coordinator with the lowest name.
const RoleCoordinator Role = "coordinator"

// ActiveCoordinator returns the name of the live coordinator that
// publishes guidance (the lowest name; the others stand by), and false if
// none is live.
//
// It scans the view without copying or sorting it, since node monitors ask
// on every guidance chunk they receive.
func (c *Cluster) ActiveCoordinator() (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	best, found := "", false
	for _, m := range c.members {
		if m.Meta.Role == RoleCoordinator && (!found || m.Name < best) {
			best, found = m.Name, true
		}
	}
	return best, found
}
