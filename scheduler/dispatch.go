package scheduler

import "github.com/sparrowfleet/sparrow/core/placement"

// reservationBatch is one enqueue a decision wants sent: a request's
// reservations on one node monitor (probe), carrying the request's tasks
// listed in offers, if any (offer.go). counted says the request's held
// call waits for the answer (countHeldLocked).
//
// Decisions that run under the Scheduler's mutex return batches instead
// of calling node monitors; sendReservations, called once the mutex is
// released, is the one layer that puts them on the wire.
type reservationBatch struct {
	r       *request
	probe   placement.Probe
	offers  []int
	counted bool
}

// appendBatches appends to dst one batch per probe of r, probes[k]
// carrying the tasks offers[k] lists (none if offers is nil).
func appendBatches(dst []reservationBatch, r *request, probes []placement.Probe, offers [][]int, counted bool) []reservationBatch {
	for k, p := range probes {
		var offered []int
		if offers != nil {
			offered = offers[k]
		}
		dst = append(dst, reservationBatch{r: r, probe: p, offers: offered, counted: counted})
	}
	return dst
}

// sendReservations sends each batch to its node monitor, in parallel;
// each answer is handled as it comes (enqueueOne). Call it without the
// mutex held.
func (s *Scheduler) sendReservations(batches []reservationBatch) {
	for _, b := range batches {
		go s.enqueueOne(b.r, b.probe, b.counted, b.offers)
	}
}
