package integration

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/internal/membership"
)

// formationBound is how long after the last member starts every member
// must be in every view, in any start order.
const formationBound = 3 * time.Second

// formationMember is one member of a formation test: where it binds, its
// role, and how often it has looked up its seed name.
type formationMember struct {
	name    string
	host    string
	role    membership.Role
	lookups atomic.Int64
	c       *membership.Cluster
}

// formationFleet is a fleet of gossip members on 127.0.28.x, all on one
// gossip port as pods behind a Kubernetes Service are, whose seed name is
// answered by a resolver the test controls.
type formationFleet struct {
	t       *testing.T
	port    string
	members []*formationMember

	mu    sync.Mutex
	names map[string][]string // seed name -> addresses it resolves to
}

// newFormationFleet lays out one scheduler (member 0, the seed) and
// nodeMonitors node monitors on one gossip port free on all their hosts.
func newFormationFleet(t *testing.T, nodeMonitors int) *formationFleet {
	if testing.Short() {
		t.Skip("integration test; skipped with -short")
	}
	f := &formationFleet{t: t, names: map[string][]string{}}
	for i := 0; i <= nodeMonitors; i++ {
		m := &formationMember{name: fmt.Sprintf("nm-%d", i), host: fmt.Sprintf("127.0.28.%d", i+1), role: membership.RoleNodeMonitor}
		if i == 0 {
			m.name, m.role = "scheduler", membership.RoleScheduler
		}
		f.members = append(f.members, m)
	}
	f.port = f.freePort()
	return f
}

// freePort finds a port free for TCP and UDP on every member's host.
func (f *formationFleet) freePort() string {
	_, port, _ := net.SplitHostPort(interopFreePort(f.t, f.members[0].host))
	for range 50 {
		if f.portFree(port) {
			return port
		}
		_, port, _ = net.SplitHostPort(interopFreePort(f.t, f.members[0].host))
	}
	f.t.Fatal("no gossip port free on every formation host")
	return ""
}

func (f *formationFleet) portFree(port string) bool {
	for _, m := range f.members {
		addr := net.JoinHostPort(m.host, port)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return false
		}
		pc, err := net.ListenPacket("udp", addr)
		ln.Close()
		if err != nil {
			return false
		}
		pc.Close()
	}
	return true
}

// publish makes name resolve to hosts from now on.
func (f *formationFleet) publish(name string, hosts ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.names[name] = hosts
}

// resolver is m's name lookup: it counts m's lookups and answers from the
// names published so far.
func (f *formationFleet) resolver(m *formationMember) membership.Resolver {
	return func(_ context.Context, host string) ([]string, error) {
		m.lookups.Add(1)
		f.mu.Lock()
		defer f.mu.Unlock()
		if a := f.names[host]; len(a) > 0 {
			return append([]string(nil), a...), nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
}

// start starts m with the given seeds and makes it leave when the test ends.
func (f *formationFleet) start(m *formationMember, seeds ...string) {
	c, err := membership.Start(membership.Config{
		Name: m.name, Bind: net.JoinHostPort(m.host, f.port), Seeds: seeds, Profile: "local",
		Meta: membership.Meta{Role: m.role}, Resolve: f.resolver(m), Log: testLogger(f.t),
	})
	if err != nil {
		f.t.Errorf("start %s: %v", m.name, err)
		return
	}
	f.mu.Lock()
	m.c = c
	f.mu.Unlock()
	f.t.Cleanup(func() { c.Leave(0) })
}

// startObserver starts a `sparrow status`-like observer joined through m
// alone, and makes it leave when the test ends.
func (f *formationFleet) startObserver(m *formationMember) {
	c, err := membership.Start(membership.Config{
		Name: "observer", Bind: "127.0.28.200:0", Seeds: []string{net.JoinHostPort(m.host, f.port)}, Profile: "local",
		Meta: membership.Meta{Role: membership.RoleObserver}, Log: testLogger(f.t),
	})
	if err != nil {
		f.t.Fatalf("start observer: %v", err)
	}
	f.t.Cleanup(func() { c.Leave(0) })
}

// incomplete names the first member whose view lacks someone, or "".
func (f *formationFleet) incomplete() string {
	for _, m := range f.members {
		f.mu.Lock()
		c := m.c
		f.mu.Unlock()
		if c == nil {
			return m.name + " (not started)"
		}
		if n := len(c.Members(membership.RoleScheduler)) + len(c.Members(membership.RoleNodeMonitor)); n != len(f.members) {
			return m.name + " sees " + strconv.Itoa(n) + " of " + strconv.Itoa(len(f.members))
		}
	}
	return ""
}

// waitComplete fails the test unless every view holds every member within
// formationBound of lastStart, and logs how long it took.
func (f *formationFleet) waitComplete(lastStart time.Time) {
	f.t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		missing := f.incomplete()
		if missing == "" {
			f.t.Logf("all %d members in every view %v after the last one started", len(f.members), time.Since(lastStart).Round(time.Millisecond))
			return
		}
		if time.Since(lastStart) > formationBound {
			f.t.Fatalf("views incomplete %v after the last member started: %s", formationBound, missing)
		}
		<-tick.C
	}
}

// waitLookups waits until every member in ms has looked its seed name up
// at least n times: they have started and are retrying with no seed.
func (f *formationFleet) waitLookups(ms []*formationMember, n int64) {
	f.t.Helper()
	waitFor(f.t, "node monitors retrying their seed", 30*time.Second, func() bool {
		for _, m := range ms {
			if m.lookups.Load() < n {
				return false
			}
		}
		return true
	})
}

// startAll starts ms at once and returns when the last Start has returned.
func (f *formationFleet) startAll(ms []*formationMember, seeds ...string) time.Time {
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Go(func() { f.start(m, seeds...) })
	}
	wg.Wait()
	return time.Now()
}

