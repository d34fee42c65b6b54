package scheduler

import (
	"fmt"
	"time"
)

// Jobs that name their frontend.
//
// A job may name the FrontendService address its messages go to
// (TSchedulingRequest.frontendAddress). Its messages then go there,
// whether or not its app registered with this scheduler, and before the
// app's registration: a frontend behind a load balancer submits through
// connections that each may reach a different scheduler, so the
// scheduler that runs a job may never have seen the app register. Such a
// job's messages go through the same per-address link (frontendlink.go)
// as a registered frontend's, with the same bounds, backoff and
// deregistration of a dead address.
//
// A job is kept from its submission until every task has ended here
// (reported finished, lost, or failed) and jobFrontendLinger more has
// passed, for the messages that follow a task's finish report; or until
// its address is deregistered as dead; or, for a job refused whole, at
// once. Its later messages go by its app's registration, as every
// message of a job that names no frontend does. A task launched past
// the running book's bound (maxTracked) never ends here, so its job is
// kept until its address is deregistered; the bound on jobs kept
// (maxJobFrontends) covers that too: past it a job naming its frontend is
// refused.

// jobFrontendLinger is how long a job's address is kept after its last
// task ended here.
const jobFrontendLinger = time.Minute

// maxJobFrontends bounds the jobs kept with their frontend's address.
const maxJobFrontends = 1 << 20

// jobKey names a job as its messages do: app and request id.
type jobKey struct{ app, request string }

// jobFrontend is one job's frontend address, whether that frontend
// serves frontendMessages (frontendbatch.go), and how many of its tasks
// have not ended here.
type jobFrontend struct {
	addr    string
	batched bool
	open    int
	endedAt time.Time // when open reached zero
}

// jobEnd is a job whose tasks had all ended at `at`, waiting out the
// linger.
type jobEnd struct {
	key jobKey
	at  time.Time
	job *jobFrontend
}

// jobBook holds the jobs that named their frontend. It has no lock of its
// own: it is not safe for concurrent use, and its owner serialises every
// call.
type jobBook struct {
	jobs  map[jobKey]*jobFrontend
	ended []jobEnd // oldest first
	max   int
}

func newJobBook() jobBook {
	return jobBook{jobs: make(map[jobKey]*jobFrontend), max: maxJobFrontends}
}

// room reports whether another job can be added.
func (b *jobBook) room() error {
	if len(b.jobs) >= b.max {
		return fmt.Errorf("%d jobs naming their frontend are in flight, the most this scheduler keeps", b.max)
	}
	return nil
}

// add keeps job (app, request) of tasks tasks, whose messages go to addr,
// batched if batched. A job already kept under that name (an earlier
// submission under the same request id) is replaced.
func (b *jobBook) add(app, request, addr string, tasks int, batched bool) error {
	k := jobKey{app, request}
	if _, ok := b.jobs[k]; !ok {
		if err := b.room(); err != nil {
			return err
		}
	}
	b.jobs[k] = &jobFrontend{addr: addr, batched: batched, open: tasks}
	return nil
}

// lookup returns the address job (app, request) named, and whether its
// messages go there batched.
func (b *jobBook) lookup(app, request string) (addr string, batched, ok bool) {
	j, ok := b.jobs[jobKey{app, request}]
	if !ok {
		return "", false, false
	}
	return j.addr, j.batched, true
}

// taskEnded counts one task of job (app, request) ended at now.
func (b *jobBook) taskEnded(app, request string, now time.Time) {
	k := jobKey{app, request}
	j, ok := b.jobs[k]
	if !ok || j.open == 0 {
		return
	}
	j.open--
	if j.open == 0 {
		j.endedAt = now
		b.ended = append(b.ended, jobEnd{key: k, at: now, job: j})
	}
}

// withdraw forgets job (app, request), refused whole.
func (b *jobBook) withdraw(app, request string) { delete(b.jobs, jobKey{app, request}) }

// forgetAddr forgets every job naming addr and returns how many there
// were.
func (b *jobBook) forgetAddr(addr string) int {
	n := 0
	for k, j := range b.jobs {
		if j.addr == addr {
			delete(b.jobs, k)
			n++
		}
	}
	return n
}

// expire forgets the jobs whose tasks all ended at least
// jobFrontendLinger before now.
func (b *jobBook) expire(now time.Time) {
	i := 0
	for ; i < len(b.ended) && now.Sub(b.ended[i].at) >= jobFrontendLinger; i++ {
		e := b.ended[i]
		// Only the entry that ended: the job may have been replaced or
		// forgotten since.
		if b.jobs[e.key] == e.job {
			delete(b.jobs, e.key)
		}
	}
	b.ended = b.ended[i:]
}

// len returns the number of jobs kept.
func (b *jobBook) len() int { return len(b.jobs) }
