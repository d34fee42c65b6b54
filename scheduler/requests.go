package scheduler

import (
	"fmt"
	"iter"
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// request is a submitted job's state while any task is unlaunched. Its
// owner, the request book's, serialises every access to it, except to
// the fields set before it is published and never changed (the
// placement.Request's ID, app, user, specs, hold).
type request struct {
	*placement.Request
	app     string
	cons    []placement.Constraint
	user    *sparrowrpc.TUserGroupInfo
	specs   []*sparrowrpc.TTaskSpec
	ratio   float64
	failed  map[string]bool // nodes whose enqueue failed or that were lost
	reprobe int
	// submitted is when the job reached this scheduler.
	submitted time.Time
	// short is the long-task-aware policy's class and estimates for the
	// request (shortjobs.go); zero when the policy is off.
	short shortJob
	// deadline is when unlaunched tasks get extra reservations elsewhere,
	// in case a node monitor holds its reservation but never asks.
	deadline time.Time
	// steered is when r's reservations were last placed by submission or
	// by steering (steerBook.placed).
	steered time.Time
	// loc is the state of tasks that may relax their preferences, nil
	// if none may.
	loc *relaxState
	// hold is the submitJob call waiting for the reservations to be
	// placed (hold.go), nil when holding is disabled.
	hold *holdState
	// offerWake, if set, is closed when one of the tasks offered with
	// reservations is answered (offer.go).
	offerWake chan struct{}
	// offerBoot holds, by offered task, the start nonce its node monitor
	// last gave before the offer was sent ("" if none), to judge an
	// "unseen" answer about it (offer.go, resolveOffer).
	offerBoot map[int]string
	// doubted counts r's offers in doubt (offer.go, doubtLocked).
	doubted int
	// gaveUp is why re-placement gave up and reported the unlaunched
	// tasks failed; set when r is dropped so.
	gaveUp error
	// backup holds the reservations kept back while every task is
	// offered, sent only if an offer is declined (offer.go).
	backup []placement.Probe
}

// requestBook is the request book: the submitted jobs with a task not
// yet launched, by request id, and the ids this scheduler makes up. Each
// request's placement and late binding state is its placement.Request;
// the book says which requests are live (a request dropped from it is
// finished, given up or refused, though calls about it may still be
// answered).
//
// It has no lock of its own: it is not safe for concurrent use, and its
// owner serialises every call, and every access to a request's state.
type requestBook struct {
	byID     map[string]*request
	nextID   uint64
	idPrefix string // this process's, in every id it makes up
}

func newRequestBook(idPrefix string) requestBook {
	return requestBook{byID: make(map[string]*request), idPrefix: idPrefix}
}

// newID returns chosen, if it is not in use, or, if chosen is "", an id
// made up that is not in use (a frontend may have chosen one that looks
// like ours).
func (b *requestBook) newID(chosen string) (string, error) {
	if chosen != "" {
		if _, dup := b.byID[chosen]; dup {
			return "", fmt.Errorf("request id %q is already in use", chosen)
		}
		return chosen, nil
	}
	id := ""
	for id == "" || b.byID[id] != nil {
		b.nextID++
		id = fmt.Sprintf("%s-%d", b.idPrefix, b.nextID)
	}
	return id, nil
}

// add makes r live.
func (b *requestBook) add(r *request) { b.byID[r.ID] = r }

// get returns the live request with id.
func (b *requestBook) get(id string) (*request, bool) {
	r, ok := b.byID[id]
	return r, ok
}

// live reports whether r is live: the book holds it under its id.
func (b *requestBook) live(r *request) bool { return b.byID[r.ID] == r }

// remove drops r, if it is live, and reports whether it was.
func (b *requestBook) remove(r *request) bool {
	if !b.live(r) {
		return false
	}
	delete(b.byID, r.ID)
	return true
}

// len returns how many requests are live.
func (b *requestBook) len() int { return len(b.byID) }

// unlaunched returns how many tasks of live requests have not launched.
func (b *requestBook) unlaunched() int {
	n := 0
	for _, r := range b.byID {
		n += r.Unlaunched()
	}
	return n
}

// holding returns the live requests holding reservations on addr.
func (b *requestBook) holding(addr string) []*request {
	var out []*request
	for _, r := range b.byID {
		if r.Holds(addr) {
			out = append(out, r)
		}
	}
	return out
}

// outstanding yields the reservations of every live request not yet
// answered.
func (b *requestBook) outstanding() iter.Seq[placement.Probe] {
	return func(yield func(placement.Probe) bool) {
		for _, r := range b.byID {
			for _, p := range r.Outstanding() {
				if !yield(p) {
					return
				}
			}
		}
	}
}

// all yields the live requests, in no particular order. The caller may
// change a request's state but not the book while iterating.
func (b *requestBook) all() iter.Seq[*request] {
	return func(yield func(*request) bool) {
		for _, r := range b.byID {
			if !yield(r) {
				return
			}
		}
	}
}

// overdue returns the live requests with unlaunched tasks whose deadline
// passed before now, and moves their deadline to now+timeout.
func (b *requestBook) overdue(now time.Time, timeout time.Duration) []*request {
	var due []*request
	for _, r := range b.byID {
		if !r.deadline.IsZero() && now.After(r.deadline) && !r.Launched() {
			r.deadline = now.Add(timeout)
			due = append(due, r)
		}
	}
	return due
}
