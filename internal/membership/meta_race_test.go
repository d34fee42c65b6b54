package membership

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestConcurrentMetaUpdatesEndWithTheLast: metadata set from several
// goroutines at once (a node monitor whose executors register together)
// ends, in the member's own view and its peer's, as the metadata stored
// last. memberlist's UpdateNode reads the metadata and then takes the next
// incarnation number, so two calls at once could give the older metadata
// the newer number, and it then won everywhere for good.
func TestConcurrentMetaUpdatesEndWithTheLast(t *testing.T) {
	a, b := startPair(t, "127.0.6.21", "127.0.6.22", RoleScheduler)
	appsOf := func(c *Cluster) []string {
		for _, m := range c.Members(RoleNodeMonitor) {
			if m.Name == "b" {
				return m.Meta.Apps
			}
		}
		return nil
	}
	for round := range 100 {
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				apps := []string{fmt.Sprintf("r%d-g%d", round, g)}
				if err := b.SetMeta(Meta{Role: RoleNodeMonitor, Slots: 2, Apps: apps}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		b.mu.RLock()
		last, err := DecodeMeta(b.meta)
		b.mu.RUnlock()
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for !slices.Equal(appsOf(b), last.Apps) || !slices.Equal(appsOf(a), last.Apps) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: b's metadata stored last has apps %v; b sees itself with %v, a sees it with %v",
					round, last.Apps, appsOf(b), appsOf(a))
			}
			time.Sleep(time.Millisecond) // polling interval of a condition wait
		}
	}
}
