package rpc

import "sync"

// Capabilities remembers which peers lack which additive protocol
// extensions: a peer that answered a method with UNKNOWN_METHOD (an older
// or original Sparrow build) is sent the fallback from then on. Both
// daemons keep one Capabilities each instead of one set per extension.
//
// Capabilities is safe for concurrent use; its lock is its own and is
// never held while calling out.
type Capabilities struct {
	mu      sync.Mutex
	lacking map[capabilityKey]struct{}
}

type capabilityKey struct{ peer, method string }

// Lacks reports whether peer answered method with UNKNOWN_METHOD.
func (c *Capabilities) Lacks(peer, method string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.lacking[capabilityKey{peer, method}]
	return ok
}

// MarkLacking records that peer answered method with UNKNOWN_METHOD.
func (c *Capabilities) MarkLacking(peer, method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lacking == nil {
		c.lacking = make(map[capabilityKey]struct{})
	}
	c.lacking[capabilityKey{peer, method}] = struct{}{}
}

// Forget drops what is known of peer, for a peer that restarted (perhaps
// as a newer build) or left.
func (c *Capabilities) Forget(peer string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.lacking {
		if k.peer == peer {
			delete(c.lacking, k)
		}
	}
}
