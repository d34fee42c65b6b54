package rpc

import (
	"container/list"
	"context"
	"errors"
	"net"
	"sync"
)

// hostResolver looks up the addresses of a host name; *net.Resolver is
// one, tests use fakes.
type hostResolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
}

// lastKnownNames is how many host names a pool remembers the addresses
// of (lastKnownAddrs).
const lastKnownNames = 4096

// lastKnownAddrs resolves host names and remembers the addresses each
// last resolved to, for when a later lookup of the name fails. A peer's
// name may leave DNS before the peer stops serving: a container
// orchestrator removes a task's name as soon as it decides to stop the
// task, seconds before the task is told to stop, and the peer then still
// finishes what it has (it drains). Callers address peers by the names
// their membership lists, so a name whose lookup fails is one still
// listed; dialing its last addresses reaches the peer while it drains,
// and fails, like any dial, once it is gone.
//
// At most max names are remembered: past it the name refreshed longest
// ago is forgotten. Every successful lookup refreshes its name's entry.
//
// Safe for concurrent use: mu guards order and names, and is never held
// during a lookup.
type lastKnownAddrs struct {
	resolver hostResolver
	max      int

	mu    sync.Mutex
	order *list.List // of *knownHost, the most recently refreshed first
	names map[string]*list.Element
}

// knownHost is one remembered name and the addresses it last resolved to.
type knownHost struct {
	name  string
	addrs []string
}

// newLastKnownAddrs returns a cache of up to names names (at least one)
// resolved by r.
func newLastKnownAddrs(r hostResolver, names int) *lastKnownAddrs {
	return &lastKnownAddrs{resolver: r, max: max(names, 1), order: list.New(), names: make(map[string]*list.Element)}
}

// resolve looks host up. On success it remembers and returns the
// addresses. When the lookup fails for want of an answer from DNS (no
// such host, a temporary failure, a DNS timeout) and host resolved
// before, it returns the addresses of the last successful lookup, with
// the lookup's error as fallback. Otherwise it returns the lookup's
// error as err. A lookup cut short by ctx never falls back.
func (k *lastKnownAddrs) resolve(ctx context.Context, host string) (addrs []string, fallback, err error) {
	addrs, err = k.resolver.LookupHost(ctx, host)
	if err == nil && len(addrs) > 0 {
		k.remember(host, addrs)
		return addrs, nil, nil
	}
	if err == nil {
		err = &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	if ctx.Err() != nil || !isDNSFailure(err) {
		return nil, nil, err
	}
	if known := k.lookup(host); known != nil {
		return known, err, nil
	}
	return nil, nil, err
}

// isDNSFailure reports whether err says DNS gave no address for a name:
// no such host, a temporary failure or a timeout.
func isDNSFailure(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de) && (de.IsNotFound || de.IsTemporary || de.IsTimeout)
}

// remember stores addrs as host's last addresses, forgetting the name
// refreshed longest ago past max names.
func (k *lastKnownAddrs) remember(host string, addrs []string) {
	addrs = append([]string(nil), addrs...)
	k.mu.Lock()
	defer k.mu.Unlock()
	if e, ok := k.names[host]; ok {
		e.Value.(*knownHost).addrs = addrs
		k.order.MoveToFront(e)
		return
	}
	k.names[host] = k.order.PushFront(&knownHost{name: host, addrs: addrs})
	for k.order.Len() > k.max {
		oldest := k.order.Back()
		k.order.Remove(oldest)
		delete(k.names, oldest.Value.(*knownHost).name)
	}
}

// lookup returns a copy of host's remembered addresses; nil if none.
func (k *lastKnownAddrs) lookup(host string) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e, ok := k.names[host]; ok {
		return append([]string(nil), e.Value.(*knownHost).addrs...)
	}
	return nil
}
