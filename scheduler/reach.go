package scheduler

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Reachability bounds.
const (
	// reachRecheck is how long after a failed call a node monitor held
	// unreachable is first dialed again; each failed redial doubles the
	// wait, up to reachRecheckMax.
	reachRecheck    = time.Second
	reachRecheckMax = 30 * time.Second
)

// reachability holds the node monitors this scheduler could not reach,
// so that placement stops sampling them at once instead of after gossip's
// failure detection (several seconds of suspicion): a call that could
// not be made (a refused, reset or timed-out connect) or whose connection
// was reset or closed puts the node monitor here. It leaves on a call
// that succeeds, on gossip news of it (it joined again or changed its
// metadata), or when a redial in the background connects: a node held
// here gets no reservation, so its own dials, spaced out from
// reachRecheck to reachRecheckMax, are what find it back if gossip never
// declared it dead. Safe for concurrent use.
//
// Lock contract: mu guards down and version; redial runs unlocked on
// its timer's goroutine.
type reachability struct {
	dial func(addr string) error // a connect, sending nothing
	log  zerolog.Logger
	// tell, if set, is told each node monitor a failed call of this
	// scheduler's took out (not those heard of from others), to tell the
	// other schedulers; it runs on its own goroutine.
	tell func(addr string)

	mu      sync.Mutex
	down    map[string]*unreachable
	version uint64 // increases whenever down changes, for cached views
	closed  bool
}

// unreachable is one node monitor held unreachable.
type unreachable struct {
	since time.Time
	// lastFailed is when a call of this scheduler's to it last failed
	// for want of it (zero if none did: it was heard of from another).
	lastFailed time.Time
	wait       time.Duration // until the next redial
	timer      *time.Timer
}

func newReachability(dial func(addr string) error, log zerolog.Logger) *reachability {
	return &reachability{dial: dial, log: log, down: map[string]*unreachable{}}
}

// unreachableErr reports whether err says that the node monitor could
// not be reached, not merely that it answered badly or slowly: a call
// never sent (rpc.DialError), or a connection reset or closed under it.
// rpc.ErrBusy (our own pool was full) says nothing about the node.
func unreachableErr(err error) bool {
	var dial *rpc.DialError
	return errors.As(err, &dial) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// noted records a call's outcome at addr: a success makes it reachable,
// an unreachableErr unreachable; other errors change nothing.
func (r *reachability) noted(addr string, err error) {
	switch {
	case err == nil:
		r.reached(addr)
	case unreachableErr(err):
		r.failed(addr, err)
	}
}

// failed holds addr unreachable after a call to it failed, if it is not
// already, schedules its first redial and tells the other schedulers.
func (r *reachability) failed(addr string, err error) { r.markDown(addr, err, true) }

// lost holds addr unreachable as failed does, after a connect that was
// not a call (the node watch's) failed: lastFailed is not changed, since
// it says when a call was last wasted on the node monitor.
func (r *reachability) lost(addr string, err error) { r.markDown(addr, err, false) }

func (r *reachability) markDown(addr string, err error, call bool) {
	added := r.hold(addr)
	if call {
		r.mu.Lock()
		if u, ok := r.down[addr]; ok {
			u.lastFailed = time.Now()
		}
		r.mu.Unlock()
	}
	if !added {
		return
	}
	r.log.Warn().Err(err).Str("node", addr).Msg("node monitor unreachable; no reservations for it until it answers or gossip brings news of it")
	if r.tell != nil {
		go r.tell(addr)
	}
}

// heard holds addr unreachable on another scheduler's word (its call
// failed): this scheduler's own redial, a call that succeeds or gossip
// news ends it as for its own failures, so a wrong word costs the node
// at most reachRecheck of this scheduler's reservations.
func (r *reachability) heard(addr string) {
	if r.hold(addr) {
		r.log.Info().Str("node", addr).Msg("node monitor unreachable, says another scheduler; no reservations for it until it answers or gossip brings news of it")
	}
}

// hold adds addr to the set and schedules its first redial, and reports
// whether it was not there already.
func (r *reachability) hold(addr string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.down[addr]; ok || r.closed {
		return false
	}
	u := &unreachable{since: time.Now(), wait: reachRecheck}
	u.timer = time.AfterFunc(u.wait, func() { r.redial(addr, u) })
	r.down[addr] = u
	r.version++
	return true
}

// reached forgets addr as unreachable: it answered, or gossip says it is
// live with news (it joined again, or changed its metadata), or it left
// the view.
func (r *reachability) reached(addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	u, ok := r.down[addr]
	if !ok {
		return
	}
	u.timer.Stop()
	delete(r.down, addr)
	r.version++
	r.log.Info().Str("node", addr).Dur("unreachable_for", time.Since(u.since)).Msg("node monitor reachable again")
}

// redial connects to u's node monitor; if that fails it tries again after
// twice the wait, up to reachRecheckMax.
func (r *reachability) redial(addr string, u *unreachable) {
	err := r.dial(addr)
	r.mu.Lock()
	if r.down[addr] != u || r.closed {
		r.mu.Unlock()
		return // reached meanwhile
	}
	if err != nil {
		u.wait = min(2*u.wait, reachRecheckMax)
		u.timer.Reset(u.wait)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.reached(addr)
}

// lastFailed returns when a call of this scheduler's to addr last failed
// for want of it, while addr is held unreachable.
func (r *reachability) lastFailed(addr string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	u, ok := r.down[addr]
	if !ok || u.lastFailed.IsZero() {
		return time.Time{}, false
	}
	return u.lastFailed, true
}

// changedSince reports whether the set changed after it had version.
func (r *reachability) changedSince(version uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.version != version
}

// state returns the addresses held unreachable (nil for none) and the
// set's version.
func (r *reachability) state() (down map[string]bool, version uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.down) > 0 {
		down = make(map[string]bool, len(r.down))
		for a := range r.down {
			down[a] = true
		}
	}
	return down, r.version
}

// close stops every redial.
func (r *reachability) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for _, u := range r.down {
		u.timer.Stop()
	}
}

