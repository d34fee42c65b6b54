package scheduler

import "time"

// Links to frontends: bounded memory and log lines for a frontend that
// goes away.
//
// Messages about tasks reach a frontend through the scheduler, one RPC per
// message (frontend.go). Each frontend address has a link, kept in the
// frontend links part (frontendBook), that bounds and paces those RPCs:
//
//   - At most Config.FrontendMaxInflight messages are in flight to one
//     address. A caller past the bound waits for a slot for at most the
//     RPC call timeout, and its message is then dropped and counted.
//   - A failed delivery marks the link down. While it is down, messages
//     are dropped and counted without a dial, except one probe per
//     backoff, which is delivered normally; the backoff doubles from
//     frontendBackoffMin to frontendBackoffMax, with jitter, after each
//     failed probe. Any successful delivery brings the link back up.
//   - A link down for Config.FrontendDeadAfter (no delivery has succeeded
//     in that time), whose latest delivery failed within the last
//     frontendBackoffMax, is dead (a link quiet for longer is probed by
//     its next message first; deadAt says why): every app registered at that address is
//     deregistered, every job naming that address forgotten, and the link
//     forgotten. Messages for those apps are then refused at once as
//     having no frontend, as for an app that never registered, until a
//     frontend registers again; those jobs' messages go by their app's
//     registration.
//   - Drops are logged at most once per frontendLogInterval per link, with
//     their counts since the last line, by the sweep; never once per
//     message.
//
// The link book is pure bookkeeping: it takes the time and a jitter
// function, makes no RPC and does no logging; the shell in frontend.go
// does both.

// Defaults and fixed bounds for links to frontends.
const (
	// DefaultFrontendMaxInflight is how many messages may be in flight to
	// one frontend at once. It equals rpc.DefaultMaxConnsPerPeer, so
	// that calls past it wait here, for a stated reason, rather than in
	// the connection pool.
	DefaultFrontendMaxInflight = 64
	// DefaultFrontendDeadAfter is how long a frontend may stay
	// unreachable before its apps are deregistered.
	DefaultFrontendDeadAfter = 60 * time.Second

	frontendBackoffMin  = 100 * time.Millisecond
	frontendBackoffMax  = 10 * time.Second
	frontendLogInterval = 10 * time.Second
)

// linkVerdict is what begin decides for one message.
type linkVerdict int

const (
	// linkSend: a slot is taken; deliver, then call end.
	linkSend linkVerdict = iota
	// linkProbe: the link is down and this message is its one probe; a
	// slot is taken; deliver, then call end with probe set.
	linkProbe
	// linkFull: every slot is taken; wait for link.free or drop.
	linkFull
	// linkDown: the link is down and no probe is due; drop.
	linkDown
	// linkDead: the link has been down for deadAfter; deregister it.
	linkDead
)

// linkOutcome is how one delivery ended.
type linkOutcome int

const (
	outcomeOK linkOutcome = iota
	// outcomeFailed: the frontend could not be reached or failed the call.
	outcomeFailed
	// outcomeAnswered: the frontend answered with its handler's error.
	// The message failed, but the frontend is reachable: the link is up.
	outcomeAnswered
	// outcomeBusy: the call never left, because every pooled connection
	// to the frontend stayed in use (rpc.ErrBusy). That says the frontend
	// is slow, not gone, so it does not take the link down.
	outcomeBusy
)

// dropReason is why a message was not delivered.
type dropReason int

const (
	dropFailed      dropReason = iota // delivered and failed
	dropUnreachable                   // not sent: the link was down
	dropInflight                      // not sent: no slot freed in time, or the pool was busy
	numDropReasons
)

var dropReasonNames = [numDropReasons]string{"failed", "unreachable", "inflight"}

// FrontendStats counts messages to frontends and the links' state.
type FrontendStats struct {
	// Delivered counts messages a frontend accepted.
	Delivered uint64
	// Failed counts messages whose delivery was tried and failed.
	Failed uint64
	// DroppedUnreachable counts messages dropped without a call because
	// their frontend was down and no probe was due.
	DroppedUnreachable uint64
	// DroppedInflight counts messages dropped because no in-flight slot
	// freed within the call timeout (or every pooled connection stayed
	// in use).
	DroppedInflight uint64
	// DroppedNoFrontend counts messages for an app with no registered
	// frontend, including apps deregistered as dead.
	DroppedNoFrontend uint64
	// Deregistered counts frontend addresses whose apps were
	// deregistered as dead.
	Deregistered uint64
	// Apps is the number of apps with a registered frontend (at most
	// 65,536).
	Apps int
	// Jobs is the number of jobs kept with the frontend address they
	// named (frontendjobs.go).
	Jobs int
	// Inflight is the number of messages being delivered now; Waiting
	// the messages waiting for an in-flight slot; Links the links kept
	// (frontends with messages in flight, down, or with drops not yet
	// logged); Down the links that are down.
	Inflight, Waiting, Links, Down int
}

