package scheduler

import (
	"time"

	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// The additive InternalService methods a node monitor may lack (an older
// build answers them UNKNOWN_METHOD), as recorded in offerBook.caps.
const (
	methodOffer        = "enqueueTaskReservationsWithOffer"
	methodOfferOutcome = "offerOutcome"
)

// offerBook is what the scheduler knows of node monitors for offers
// (offer.go): which lack the offer methods, which asked for a pause in
// offers because a coordinator guides their queues, each one's start
// nonce and free slots, and the offers in doubt on each, until settled.
//
// It has no lock of its own, apart from caps (rpc.Capabilities, safe for
// concurrent use): it is not safe for concurrent use, and its owner
// serialises every call.
type offerBook struct {
	caps rpc.Capabilities
	// guidedUntil holds, for node monitors that declined an offer
	// because a coordinator guides their queues, when to offer them
	// tasks again.
	guidedUntil map[string]time.Time
	// boot holds each node monitor's start nonce from its latest answer
	// to an offer or a question about one.
	boot map[string]string
	// free holds, for node monitors that said so in an answer to an
	// offer, how many slots they had free, less the tasks offered to them
	// since, plus this scheduler's tasks that ended there since: a slot
	// a task of its own frees is free until the node monitor fills it
	// from its queue, and an offer it then has no slot for is declined
	// and waits for its reservation, as it would have without the offer.
	free map[string]int
	// doubts holds, by node monitor, the offers whose calls failed after
	// they were sent, until the node monitor says whether it took them.
	doubts map[string]map[offerDoubt]struct{}
	// waitHook, if set, is called when a getTask starts waiting for
	// offers' answers; tests use it.
	waitHook func()

	made, taken, inDoubt, declined, backups uint64
}

// offersTo reports whether the node monitor at addr is offered tasks: it
// has the method and is not in a pause. now is read only for a node
// monitor that was paused; an ended pause is forgotten.
func (b *offerBook) offersTo(addr string, now func() time.Time) bool {
	if b.caps.Lacks(addr, methodOffer) {
		return false
	}
	until, ok := b.guidedUntil[addr]
	if !ok {
		return true
	}
	if now().Before(until) {
		return false
	}
	delete(b.guidedUntil, addr)
	return true
}

// pause offers no tasks to addr until until.
func (b *offerBook) pause(addr string, until time.Time) {
	if b.guidedUntil == nil {
		b.guidedUntil = make(map[string]time.Time)
	}
	b.guidedUntil[addr] = until
}

// setBoot records addr's start nonce, if it gave one.
func (b *offerBook) setBoot(addr, boot string) {
	if boot == "" {
		return
	}
	if b.boot == nil {
		b.boot = make(map[string]string)
	}
	b.boot[addr] = boot
}

// setFree records that addr has free slots free, unless free is
// negative (not said).
func (b *offerBook) setFree(addr string, free int) {
	if free < 0 {
		return
	}
	if b.free == nil {
		b.free = make(map[string]int)
	}
	b.free[addr] = free
}

// finished counts n of this scheduler's tasks that ended on addr as
// freeing slots there, if addr has said how many it has free.
func (b *offerBook) finished(addr string, n int) {
	if f, ok := b.free[addr]; ok && n > 0 {
		b.free[addr] = min(f+n, maxFreeSlots)
	}
}

// maxFreeSlots bounds offerBook.free, which finished reports raise
// between a node monitor's answers; batch caps each offer far lower.
const maxFreeSlots = 1 << 16

// batch returns how many tasks to offer addr in one call: as many as it
// is thought to have free slots, at least 1, at most most.
func (b *offerBook) batch(addr string, most int) int {
	return min(max(b.free[addr], 1), most)
}

// offered counts n tasks offered to addr against its free slots, until
// its answer says how many it has.
func (b *offerBook) offered(addr string, n int) {
	if f, ok := b.free[addr]; ok {
		b.free[addr] = max(f-n, 0)
	}
}

// bootOf returns addr's last known start nonce, "" if none.
func (b *offerBook) bootOf(addr string) string { return b.boot[addr] }

// doubtLocked records offer d on addr in doubt.
func (b *offerBook) doubt(addr string, d offerDoubt) {
	if b.doubts == nil {
		b.doubts = make(map[string]map[offerDoubt]struct{})
	}
	m := b.doubts[addr]
	if m == nil {
		m = make(map[offerDoubt]struct{})
		b.doubts[addr] = m
	}
	m[d] = struct{}{}
	b.inDoubt++
}

// inDoubtOn reports whether offer d on addr is still in doubt.
func (b *offerBook) inDoubtOn(addr string, d offerDoubt) bool {
	_, ok := b.doubts[addr][d]
	return ok
}

// settle forgets offer d on addr, which is in doubt.
func (b *offerBook) settle(addr string, d offerDoubt) {
	m := b.doubts[addr]
	delete(m, d)
	if len(m) == 0 {
		delete(b.doubts, addr)
	}
}

// nodeLost forgets and returns the offers in doubt on addr, a node
// monitor declared lost.
func (b *offerBook) nodeLost(addr string) []offerDoubt {
	var out []offerDoubt
	for d := range b.doubts[addr] {
		out = append(out, d)
	}
	delete(b.doubts, addr)
	delete(b.free, addr)
	return out
}

// statsInto fills the book's counters in st.
func (b *offerBook) statsInto(st *Stats) {
	st.OffersMade, st.OffersTaken = b.made, b.taken
	st.OffersInDoubt, st.DoubtsDeclined = b.inDoubt, b.declined
	st.BackupsSent = b.backups
}
