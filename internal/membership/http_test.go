package membership

import (
	"slices"
	"testing"
	"time"
)

// TestHTTPAddrSurvivesSetMeta checks that the HTTP address a daemon
// advertises after it started is kept when the daemon later rewrites its
// metadata from its own copy (a node monitor advertising a new app), and
// that a peer sees both.
func TestHTTPAddrSurvivesSetMeta(t *testing.T) {
	a, b := startPair(t, "127.0.6.11", "127.0.6.12", RoleScheduler)

	if err := b.SetHTTPAddr("127.0.6.12:9090"); err != nil {
		t.Fatal(err)
	}
	if err := b.SetMeta(Meta{Role: RoleNodeMonitor, Slots: 2, Apps: []string{"app"}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var seen Meta
		for _, m := range a.Members(RoleNodeMonitor) {
			seen = m.Meta
		}
		if seen.HTTP == "127.0.6.12:9090" && slices.Equal(seen.Apps, []string{"app"}) && seen.Slots == 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a sees b as %+v; want its HTTP address, app and slots", seen)
		}
		time.Sleep(10 * time.Millisecond) // polling interval of a condition wait
	}
}
