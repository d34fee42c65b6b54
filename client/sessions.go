package client

import (
	"time"

	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// Sessions.
//
// A session is one pooled connection to a scheduler address: the
// frontend registers on it when it opens, and submits jobs on it. Behind
// a load balancer each connection may reach a different scheduler, and
// only its session knows which: a job is in flight on the session its
// submitJob was sent on. The frontend checks, every Heartbeat, each
// session with jobs in flight that has not answered within the last
// Heartbeat, with an empty job on that very connection; a session whose
// check fails, or whose connection closed (a call on it failed, or its
// scheduler closed it), is gone, and so is, as far as the frontend can
// tell, the scheduler behind it: its jobs are reported through
// OnFailover.

// session is one connection's state.
type session struct {
	addr   string    // the configured scheduler address it connects to
	jobs   int       // jobs in flight on it
	lastOK time.Time // its latest answered call
}

// sessionRef names a session to check.
type sessionRef struct {
	id   rpc.ConnID
	addr string
}

// sessionBook holds the sessions with jobs in flight. It has no lock of
// its own: it is not safe for concurrent use, and its owner serialises
// every call.
type sessionBook struct {
	byID map[rpc.ConnID]*session
}

func newSessionBook() sessionBook { return sessionBook{byID: make(map[rpc.ConnID]*session)} }

// attach counts a job submitted at now on session id to addr; sending it
// counts as an answer.
func (b *sessionBook) attach(id rpc.ConnID, addr string, now time.Time) {
	s := b.byID[id]
	if s == nil {
		s = &session{addr: addr}
		b.byID[id] = s
	}
	s.jobs++
	s.lastOK = now
}

// detach counts a job of session id no longer in flight; a session with
// none is forgotten.
func (b *sessionBook) detach(id rpc.ConnID) {
	s := b.byID[id]
	if s == nil {
		return
	}
	if s.jobs--; s.jobs <= 0 {
		delete(b.byID, id)
	}
}

// answered records a call session id answered at now.
func (b *sessionBook) answered(id rpc.ConnID, now time.Time) {
	if s := b.byID[id]; s != nil && now.After(s.lastOK) {
		s.lastOK = now
	}
}

// due returns the sessions to check at now: those with jobs in flight
// that have not answered within every.
func (b *sessionBook) due(now time.Time, every time.Duration) []sessionRef {
	var out []sessionRef
	for id, s := range b.byID {
		if now.Sub(s.lastOK) >= every {
			out = append(out, sessionRef{id, s.addr})
		}
	}
	return out
}

// on returns the sessions to addr with jobs in flight.
func (b *sessionBook) on(addr string) []sessionRef {
	var out []sessionRef
	for id, s := range b.byID {
		if s.addr == addr {
			out = append(out, sessionRef{id, addr})
		}
	}
	return out
}
