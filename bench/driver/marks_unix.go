//go:build unix

package driver

import (
	"os"
	"os/signal"
	"syscall"
)

// MarkSignals delivers a mark request on every SIGUSR1, for Config.Marks;
// stop undoes it.
func MarkSignals() (marks <-chan struct{}, stop func()) {
	sig := make(chan os.Signal, 4)
	out := make(chan struct{}, 4)
	done := make(chan struct{})
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-sig:
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out, func() {
		signal.Stop(sig)
		close(done)
	}
}
