package nodemonitor

import "sync"

// schedulerFeatures records the extensions each scheduler said it serves
// (TEnqueueTaskReservationsRequest.schedulerFeatures), by its
// SchedulerService address. A scheduler's latest word stands: one that
// restarts without an extension says so with its next reservation.
//
// Lock contract: mu guards bits; the methods never call out.
type schedulerFeatures struct {
	mu   sync.Mutex
	bits map[string]int32
}

// heard records what svc's latest reservation said it serves; a
// reservation without the field says it serves no extension.
func (f *schedulerFeatures) heard(svc string, bits *int32) {
	var b int32
	if bits != nil {
		b = *bits
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bits[svc] == b {
		return
	}
	if f.bits == nil {
		f.bits = make(map[string]int32)
	}
	if b == 0 {
		delete(f.bits, svc)
		return
	}
	f.bits[svc] = b
}

// has reports whether svc said it serves every extension in bit.
func (f *schedulerFeatures) has(svc string, bit int32) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bits[svc]&bit == bit
}
