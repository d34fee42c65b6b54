package driver

import (
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/client"
)

// The jitter is a pure function of (seed, job, retry), in [0, 1), and
// differs between jobs, retries and seeds; drawn delays stay under the
// ceiling and spread over it (full jitter, not a fixed delay).
func TestJitter(t *testing.T) {
	if jitter(7, 3, 2) != jitter(7, 3, 2) {
		t.Fatal("jitter is not deterministic")
	}
	distinct := map[float64]bool{}
	b := client.Backoff{Base: 100 * time.Millisecond, Max: 10 * time.Second}
	var below, above int
	for seed := uint64(0); seed < 4; seed++ {
		for job := 0; job < 50; job++ {
			for retry := 1; retry <= 5; retry++ {
				u := jitter(seed, job, retry)
				if u < 0 || u >= 1 {
					t.Fatalf("jitter(%d, %d, %d) = %v, outside [0, 1)", seed, job, retry, u)
				}
				distinct[u] = true
				d := b.Delay(retry, 0, u)
				if c := b.Ceiling(retry); d < 0 || d >= c {
					t.Fatalf("delay %v for retry %d outside [0, %v)", d, retry, c)
				}
				if u < 0.5 {
					below++
				} else {
					above++
				}
			}
		}
	}
	if len(distinct) != 4*50*5 {
		t.Errorf("%d distinct draws of %d", len(distinct), 4*50*5)
	}
	// 1000 fair coin flips: each side well within 400..600.
	if below < 400 || above < 400 {
		t.Errorf("draws below/above 0.5: %d/%d, want both near 500", below, above)
	}
}
