package shortjobs

// LongWork is a node monitor's count of the long work it runs: slots
// fetching a long job's task or running one. Queued long reservations do
// not count: under SRPT a short reservation queued beside them is served
// first, so they delay it by no long task. The advertisement is one byte,
// the count saturated at 255, of which schedulers use only whether it is
// zero. The zero value is ready.
type LongWork struct {
	n int
}

// Add changes the count by d (negative when long work leaves) and reports
// whether the advertised state (zero or not) changed, i.e. whether the
// node monitor should gossip its new advertisement. The count never goes
// below zero.
func (l *LongWork) Add(d int) bool {
	was := l.n > 0
	l.n = max(0, l.n+d)
	return was != (l.n > 0)
}

// Count returns the current count.
func (l *LongWork) Count() int { return l.n }

// Busy reports whether the node runs or holds any long work.
func (l *LongWork) Busy() bool { return l.n > 0 }

// Advert returns the one-byte advertisement: the count, saturated at 255.
func (l *LongWork) Advert() byte { return byte(min(l.n, 255)) }

// AdvertBusy reports whether an advertisement says the node holds long
// work. A missing advertisement (a node monitor without the policy) says
// nothing, and the node is taken as free of long work.
func AdvertBusy(b []byte) bool { return len(b) > 0 && b[0] > 0 }