// frontendLink is one frontend address's delivery state.
type frontendLink struct {
	inflight  int
	down      bool
	probing   bool      // the probe of a down link is in flight
	failures  int       // failed probes since the link went down, plus one
	downSince time.Time // the first failure since the last success
	lastFail  time.Time // the latest failed delivery
	nextProbe time.Time
	// pending counts drops since the last log line, lastLog is that
	// line's time.
	pending [numDropReasons]uint64
	lastLog time.Time
	// gone: the link was deregistered while messages were in flight; it
	// is forgotten when the last one ends.
	gone bool
	// free, when not nil, is closed when a slot frees; callers waiting
	// for a slot wait on it.
	free chan struct{}
}

func (l *frontendLink) hasPending() bool {
	for _, n := range l.pending {
		if n > 0 {
			return true
		}
	}
	return false
}

// wait returns a channel closed when a slot of l frees.
func (l *frontendLink) wait() <-chan struct{} {
	if l.free == nil {
		l.free = make(chan struct{})
	}
	return l.free
}

func (l *frontendLink) signal() {
	if l.free != nil {
		close(l.free)
		l.free = nil
	}
}

// linkBook holds the links to frontends. It has no lock of its own: it is
// not safe for concurrent use, and its owner serialises every call.
type linkBook struct {
	maxInflight int
	deadAfter   time.Duration // <= 0: never deregister
	// jitter returns a duration in [0, d); the scheduler draws it from
	// its rng, tests fix it.
	jitter func(d time.Duration) time.Duration
	links  map[string]*frontendLink
	stats  FrontendStats

	// Messages for apps with no frontend are summarised for the whole
	// scheduler, not per app, so that unknown app names cost no memory.
	noFrontendPending uint64
	noFrontendApp     string // the latest such app, for the log line
	noFrontendLog     time.Time
}

func newLinkBook(maxInflight int, deadAfter time.Duration, jitter func(time.Duration) time.Duration) linkBook {
	return linkBook{maxInflight: maxInflight, deadAfter: deadAfter, jitter: jitter, links: make(map[string]*frontendLink)}
}

func (b *linkBook) get(addr string) *frontendLink {
	l := b.links[addr]
	if l == nil {
		l = &frontendLink{}
		b.links[addr] = l
	}
	return l
}

// backoff is the wait before the next probe after failures failed
// attempts: frontendBackoffMin doubled per failure up to
// frontendBackoffMax, drawn from its upper half.
func (b *linkBook) backoff(failures int) time.Duration {
	d := frontendBackoffMin
	for i := 1; i < failures && d < frontendBackoffMax; i++ {
		d *= 2
	}
	d = min(d, frontendBackoffMax)
	return d/2 + b.jitter(d/2)
}

// begin decides what to do with one message to addr at now. With linkSend
// or linkProbe it has taken a slot, which end must give back.
func (b *linkBook) begin(addr string, now time.Time) (linkVerdict, *frontendLink) {
	l := b.get(addr)
	if l.down {
		if b.deadAt(l, now) {
			return linkDead, l
		}
		if l.probing || now.Before(l.nextProbe) {
			return linkDown, l
		}
	}
	if l.inflight >= b.maxInflight {
		return linkFull, l
	}
	l.inflight++
	b.stats.Inflight++
	if l.down {
		l.probing = true
		return linkProbe, l
	}
	return linkSend, l
}

// beginMore takes up to n more in-flight slots on l, a link begin just
// answered linkSend, for messages sent with that one, if the link is up
// and has room for them without waiting, and returns how many it took.
// Each is given back with end, as begin's is.
func (b *linkBook) beginMore(l *frontendLink, n int) int {
	if l.down {
		return 0
	}
	k := max(min(n, b.maxInflight-l.inflight), 0)
	l.inflight += k
	b.stats.Inflight += k
	return k
}

// end gives back the slot begin took for a delivery to addr that ended
// with outcome at now; probe says begin answered linkProbe.
func (b *linkBook) end(addr string, l *frontendLink, now time.Time, probe bool, outcome linkOutcome) {
	l.inflight--
	b.stats.Inflight--
	l.signal()
	if probe {
		l.probing = false
	}
	switch outcome {
	case outcomeOK, outcomeAnswered:
		if outcome == outcomeOK {
			b.stats.Delivered++
		} else {
			b.stats.Failed++
			l.pending[dropFailed]++
		}
		l.down, l.failures, l.downSince, l.nextProbe = false, 0, time.Time{}, time.Time{}
	case outcomeFailed:
		b.stats.Failed++
		l.pending[dropFailed]++
		l.lastFail = now
		switch {
		case !l.down:
			l.down, l.downSince, l.failures = true, now, 1
			l.nextProbe = now.Add(b.backoff(l.failures))
		case probe:
			// Only a failed probe lengthens the backoff: the messages
			// already in flight when the link went down fail together
			// and say nothing new.
			l.failures++
			l.nextProbe = now.Add(b.backoff(l.failures))
		}
	case outcomeBusy:
		b.stats.DroppedInflight++
		l.pending[dropInflight]++
	}
	b.tidy(addr, l, now)
}

