package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// benchPullAfter is the benchmarks' Config.PullAfter.
const benchPullAfter = time.Second

// benchPullApps is how many apps the benchmarks' requests spread over.
const benchPullApps = 8

// benchPulls returns a scheduler answering pulls, with no node monitor
// (the benchmarks send nothing), and the time its requests are installed
// at.
func benchPulls(b *testing.B) (*Scheduler, time.Time) {
	b.Helper()
	net := newMemNet(rpc.Config{})
	s, err := newWith(Config{
		Address: schedAddr, Seed: 1, ReservationTimeout: -1, Log: zerolog.Nop(),
		ShortJobs: &shortjobs.Config{Cutoff: 10, StarveLimit: 4}, PullAfter: benchPullAfter,
	}, &fakeView{byApp: map[string][]placement.Node{}}, net, net)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s, time.Now()
}

// addPullBenchRequest installs a request of tasks unconstrained tasks,
// submitted at at, of class c, as SubmitJob would leave it (without its
// reservations, which the sweep never reads). Requests must be installed
// in the order of at, as SubmitJob stamps them.
func addPullBenchRequest(s *Scheduler, id string, i, tasks int, c shortjobs.Class, at time.Time) *request {
	est := 1 + float64(i%97)/100
	if c == shortjobs.Long {
		est = 100
	}
	r := &request{
		Request: placement.NewRequest(id, make([]placement.Task, tasks)),
		app:     fmt.Sprintf("app%d", i%benchPullApps), ratio: 2, submitted: at,
		short: shortJob{class: c, est: est, work: est * float64(tasks)},
	}
	s.mu.Lock()
	s.book.add(r)
	s.pullSubmittedLocked(r)
	s.mu.Unlock()
	return r
}

// BenchmarkPullSweep is one PullSweep over a scheduler with n active
// requests, a tenth of them short jobs already in the backlog and the
// rest long jobs: steady, with nothing new to backlog; churn, with ten
// short jobs becoming due before each sweep and ending after it (dropped
// from the request book with tasks unlaunched, as a job given up is).
// Only the sweep is timed.
func BenchmarkPullSweep(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		for _, churn := range []int{0, 10} {
			name := fmt.Sprintf("active=%d/steady", n)
			if churn > 0 {
				name = fmt.Sprintf("active=%d/churn=%d", n, churn)
			}
			b.Run(name, func(b *testing.B) {
				s, t0 := benchPulls(b)
				for i := range n {
					c := shortjobs.Long
					if i%10 == 0 {
						c = shortjobs.Short
					}
					addPullBenchRequest(s, fmt.Sprintf("r%d", i), i, 1+i%4, c, t0.Add(-2*benchPullAfter))
				}
				now := t0
				if adv, _ := s.PullSweep(now); adv.Work == 0 {
					b.Fatal("no backlog after the first sweep")
				}
				var fresh []*request
				next := n
				for b.Loop() {
					now = now.Add(time.Millisecond)
					if churn > 0 {
						b.StopTimer()
						s.mu.Lock()
						for _, r := range fresh {
							s.book.remove(r)
						}
						s.mu.Unlock()
						fresh = fresh[:0]
						for range churn {
							fresh = append(fresh, addPullBenchRequest(s, fmt.Sprintf("r%d", next), next, 2, shortjobs.Short, now.Add(-benchPullAfter)))
							next++
						}
						b.StartTimer()
					}
					s.PullSweep(now)
				}
				if got := s.Stats().ActiveRequests; got != n+len(fresh) {
					b.Fatalf("%d active requests after the sweeps, want %d", got, n+len(fresh))
				}
			})
		}
	}
}
