package nodemonitor

import (
	"slices"
	"sync"
	"time"

	"github.com/sparrowfleet/sparrow/core/slots"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// offerMemory is how long a node monitor remembers what it answered an
// offer, or a scheduler's question about one (offerLedger). It must
// outlast any call still in flight that carries the offer: a call ends at
// its timeout, seconds, so minutes leave a wide margin.
const offerMemory = 2 * time.Minute

// maxOfferMemory bounds the offers remembered, oldest forgotten first, so
// a flood of offers cannot grow a node monitor without limit. At that
// bound an offer is forgotten sooner than offerMemory only above about
// 8,000 offers a second to this one node monitor.
const maxOfferMemory = 1 << 20

// offerLedger remembers, for recent offers, whether this node monitor took
// them (sparrowrpc.OFFER_TAKEN, OFFER_DECLINED): the answer to a
// scheduler's offerOutcome for an offer whose reply it did not get. A
// question about an offer not seen is remembered as OFFER_UNSEEN, so that
// the offer, if it arrives after all, is declined and the answer stays
// true.
//
// Lock contract: mu guards every field. decide holds it while its take
// function runs, so that an offer's answer and a question about it never
// interleave; take may take slotTable's lock, which never calls back
// here. The unexported helpers record, decided, forget and len are called
// with mu held (or by a single goroutine, in tests).
type offerLedger struct {
	mu      sync.Mutex
	outcome map[slots.TaskKey]int32
	// order lists the keys in the order they were recorded, with when, so
	// that the oldest are forgotten first, from head.
	order []offerEntry
	head  int
}

// decide answers the offer of key once. It calls take with mu held,
// fresh set when the offer was neither answered nor asked about before:
// then take may run the offer, reports whether it did, and the ledger
// remembers the answer (taken or declined). Otherwise take must not run
// the offer, and the earlier answer stands. decide returns what take
// returned with fresh set, and false otherwise.
func (l *offerLedger) decide(key slots.TaskKey, now time.Time, take func(fresh bool) bool) (taken bool) {
	return l.decideAll([]slots.TaskKey{key}, now, func(fresh []bool) []bool {
		return []bool{take(fresh[0])}
	})[0]
}

// decideAll is decide for several offers answered together: take gets,
// for each key, whether its offer is fresh (a key repeated in keys is
// fresh at most once) and returns, for each, whether it ran it.
func (l *offerLedger) decideAll(keys []slots.TaskKey, now time.Time, take func(fresh []bool) []bool) (taken []bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fresh := make([]bool, len(keys))
	for i, key := range keys {
		_, asked := l.decided(key)
		fresh[i] = !asked && !slices.Contains(keys[:i], key)
	}
	took := take(fresh)
	taken = make([]bool, len(keys))
	for i, key := range keys {
		if !fresh[i] {
			continue
		}
		outcome := int32(sparrowrpc.OFFER_DECLINED)
		if took[i] {
			outcome = sparrowrpc.OFFER_TAKEN
		}
		l.record(key, outcome, now)
		taken[i] = took[i]
	}
	return taken
}

// ask returns what was answered to the offer of key; an offer not seen is
// answered OFFER_UNSEEN, remembered so.
func (l *offerLedger) ask(key slots.TaskKey, now time.Time) int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	outcome, ok := l.decided(key)
	if !ok {
		outcome = int32(sparrowrpc.OFFER_UNSEEN)
		l.record(key, outcome, now)
	}
	return outcome
}

type offerEntry struct {
	key slots.TaskKey
	at  time.Time
}

// decided reports whether the offer of key was answered (or asked about)
// already, and if so the outcome.
func (l *offerLedger) decided(key slots.TaskKey) (outcome int32, ok bool) {
	outcome, ok = l.outcome[key]
	return outcome, ok
}

// record remembers the outcome for key at now, and forgets answers older
// than offerMemory.
func (l *offerLedger) record(key slots.TaskKey, outcome int32, now time.Time) {
	if l.outcome == nil {
		l.outcome = make(map[slots.TaskKey]int32)
	}
	l.forget(now)
	if _, ok := l.outcome[key]; !ok {
		l.order = append(l.order, offerEntry{key: key, at: now})
	}
	l.outcome[key] = outcome
}

// forget drops answers older than offerMemory, and the oldest past
// maxOfferMemory.
func (l *offerLedger) forget(now time.Time) {
	for l.head < len(l.order) {
		e := l.order[l.head]
		if now.Sub(e.at) < offerMemory && len(l.order)-l.head < maxOfferMemory {
			break
		}
		delete(l.outcome, e.key)
		l.order[l.head] = offerEntry{}
		l.head++
	}
	if l.head > 0 && l.head >= len(l.order)/2 {
		n := copy(l.order, l.order[l.head:])
		clear(l.order[n:])
		l.order = l.order[:n]
		l.head = 0
	}
}

// len is how many answers are remembered.
func (l *offerLedger) len() int { return len(l.outcome) }