// reachNodes is NodeMonitors that notes every call's outcome in a
// reachability.
type reachNodes struct {
	NodeMonitors
	reach *reachability
}

func (n reachNodes) EnqueueTaskReservations(ctx context.Context, addr string, req *sparrowrpc.TEnqueueTaskReservationsRequest) (bool, error) {
	ok, err := n.NodeMonitors.EnqueueTaskReservations(ctx, addr, req)
	n.reach.noted(addr, err)
	return ok, err
}

func (n reachNodes) EnqueueTaskReservationsWithOffer(ctx context.Context, addr string, req *sparrowrpc.TEnqueueTaskReservationsRequest, offers []*sparrowrpc.TTaskLaunchSpec) (*sparrowrpc.TEnqueueOfferReply, error) {
	rep, err := n.NodeMonitors.EnqueueTaskReservationsWithOffer(ctx, addr, req, offers)
	n.reach.noted(addr, err)
	return rep, err
}

func (n reachNodes) CancelTaskReservations(ctx context.Context, addr string, req *sparrowrpc.TCancelTaskReservationsRequest) error {
	err := n.NodeMonitors.CancelTaskReservations(ctx, addr, req)
	n.reach.noted(addr, err)
	return err
}

func (n reachNodes) OfferOutcome(ctx context.Context, addr, requestID, taskID string) (*sparrowrpc.TOfferOutcome, error) {
	ans, err := n.NodeMonitors.OfferOutcome(ctx, addr, requestID, taskID)
	n.reach.noted(addr, err)
	return ans, err
}

func (n reachNodes) UpdateRemainingWork(ctx context.Context, addr string, updates []*sparrowrpc.TRemainingWork) error {
	err := n.NodeMonitors.UpdateRemainingWork(ctx, addr, updates)
	n.reach.noted(addr, err)
	return err
}

func (n reachNodes) Close() {
	n.reach.close()
	n.NodeMonitors.Close()
}

