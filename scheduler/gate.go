package scheduler

import "sync/atomic"

// gate is admission control: whether a submitJob call is answered at
// once, held or refused. It is the held calls (holdBook; hold.go states
// the semantics), admission by expected queue wait (admissionBook,
// admission.go), whose jobs are held calls sharing the holds' bound,
// counts and capacity signal, and the drain (drain.go), which refuses
// new calls and answers the held ones.
//
// It has no lock of its own: it is not safe for concurrent use, and its
// owner serialises every call, except that draining may be loaded
// without that.
type gate struct {
	hold holdBook
	adm  admissionBook
	// draining is set by drain and never cleared. It is atomic so that
	// Draining and submitJob's first look may load it without the
	// owner's serialisation; submitJob loads it again, serialised,
	// before adding a job, so no job is accepted once drain began.
	draining atomic.Bool
}

// drain refuses submitJob calls from now on and signals every held call,
// so that each is answered at once.
func (g *gate) drain() {
	g.draining.Store(true)
	g.hold.wakeAll()
	g.adm.wakeAll()
}

// snapshot returns the counts of held calls and of load reports taken.
func (g *gate) snapshot() HoldStats {
	st := g.hold.snapshot()
	st.LoadReports = g.adm.reportsTaken
	return st
}
