package rpc

import (
	"maps"
	"strings"
	"sync"
	"sync/atomic"
)

// Calls counts a member's Thrift calls per method name: those its servers
// served and those its client pools made. The servers and pools of one
// member share one through Config.Calls. The zero value is ready; it is
// safe for concurrent use.
type Calls struct {
	Served, Made CallCounter
}

// CallStats is a snapshot of Calls: calls per method name, with names
// past the counter's cap lumped under OtherMethod.
type CallStats struct {
	Served, Made map[string]int64
}

// Stats returns a snapshot of the counts; a nil Calls has none.
func (c *Calls) Stats() CallStats {
	if c == nil {
		return CallStats{Served: map[string]int64{}, Made: map[string]int64{}}
	}
	return CallStats{Served: c.Served.Counts(), Made: c.Made.Counts()}
}

// OtherMethod is the name under which a CallCounter counts the calls of
// methods past its cap of distinct names, and a server the calls of
// methods its service does not have.
const OtherMethod = "other"

// MaxMethods caps the distinct method names one CallCounter keeps, so
// that its memory and the label values it exports stay bounded whatever
// names it is given. Every Sparrow service together has fewer.
const MaxMethods = 64

// CallCounter counts calls per method name. Counting a name already seen
// reads a map published once and adds to its atomic counter: no lock, no
// allocation. The first call of a new name copies the map under a lock.
// The zero value is ready.
type CallCounter struct {
	names atomic.Pointer[map[string]*atomic.Int64] // copied on write, never changed once published
	full  atomic.Bool                              // MaxMethods names are kept
	other atomic.Int64
	mu    sync.Mutex // serialises publishing names
}

// Add counts one call of method.
func (c *CallCounter) Add(method string) {
	if t := c.names.Load(); t != nil {
		if n, ok := (*t)[method]; ok {
			n.Add(1)
			return
		}
	}
	if n := c.intern(method); n != nil {
		n.Add(1)
		return
	}
	c.other.Add(1)
}

// intern returns method's counter, adding one if there is room; nil when
// the calls of method count as OtherMethod.
func (c *CallCounter) intern(method string) *atomic.Int64 {
	if method == OtherMethod || c.full.Load() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var old map[string]*atomic.Int64
	if t := c.names.Load(); t != nil {
		old = *t
	}
	if n, ok := old[method]; ok {
		return n
	}
	if len(old) >= MaxMethods {
		c.full.Store(true)
		return nil
	}
	next := make(map[string]*atomic.Int64, len(old)+1)
	maps.Copy(next, old)
	n := new(atomic.Int64)
	next[strings.Clone(method)] = n
	c.names.Store(&next)
	return n
}

// Counts returns the calls counted per method name, OtherMethod included
// when any was counted under it.
func (c *CallCounter) Counts() map[string]int64 {
	out := make(map[string]int64)
	if t := c.names.Load(); t != nil {
		for name, n := range *t {
			out[name] = n.Load()
		}
	}
	if n := c.other.Load(); n > 0 {
		out[OtherMethod] = n
	}
	return out
}
