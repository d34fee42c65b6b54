package membership

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	gometrics "github.com/hashicorp/go-metrics"
)

// memberlist tells its users which members are live (Members), but not
// which of them are suspected, nor the dead and left members it still
// holds: the State of the nodes it returns is never updated. It does
// report both through hashicorp/go-metrics, the metrics library it
// writes to: at every push/pull exchange, the gauge
// memberlist.node.instances counts its nodes by state, and each member it
// newly suspects adds to the counter memberlist.msg.suspect. go-metrics
// has one sink per process, so the first Cluster started installs
// stateSink, which keeps those two for each Cluster (told apart by a label
// every Cluster gives its metrics) and drops the rest.

// NodeState is a state of memberlist's failure detector.
type NodeState int

// The states memberlist holds a node in.
const (
	StateAlive NodeState = iota
	StateSuspect
	StateDead
	StateLeft
	numNodeStates
)

var nodeStateNames = [numNodeStates]string{"alive", "suspect", "dead", "left"}

func (s NodeState) String() string { return nodeStateNames[s] }

// gossipStates is what stateSink keeps for one Cluster.
type gossipStates struct {
	// nodes counts memberlist's nodes by state at its last push/pull
	// exchange, this member included; reported says there was one.
	nodes      [numNodeStates]atomic.Int64
	reported   atomic.Bool
	suspicions atomic.Uint64
}

// clusterLabel names the label each Cluster's memberlist adds to its
// metrics, valued with the Cluster's stateSink key.
const clusterLabel = "sparrow_cluster"

// stateSink is a go-metrics sink that keeps, for each registered Cluster,
// the two series gossipStates holds.
type stateSink struct {
	// counters, if set, also receives every counter memberlist reports
	// in this process (ForwardGossipCounters).
	counters atomic.Pointer[func(key []string, val float32)]
	next     atomic.Uint64
	clusters sync.Map // key (string) -> *gossipStates
}

var (
	sink        stateSink
	installSink sync.Once
)

// register returns a key for a new Cluster's metrics and its states,
// installing the sink first if no Cluster has.
func (s *stateSink) register() (string, *gossipStates) {
	s.install()
	key := strconv.FormatUint(s.next.Add(1), 10)
	st := &gossipStates{}
	s.clusters.Store(key, st)
	return key, st
}

// ForwardGossipCounters makes every counter memberlist reports in this
// process, for every Cluster, reach fn as well (memberlist.udp.sent and
// the like; val is the increment). go-metrics has one global sink, which
// the membership package owns, so a tool that wants memberlist's own
// counts asks for them here rather than replacing that sink. A later call
// replaces fn; fn must be quick and safe for concurrent use.
func ForwardGossipCounters(fn func(key []string, val float32)) {
	sink.install()
	sink.counters.Store(&fn)
}

func (s *stateSink) install() {
	installSink.Do(func() {
		// No host name, service prefix or runtime sampling: the sink
		// wants memberlist's keys as memberlist writes them, and nothing
		// else.
		cfg := &gometrics.Config{FilterDefault: true, TimerGranularity: time.Millisecond}
		_, _ = gometrics.NewGlobal(cfg, s) // New fails only for a sink it cannot use; this one it can.
	})
}

func (s *stateSink) forward(key []string, val float32) {
	if fn := s.counters.Load(); fn != nil {
		(*fn)(key, val)
	}
}

func (s *stateSink) unregister(key string) { s.clusters.Delete(key) }

// states returns the states of the Cluster labels names, if registered.
func (s *stateSink) states(labels []gometrics.Label) (*gossipStates, bool) {
	for _, l := range labels {
		if l.Name == clusterLabel {
			st, ok := s.clusters.Load(l.Value)
			if !ok {
				return nil, false
			}
			return st.(*gossipStates), true
		}
	}
	return nil, false
}

func isKey(key []string, want ...string) bool {
	if len(key) != len(want) {
		return false
	}
	for i := range key {
		if key[i] != want[i] {
			return false
		}
	}
	return true
}

func (s *stateSink) SetGaugeWithLabels(key []string, val float32, labels []gometrics.Label) {
	if !isKey(key, "memberlist", "node", "instances") {
		return
	}
	st, ok := s.states(labels)
	if !ok {
		return
	}
	for _, l := range labels {
		if l.Name != "node_state" {
			continue
		}
		for i, name := range nodeStateNames {
			if l.Value == name {
				st.nodes[i].Store(int64(val))
				st.reported.Store(true)
			}
		}
	}
}

func (s *stateSink) IncrCounterWithLabels(key []string, val float32, labels []gometrics.Label) {
	s.forward(key, val)
	if !isKey(key, "memberlist", "msg", "suspect") {
		return
	}
	if st, ok := s.states(labels); ok {
		st.suspicions.Add(uint64(val))
	}
}

func (s *stateSink) SetGauge([]string, float32)                               {}
func (s *stateSink) EmitKey([]string, float32)                                {}
func (s *stateSink) IncrCounter(key []string, val float32)                    { s.forward(key, val) }
func (s *stateSink) AddSample([]string, float32)                              {}
func (s *stateSink) AddSampleWithLabels([]string, float32, []gometrics.Label) {}
