package rpc

import (
	"context"
	"errors"
	"time"
)

// Pauses between tries of a call that found every pooled connection busy.
const (
	busyPauseMin = 10 * time.Millisecond
	busyPauseMax = time.Second
)

// UntilSent runs call until it returns anything but ErrBusy, or ctx ends,
// pausing between tries (10 ms doubling to 1 s); onBusy, if not nil, is
// called at each ErrBusy. A call that failed with ErrBusy was never sent,
// so trying again cannot deliver it twice, while giving up would drop
// what the caller owed its peer (a task's report, a job) because the
// caller's own connections were all in use: on an overloaded machine a
// peer can be slow without being gone. It returns the last call's error.
func UntilSent(ctx context.Context, call func() error, onBusy func()) error {
	pause := busyPauseMin
	for {
		err := call()
		if !errors.Is(err, ErrBusy) {
			return err
		}
		if onBusy != nil {
			onBusy()
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		pause = min(2*pause, busyPauseMax)
	}
}