// drop counts a message to addr dropped for reason (dropUnreachable or
// dropInflight) without a delivery.
func (b *linkBook) drop(addr string, reason dropReason) {
	l := b.get(addr)
	l.pending[reason]++
	switch reason {
	case dropUnreachable:
		b.stats.DroppedUnreachable++
	case dropInflight:
		b.stats.DroppedInflight++
	}
}

// noFrontend counts a message dropped because app has no frontend.
func (b *linkBook) noFrontend(app string) {
	b.stats.DroppedNoFrontend++
	b.noFrontendPending++
	b.noFrontendApp = app
}

// tidy forgets l if it holds nothing worth keeping: no message in flight,
// and either deregistered, or up with every drop logged and no line in the
// last interval (so that a flapping link cannot log more than once per
// interval by being forgotten and made anew).
func (b *linkBook) tidy(addr string, l *frontendLink, now time.Time) {
	if l.inflight > 0 || b.links[addr] != l {
		return
	}
	if l.gone || (!l.down && !l.hasPending() && now.Sub(l.lastLog) >= frontendLogInterval) {
		delete(b.links, addr)
	}
}

// isDown reports whether addr's link is down.
func (b *linkBook) isDown(addr string) bool {
	l := b.links[addr]
	return l != nil && l.down
}

// reset makes addr's link up, as for a frontend that just registered
// there; messages in flight keep their slots.
func (b *linkBook) reset(addr string) {
	l := b.links[addr]
	if l == nil {
		return
	}
	l.down, l.probing, l.failures, l.downSince, l.nextProbe, l.gone = false, false, 0, time.Time{}, time.Time{}, false
	l.signal()
}

// linkReport is one log line's worth of a link's drops.
type linkReport struct {
	addr      string
	dropped   [numDropReasons]uint64
	down      bool
	downSince time.Time
}

func (r linkReport) total() uint64 {
	var n uint64
	for _, d := range r.dropped {
		n += d
	}
	return n
}

// forget deregisters addr's link, returning its drops not yet logged. A
// link with messages in flight is kept, marked gone, until they end.
func (b *linkBook) forget(addr string, now time.Time) linkReport {
	l := b.links[addr]
	if l == nil {
		return linkReport{addr: addr}
	}
	r := linkReport{addr: addr, dropped: l.pending, down: l.down, downSince: l.downSince}
	l.pending = [numDropReasons]uint64{}
	l.lastLog = now
	l.down, l.probing, l.gone = false, false, true
	l.signal()
	b.tidy(addr, l, now)
	return r
}

// dead lists the links down for deadAfter at now.
func (b *linkBook) dead(now time.Time) []string {
	var out []string
	for addr := range b.links {
		if b.isDead(addr, now) {
			out = append(out, addr)
		}
	}
	return out
}

// isDead reports whether addr's link is dead at now (deadAt).
func (b *linkBook) isDead(addr string, now time.Time) bool {
	l := b.links[addr]
	return l != nil && b.deadAt(l, now)
}

// deadAt reports whether l is dead at now: down for deadAfter, with a
// delivery failed within the last frontendBackoffMax. A link that has
// carried nothing for longer is not judged on an old failure: the
// frontend may be back (a network blip in a quiet spell), and an original
// frontend registers only once, so deregistering it would silence it for
// good. Its next message probes it first, and only a failed probe makes
// it dead.
func (b *linkBook) deadAt(l *frontendLink, now time.Time) bool {
	return b.deadAfter > 0 && l.down && !l.gone && now.Sub(l.downSince) >= b.deadAfter &&
		now.Sub(l.lastFail) <= frontendBackoffMax
}

// reports returns a line for every link with drops not yet logged whose
// last line is at least frontendLogInterval old, and marks them logged;
// links left with nothing to keep are forgotten.
func (b *linkBook) reports(now time.Time) []linkReport {
	var out []linkReport
	for addr, l := range b.links {
		if l.hasPending() && now.Sub(l.lastLog) >= frontendLogInterval {
			out = append(out, linkReport{addr: addr, dropped: l.pending, down: l.down, downSince: l.downSince})
			l.pending = [numDropReasons]uint64{}
			l.lastLog = now
		}
		b.tidy(addr, l, now)
	}
	return out
}

// noFrontendReport returns the count of messages dropped for want of a
// frontend since the last report, and the latest such app, at most once
// per frontendLogInterval; zero when nothing is due.
func (b *linkBook) noFrontendReport(now time.Time) (uint64, string) {
	if b.noFrontendPending == 0 || now.Sub(b.noFrontendLog) < frontendLogInterval {
		return 0, ""
	}
	n, app := b.noFrontendPending, b.noFrontendApp
	b.noFrontendPending, b.noFrontendApp, b.noFrontendLog = 0, "", now
	return n, app
}

// snapshot returns the counters with the gauges filled in; apps is the
// number of apps with a registered frontend.
func (b *linkBook) snapshot(apps int) FrontendStats {
	st := b.stats
	st.Apps = apps
	st.Links = len(b.links)
	for _, l := range b.links {
		if l.down {
			st.Down++
		}
	}
	return st
}
