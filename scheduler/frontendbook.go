package scheduler

import (
	"fmt"
	"time"
)

// frontendBook is the frontend links part: the frontend each app
// registered (one per app, the latest registration wins, at most
// maxApps apps, maxFrontends by default) and the link to each frontend
// address (linkBook, frontendlink.go).
//
// It has no lock of its own: it is not safe for concurrent use, and its
// owner serialises every call.
type frontendBook struct {
	apps    map[string]string // app -> FrontendService address
	maxApps int
	links   linkBook
}

func newFrontendBook(maxInflight int, deadAfter time.Duration, jitter func(time.Duration) time.Duration) frontendBook {
	if maxInflight <= 0 {
		maxInflight = DefaultFrontendMaxInflight
	}
	if deadAfter == 0 {
		deadAfter = DefaultFrontendDeadAfter
	}
	return frontendBook{apps: make(map[string]string), maxApps: maxFrontends, links: newLinkBook(maxInflight, deadAfter, jitter)}
}

// register sends app's messages to addr from now on. A registration may
// come from a restarted process at the same address, so addr's link
// starts afresh.
func (f *frontendBook) register(app, addr string) error {
	if _, ok := f.apps[app]; !ok && len(f.apps) >= f.maxApps {
		return fmt.Errorf("registerFrontend: too many apps (%d)", f.maxApps)
	}
	f.apps[app] = addr
	f.links.reset(addr)
	return nil
}

// lookup returns app's frontend address.
func (f *frontendBook) lookup(app string) (string, bool) {
	addr, ok := f.apps[app]
	return addr, ok
}

// deregister removes every app registered at addr and returns them.
func (f *frontendBook) deregister(addr string) []string {
	var apps []string
	for app, a := range f.apps {
		if a == addr {
			delete(f.apps, app)
			apps = append(apps, app)
		}
	}
	return apps
}

// snapshot returns the links' counts and gauges.
func (f *frontendBook) snapshot() FrontendStats { return f.links.snapshot(len(f.apps)) }