// reachable returns hosts less those in down, or all of hosts when that
// leaves none: when every host of an app failed a call, a job is placed
// on them all the same, and its calls find out, rather than refused
// while gossip still lists them. hosts is not modified.
func reachable(hosts []placement.Node, down map[string]bool) []placement.Node {
	if len(down) == 0 {
		return hosts
	}
	var out []placement.Node
	for _, n := range hosts {
		if !down[n.Addr] {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return hosts
	}
	return out
}

// reachDialTimeout bounds a redial of a node monitor held unreachable.
const reachDialTimeout = time.Second

// reachableView returns the daemon's view of cluster, its Thrift calls to
// node monitors and its watch on their processes, sharing one
// reachability: calls that cannot reach a node monitor, and watches whose
// connection to one ended and could not be opened again, take it out of
// the view's candidates. The caller keeps the watch's set of node
// monitors in step with the view and closes it.
func reachableView(cluster *membership.Cluster, cfg Config) (*MembershipView, NodeMonitors, *nodeWatch) {
	rc := cfg.RPC
	if rc.DialLog == nil {
		rc.DialLog = &cfg.Log
	}
	nodes := newThriftNodes(rc)
	reach := newReachability(func(addr string) error {
		return nodes.pool.Reachable(context.Background(), addr, reachDialTimeout)
	}, cfg.Log.With().Str("component", "scheduler").Logger())
	shareUnreachable(reach, cluster, cfg.Log)
	view := NewMembershipView(cluster)
	view.reach = reach
	return view, reachNodes{NodeMonitors: nodes, reach: reach}, newNodeWatch(nodes.pool, reach.lost)
}

// Placeable returns the node monitors this scheduler would sample for app
// now: the live ones hosting it in its view, less any it could not
// reach.
func (s *Scheduler) Placeable(app string) []placement.Node { return s.view.Candidates(app) }

// Word of an unreachable node monitor between schedulers: one best-effort
// UDP packet (membership.Cluster.SendBestEffortTo) per other scheduler,
// the magic byte unreachableMagic (fairgossip uses 0xFA, pricegossip
// 0xFC), a format byte and the node monitor's InternalService address.
// Node monitors and the coordinator ignore it, as they ignore any message
// they do not know.
const (
	unreachableMagic  = 0xFB
	unreachableFormat = 1
	// maxUnreachableAddr bounds the address in a word: a host name and a
	// port, far below one packet.
	maxUnreachableAddr = 512
)

// encodeUnreachable is the word that addr is unreachable.
func encodeUnreachable(addr string) []byte {
	return append([]byte{unreachableMagic, unreachableFormat}, addr...)
}

// decodeUnreachable returns the address in a word of an unreachable node
// monitor, and false for any other message or a malformed word.
func decodeUnreachable(b []byte) (string, bool) {
	if len(b) < 3 || b[0] != unreachableMagic || b[1] != unreachableFormat || len(b)-2 > maxUnreachableAddr {
		return "", false
	}
	addr := string(b[2:])
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", false
	}
	return addr, true
}

// shareUnreachable has reach tell the other schedulers in cluster of the
// node monitors this one found unreachable, and take their word in turn.
func shareUnreachable(reach *reachability, cluster *membership.Cluster, log zerolog.Logger) {
	self := cluster.Name()
	reach.tell = func(addr string) {
		msg := encodeUnreachable(addr)
		for _, m := range cluster.Members(membership.RoleScheduler) {
			if m.Name == self {
				continue
			}
			if err := cluster.SendBestEffortTo(m.Name, msg); err != nil {
				log.Debug().Err(err).Str("scheduler", m.Name).Msg("word of an unreachable node monitor not sent")
			}
		}
	}
	cluster.OnMessage(func(b []byte) {
		if addr, ok := decodeUnreachable(b); ok {
			reach.heard(addr)
		}
	})
}

// LastFailedCall returns when this scheduler's last call to the node
// monitor at addr failed for want of it, while it holds that node monitor
// unreachable; false otherwise, or with a view that tracks no
// reachability. Tools that measure how soon a crashed node monitor stops
// getting reservations read it.
func (s *Scheduler) LastFailedCall(addr string) (time.Time, bool) {
	v, ok := s.view.(*MembershipView)
	if !ok || v.reach == nil {
		return time.Time{}, false
	}
	return v.reach.lastFailed(addr)
}
