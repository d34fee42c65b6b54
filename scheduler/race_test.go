package scheduler

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// signalView is a fakeView that closes looked the first time the
// scheduler asks it for candidates.
type signalView struct {
	fakeView
	once   sync.Once
	looked chan struct{}
}

func (v *signalView) Candidates(app string) []placement.Node {
	v.once.Do(func() { close(v.looked) })
	return v.fakeView.Candidates(app)
}

// blockingLog holds the first log line containing match until release is
// closed, and keeps every line.
type blockingLog struct {
	match   string
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (w *blockingLog) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.match) {
		w.once.Do(func() { <-w.release })
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *blockingLog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestGiveUpWhileOfferSettles: a request whose re-placement gives up
// while one of its offers is settled (an offer in doubt answered on
// another goroutine) reads its state only under the scheduler's lock.
// The settling goroutine takes the lock as soon as the giving-up one
// releases it and finishes before the give-up is logged, so under the
// race detector any read of the request after the lock is released is
// reported, whatever the timing.
func TestGiveUpWhileOfferSettles(t *testing.T) {
	const addr = "127.0.0.1:1"
	view := &signalView{fakeView: fakeView{byApp: map[string][]placement.Node{}}, looked: make(chan struct{})}
	logw := &blockingLog{match: "cannot place", release: make(chan struct{})}
	net := newMemNet(rpc.Config{})
	s, err := newWith(Config{Address: schedAddr, Seed: 1, Log: zerolog.New(logw)}, view, net, net)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	specs := freeTasks(2)
	tasks := make([]placement.Task, len(specs))
	r := &request{Request: placement.NewRequest("job", tasks), app: app, specs: specs, ratio: 1}
	node := placement.Node{Addr: addr, Host: "127.0.0.1", Name: "nm0"}
	r.AddProbes([]placement.Probe{{Node: node, Count: 1}})
	offered, ok := r.Offer(addr)
	if !ok {
		t.Fatal("no task to offer")
	}
	r.reprobe = maxReprobes - 1 // the last round: the view has no node, so it gives up
	s.mu.Lock()
	s.book.add(r)
	s.mu.Unlock()

	settled := make(chan struct{})
	go func() {
		defer close(settled)
		<-view.looked // the giving-up goroutine holds s.mu
		s.mu.Lock()
		s.offerTakenLocked(r, addr, offered)
		s.mu.Unlock()
		close(logw.release)
	}()
	s.mu.Lock()
	s.reprobeAndUnlock(r, []placement.Task{{}})
	<-settled

	if got := s.Stats(); got.ActiveRequests != 0 || got.OffersTaken != 1 || got.TasksLaunched != 1 {
		t.Fatalf("stats %+v: want the request dropped and its offer counted taken", got)
	}
	if line := logw.String(); !strings.Contains(line, `"unlaunched":2`) {
		t.Fatalf("give-up logged %q; want the 2 tasks unlaunched when it gave up", line)
	}
}
