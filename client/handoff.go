package client

import (
	"sync"
	"time"
)

// taskEnd is how a task ended: the status and message its taskDone
// carries.
type taskEnd struct {
	status int32
	body   []byte
}

// handoff passes a task's end to exactly one of two parties: the launch
// call waiting for it (launchTaskAndWait, which answers with it), or the
// task's own goroutine (which reports it with taskDone) once the launch
// call has stopped waiting.
//
// Lock contract: mu guards every field but ended, which is closed under
// mu; neither method calls out while holding mu.
type handoff struct {
	mu        sync.Mutex
	ended     chan struct{} // closed by finish when the waiter takes the end
	end       taskEnd
	abandoned bool // the waiter stopped waiting: the task reports itself
}

func newHandoff() *handoff { return &handoff{ended: make(chan struct{})} }

// finish offers the task's end to the waiter. It returns false when the
// waiter has stopped waiting, and the caller must report the end itself.
func (h *handoff) finish(end taskEnd) (taken bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.abandoned {
		return false
	}
	h.end = end
	close(h.ended)
	return true
}

// await waits up to d (or until stop is closed) for the task to end. It
// returns the end and true if the task ended meanwhile, the caller then
// answering with it; otherwise false, and the task's goroutine reports
// its end when it comes.
func (h *handoff) await(d time.Duration, stop <-chan struct{}) (taskEnd, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-h.ended:
	case <-t.C:
	case <-stop:
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.ended:
		return h.end, true
	default:
		h.abandoned = true
		return taskEnd{}, false
	}
}
