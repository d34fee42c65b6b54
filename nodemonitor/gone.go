package nodemonitor

import "sync"

// schedulerSet holds the SchedulerService addresses of schedulers gossip
// has declared dead or departed: their reservations are released without
// a getTask, which would only wait out its timeout while holding a slot,
// and a fetch in doubt stops asking them again.
//
// Lock contract: mu guards gone; each method takes it and never calls
// out, so other parts may call has while holding their own lock.
type schedulerSet struct {
	mu   sync.Mutex
	gone map[string]bool
}

func (s *schedulerSet) add(svc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone == nil {
		s.gone = make(map[string]bool)
	}
	s.gone[svc] = true
}

func (s *schedulerSet) remove(svc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.gone, svc)
}

func (s *schedulerSet) has(svc string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone[svc]
}
