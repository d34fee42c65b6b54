package membership

import (
	"slices"
	"sync"
	"testing"

	"github.com/rs/zerolog"
)

// A member started with JoinLater stays out of its seed's view until Join,
// and the seed first sees it with the metadata it completed before
// joining: the join is its only news, with no update after it.
func TestJoinLaterJoinsWithCompleteMetadata(t *testing.T) {
	seed, err := Start(Config{Name: "seed", Bind: "127.0.6.11:0", Profile: "local", Meta: Meta{Role: RoleScheduler}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { seed.Leave(0) })
	var mu sync.Mutex
	var events []Event
	seed.Watch(func(ev Event) {
		if ev.Member.Name == "nm" {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		}
	})

	nm, err := Start(Config{Name: "nm", Bind: "127.0.6.12:0", Seeds: []string{seed.Addr()}, Profile: "local", JoinLater: true,
		Meta: Meta{Role: RoleNodeMonitor, Slots: 2}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nm.Leave(0) })
	if err := nm.SetHTTPAddr("127.0.6.12:8080"); err != nil {
		t.Fatal(err)
	}
	if err := nm.SetMeta(Meta{Role: RoleNodeMonitor, Slots: 2, Apps: []string{"spark"}}); err != nil {
		t.Fatal(err)
	}
	if got := seed.Members(RoleNodeMonitor); len(got) != 0 {
		t.Fatalf("before Join the seed sees %v", got)
	}
	nm.Join()
	nm.Join() // a second call does nothing
	waitFor(t, "the seed to see the node monitor", func() bool { return len(seed.Members(RoleNodeMonitor)) == 1 })

	mu.Lock()
	defer mu.Unlock()
	if len(events) == 0 || events[0].Kind != Joined {
		t.Fatalf("first events for the node monitor: %+v, want a join", events)
	}
	m := events[0].Member.Meta
	if m.HTTP != "127.0.6.12:8080" || !slices.Equal(m.Apps, []string{"spark"}) {
		t.Fatalf("joined with metadata %+v, want the HTTP address and apps set before Join", m)
	}
}