func (f *formationFleet) hosts() []string {
	var hs []string
	for _, m := range f.members {
		hs = append(hs, m.host)
	}
	return hs
}

// Every member is in every view within formationBound of the last one
// starting, whatever the start order, both with one seed known by name
// (docker-compose's scheduler) and with a name that resolves to every
// member (a Kubernetes headless Service).
func TestFormationInAnyStartOrder(t *testing.T) {
	const nodeMonitors = 8
	const seedName = "seed.formation.test"
	for _, tc := range []struct {
		name string
		run  func(f *formationFleet) time.Time
	}{
		{"seed first", func(f *formationFleet) time.Time {
			f.publish(seedName, f.members[0].host)
			f.start(f.members[0])
			return f.startAll(f.members[1:], net.JoinHostPort(seedName, f.port))
		}},
		{"node monitors before their seed", func(f *formationFleet) time.Time {
			f.publish(seedName, f.members[0].host)
			f.startAll(f.members[1:], net.JoinHostPort(seedName, f.port))
			// Four lookups each: the first join and three retries have
			// found no seed, so the node monitors are backing off.
			f.waitLookups(f.members[1:], 4)
			f.start(f.members[0])
			return time.Now()
		}},
		{"an observer joined to a waiting node monitor, seed last", func(f *formationFleet) time.Time {
			f.publish(seedName, f.members[0].host)
			f.startAll(f.members[1:], net.JoinHostPort(seedName, f.port))
			// sparrow status joined through nm-1: nm-1 is still alone in
			// the fleet and must keep retrying its seed.
			f.startObserver(f.members[1])
			f.waitLookups(f.members[1:], 4)
			f.start(f.members[0])
			return time.Now()
		}},
		{"seed name resolves before the seed answers, seed last", func(f *formationFleet) time.Time {
			f.startAll(f.members[1:], net.JoinHostPort(seedName, f.port))
			f.waitLookups(f.members[1:], 4)
			f.publish(seedName, f.members[0].host)
			f.start(f.members[0])
			return time.Now()
		}},
		{"all at once", func(f *formationFleet) time.Time {
			f.publish(seedName, f.members[0].host)
			return f.startAll(f.members, net.JoinHostPort(seedName, f.port))
		}},
		{"headless service, all at once", func(f *formationFleet) time.Time {
			f.publish(seedName, f.hosts()...)
			return f.startAll(f.members, net.JoinHostPort(seedName, f.port))
		}},
		{"headless service, members appear one by one", func(f *formationFleet) time.Time {
			var last time.Time
			for i, m := range f.members {
				f.publish(seedName, f.hosts()[:i+1]...)
				f.start(m, net.JoinHostPort(seedName, f.port))
				last = time.Now()
			}
			return last
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFormationFleet(t, nodeMonitors)
			last := tc.run(f)
			if t.Failed() {
				return
			}
			f.waitComplete(last)
		})
	}
}

// A seed name that never resolves is not fatal: the member starts alone
// and keeps trying.
func TestFormationUnresolvableSeedStartsAlone(t *testing.T) {
	f := newFormationFleet(t, 1)
	m := f.members[1]
	f.start(m, net.JoinHostPort("missing.formation.test", f.port))
	f.waitLookups([]*formationMember{m}, 3)
	if n := len(m.c.Members("")); n != 1 {
		t.Fatalf("a member with no reachable seed sees %d members, want itself", n)
	}
}
