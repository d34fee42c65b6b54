package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/locality"
	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// benchRelaxing returns a scheduler over a 1,000-node view (no RPC: the
// benchmarks never widen) with n pending requests of one task relaxable
// after an hour, each preferring three nodes.
func benchRelaxing(b *testing.B, n int) (*Scheduler, locality.Prices) {
	b.Helper()
	view := &fakeView{byApp: map[string][]placement.Node{}}
	p := locality.Prices{Node: map[string]int64{}, Rack: map[string]int64{}, RackPerGB: 10, CorePerGB: 40}
	for i := range 1000 {
		name := fmt.Sprintf("nm%d", i)
		rack := fmt.Sprintf("r%d", i%40)
		view.byApp[app] = append(view.byApp[app], placement.Node{
			Addr: fmt.Sprintf("127.0.0.1:%d", 30000+i), Host: "127.0.0.1", Name: name,
			Attrs: map[string]string{placement.RackAttr: rack},
		})
		p.Node[name] = 0 // every node has room: nothing widens
		p.Rack[rack] = 0
	}
	net := newMemNet(rpc.Config{})
	s, err := newWith(Config{Address: schedAddr, Seed: 1, ReservationTimeout: -1, Log: zerolog.Nop()}, view, net, net)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	// Requests are installed directly, as SubmitJob would leave them, so
	// that no reservation is sent.
	now := s.now()
	for i := range n {
		id := fmt.Sprintf("r%d", i)
		task := placement.Task{ID: "0", Nodes: []string{fmt.Sprintf("nm%d", i%1000), fmt.Sprintf("nm%d", (i+1)%1000), fmt.Sprintf("nm%d", (i+2)%1000)}}
		job := Job{Tasks: []placement.Task{task}, Relax: []Relaxation{{Task: 0, Delay: time.Hour, InputBytes: -1}}}
		r := &request{Request: placement.NewRequest(id, job.Tasks), app: app, ratio: 2}
		r.loc = newRelaxState(job, now, DefaultLocalityInputBytes)
		s.mu.Lock()
		s.book.add(r)
		s.scheduleRelaxLocked(r, now)
		s.mu.Unlock()
	}
	return s, p
}

// BenchmarkRelaxNoneDue is the relaxation loop's cost when it wakes with
// nothing due: a peek at the heap.
func BenchmarkRelaxNoneDue(b *testing.B) {
	s, _ := benchRelaxing(b, 1000)
	now := time.Now()
	for b.Loop() {
		s.Relax(now)
	}
}

// BenchmarkRelaxReprice1000 is the cost of applying new prices to 1,000
// pending relaxable requests on a 1,000-node fleet, as happens once per
// coordinator period.
func BenchmarkRelaxReprice1000(b *testing.B) {
	s, p := benchRelaxing(b, 1000)
	now := time.Now()
	v := uint64(0)
	for b.Loop() {
		v++
		p.Version = v
		s.SetPrices(p, now)
		s.Relax(now)
	}
	if st := s.Stats().Locality; st.WidenedRackByPrices+st.WidenedClusterByPrices != 0 || st.Relaxing != 1000 {
		b.Fatalf("stats %+v: the benchmark widened tasks or lost requests", st)
	}
}

// BenchmarkPlanRelaxableSubmission is SubmitJob's placement work for one
// relaxable job of 3-replica tasks, without and with fresh prices, up to
// the point where reservations would be sent.
func BenchmarkPlanRelaxableSubmission(b *testing.B) {
	for _, fresh := range []bool{false, true} {
		b.Run(fmt.Sprintf("fresh=%v", fresh), func(b *testing.B) {
			s, p := benchRelaxing(b, 0)
			if fresh {
				s.SetPrices(p, time.Now())
			}
			tasks := make([]placement.Task, 10)
			job := Job{Tasks: tasks}
			for k := range tasks {
				tasks[k] = placement.Task{ID: fmt.Sprint(k), Nodes: []string{fmt.Sprintf("nm%d", k), fmt.Sprintf("nm%d", k+100), fmt.Sprintf("nm%d", k+200)}}
				job.Relax = append(job.Relax, Relaxation{Task: k, Delay: time.Hour, InputBytes: -1})
			}
			i := 0
			for b.Loop() {
				i++
				id := fmt.Sprint(i)
				s.mu.Lock()
				r := &request{Request: placement.NewRequest(id, job.Tasks), app: app, ratio: 2}
				probes, _, err := s.pipe.place(r, placeOptions{tasks: job.Tasks, ratio: 2})
				if err != nil {
					b.Fatal(err)
				}
				r.AddProbes(probes)
				s.book.add(r)
				now := s.now()
				r.loc = newRelaxState(job, now, DefaultLocalityInputBytes)
				if s.relax.fresh(now) {
					s.relaxLocked(r, now, true)
				}
				s.scheduleRelaxLocked(r, now)
				s.book.remove(r)
				s.relax.remove(r)
				s.mu.Unlock()
			}
		})
	}
}
