package scale

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
)

// maxLine bounds one control line; a start command with a few scheduler
// addresses is well under it.
const maxLine = 1 << 20

// ServeChild hosts a slice of a fleet's node monitors for a harness that
// sends commands on in and reads events from out (see Command), until a
// stop command or the end of in (the harness is gone), and stops the
// slice's members either way. Logs go to log, never to out.
func ServeChild(ctx context.Context, in io.Reader, out io.Writer, log zerolog.Logger) error {
	s := &childServer{out: out, log: log, counter: InstallGossipCounter()}
	defer s.close()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		c, err := parseCommand(sc.Bytes())
		if err != nil {
			s.send(Event{Kind: evFailed, Error: err.Error()})
			continue
		}
		if c.Op == opStop {
			s.close()
			s.send(Event{Kind: evStopped})
			return nil
		}
		if e, err := s.handle(ctx, c); err != nil {
			s.send(Event{Kind: evFailed, Error: err.Error()})
		} else {
			s.send(e)
		}
	}
	return sc.Err()
}

// childServer is a child's slice and its event stream.
type childServer struct {
	mu      sync.Mutex // serialises writes to out
	out     io.Writer
	log     zerolog.Logger
	counter *GossipCounter
	slice   SliceSpec
	f       *fleet.Fleet
	// stopProfile ends the CPU profile opProfile started; nil when none
	// runs.
	stopProfile func()
}

func (s *childServer) send(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.out.Write(encodeLine(e)); err != nil {
		s.log.Debug().Err(err).Msg("control event not written")
	}
}

func (s *childServer) handle(ctx context.Context, c Command) (Event, error) {
	switch c.Op {
	case opStart:
		if s.f != nil {
			return Event{}, fmt.Errorf("slice already started")
		}
		sl := *c.Slice
		if err := checkFileLimit(sl.Count); err != nil {
			return Event{}, err
		}
		f, err := fleet.Start(ctx, fleet.Config{
			Join: sl.Join, FirstNodeMonitor: sl.First, NodeMonitors: sl.Count, Slots: sl.Slots,
			Apps: sl.Apps, GossipProfile: sl.GossipProfile, HTTP: sl.HTTP, StartEvery: sl.StartEvery, Log: s.log,
			Progress: func(started, of int) { s.send(Event{Kind: evProgress, Started: started, Of: of}) },
			OnLaunch: func(node int, t client.LaunchedTask) {
				s.send(Event{Kind: evLaunch, Launch: &Launch{
					Node: sl.First + node, RequestID: t.Ref.RequestID, TaskID: t.Ref.TaskID, AtUnixNano: time.Now().UnixNano(),
				}})
			},
		})
		if err != nil {
			return Event{}, err
		}
		s.f, s.slice = f, sl
		return Event{Kind: evReady}, nil
	case opProfile:
		if s.stopProfile != nil {
			s.stopProfile()
			s.stopProfile = nil
		}
		if c.Profile != "" {
			stop, err := startCPUProfile(c.Profile)
			if err != nil {
				return Event{}, err
			}
			s.stopProfile = stop
		}
		return Event{Kind: evProfiled}, nil
	case opCounters:
		g := s.counter.Totals()
		return Event{Kind: evCounters, Gossip: &g, CPUNanos: int64(processCPU())}, nil
	case opKill:
		if s.f == nil || c.Kill >= len(s.f.NodeMonitors) {
			return Event{}, fmt.Errorf("no node monitor %d in this slice", c.Kill)
		}
		d := s.f.NodeMonitors[c.Kill]
		v := Victim{Name: d.Cluster.Name(), Addr: d.InternalAddr()}
		s.f.KillNodeMonitor(c.Kill)
		return Event{Kind: evKilled, Victim: &v}, nil
	}
	return Event{}, fmt.Errorf("op %q is not handled", c.Op)
}

func (s *childServer) close() {
	if s.stopProfile != nil {
		s.stopProfile()
		s.stopProfile = nil
	}
	if s.f != nil {
		if err := s.f.Close(); err != nil {
			s.log.Warn().Err(err).Msg("stopping the slice")
		}
		s.f = nil
	}
}
