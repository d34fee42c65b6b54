package scheduler

import (
	"fmt"
	"time"
)

// frontendBook is the frontend links part: the frontend each app
// registered (one per app, the latest registration wins, at most
// maxApps apps, maxFrontends by default), the jobs that named their own
// frontend (jobBook, frontendjobs.go), and the link to each frontend
// address (linkBook, frontendlink.go). A job's own frontend comes before
// its app's.
//
// It has no lock of its own: it is not safe for concurrent use, and its
// owner serialises every call.
type frontendBook struct {
	apps    map[string]string // app -> FrontendService address
	maxApps int
	jobs    jobBook
	links   linkBook
}

func newFrontendBook(maxInflight int, deadAfter time.Duration, jitter func(time.Duration) time.Duration) frontendBook {
	if maxInflight <= 0 {
		maxInflight = DefaultFrontendMaxInflight
	}
	if deadAfter == 0 {
		deadAfter = DefaultFrontendDeadAfter
	}
	return frontendBook{apps: make(map[string]string), maxApps: maxFrontends, jobs: newJobBook(), links: newLinkBook(maxInflight, deadAfter, jitter)}
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

// addJob sends the messages of job (app, request), of tasks tasks, to
// addr from now on, batched if batched. A job comes from a frontend live at addr a moment
// ago, so a link to addr that is down starts afresh, as a registration
// makes it; revived says so, for the caller to drop the connections
// kept to the old one.
func (f *frontendBook) addJob(app, request, addr string, tasks int, batched bool) (revived bool, err error) {
	if err := f.jobs.add(app, request, addr, tasks, batched); err != nil {
		return false, err
	}
	if f.links.isDown(addr) {
		f.links.reset(addr)
		return true, nil
	}
	return false, nil
}

// lookup returns the frontend address of job (app, request): the one the
// job named, else its app's registered one; batched says the job's
// messages go there batched, which only a job naming its address can ask.
func (f *frontendBook) lookup(app, request string) (addr string, batched, ok bool) {
	if addr, batched, ok := f.jobs.lookup(app, request); ok {
		return addr, batched, true
	}
	addr, ok = f.apps[app]
	return addr, false, ok
}

// deregister removes every app registered at addr, and every job naming
// it, and returns those apps and how many jobs.
func (f *frontendBook) deregister(addr string) (apps []string, jobs int) {
	for app, a := range f.apps {
		if a == addr {
			delete(f.apps, app)
			apps = append(apps, app)
		}
	}
	return apps, f.jobs.forgetAddr(addr)
}

// snapshot returns the links' counts and gauges.
func (f *frontendBook) snapshot() FrontendStats {
	st := f.links.snapshot(len(f.apps))
	st.Jobs = f.jobs.len()
	return st
}
