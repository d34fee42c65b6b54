package coordinator

import (
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/locality"
)

// TestSlowLocalitySolveDoesNotDelayGuidance: while a locality solve runs
// for many periods (here: until the test lets it go), the coordinator
// keeps publishing fair-share guidance every period, and the periods the
// solve ran past are counted as overrun, not queued up.
func TestSlowLocalitySolveDoesNotDelayGuidance(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	defer let()
	started := make(chan struct{}, 1)
	slow := func(loads []locality.NodeLoad, p locality.Params, v uint64) (locality.Outcome, []byte, error) {
		select {
		case started <- struct{}{}:
		default:
		}
		<-release
		return PriceLocality(loads, p, v)
	}
	const period = 20 * time.Millisecond
	d, err := Start(Config{Name: "coord", Gossip: "127.0.0.1:0", GossipProfile: "local", Period: period,
		Locality: true, Log: zerolog.Nop(), price: slow})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Kill()

	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("no locality period began within 10 s")
	}
	before := d.Stats().Published
	deadline := time.Now().Add(10 * time.Second)
	for d.Stats().Published < before+5 {
		if time.Now().After(deadline) {
			t.Fatalf("guidance published %d times while the solve ran, want 5", d.Stats().Published-before)
		}
		time.Sleep(period / 4) // polling a condition, not synchronising on time
	}
	let()
	deadline = time.Now().Add(10 * time.Second)
	for {
		s := d.Stats().Locality
		if s.Version > 0 && s.Overran >= 4 {
			t.Logf("after the slow solve: %d periods overran", s.Overran)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("locality stats %+v: want a priced version and at least 4 overrun periods", s)
		}
		time.Sleep(period / 4)
	}
}
