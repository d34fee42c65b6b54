package membership

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/rs/zerolog"
)

// Resolver returns the addresses of a host name, as net.Resolver's
// LookupHost does. A name may have several: a Kubernetes headless Service
// resolves to every ready pod behind it.
type Resolver func(ctx context.Context, host string) ([]string, error)

// joinBackoffMin is the first wait between joins while a member has joined
// nobody; each failed try doubles it up to joinBackoffMax.
const joinBackoffMin = 100 * time.Millisecond

// joinBackoffCap bounds the wait between joins while a member is alone in its
// view. It is below the rejoin interval so that a member started before its
// seed joins it within about a second of the seed starting, whatever the
// profile; a try costs one name lookup and one connection attempt.
const joinBackoffCap = time.Second

// backoff is the wait between joins while a member is alone: min, doubled
// after each try, at most max. Not safe for concurrent use; owned by one
// seedJoiner.
type backoff struct {
	min, max, next time.Duration
}

func newBackoff(min, max time.Duration) backoff {
	return backoff{min: min, max: max, next: min}
}

// Next returns the wait before the next try and doubles the one after it.
func (b *backoff) Next() time.Duration {
	d := b.next
	b.next = min(2*b.next, b.max)
	return d
}

// Reset starts the schedule again from min.
func (b *backoff) Reset() { b.next = b.min }

// seedJoiner joins the configured seeds for as long as a member runs.
//
// While the member's view holds nobody but itself (its first join found no
// seed, or every peer has gone) it tries again after a backoff from
// joinBackoffMin doubling to its cap; once the view holds a peer, it joins
// the seeds missing from the view every rejoin interval. The periodic join
// covers seeds started later and heals partitions: once both sides of a
// partition have declared each other dead they stop gossiping to each
// other, and without a new join the cluster never heals.
//
// Seeds are "host:port"; a host name is resolved on every try, into every
// address it has, so that a name whose addresses change (pods restarted
// behind a headless Service) keeps working.
//
// The joiner's fields are set before run and then read only by run's
// goroutine; join, alone and live must be safe to call from it.
type seedJoiner struct {
	seeds   []string
	self    string
	resolve Resolver
	// join contacts addrs and reports how many answered.
	join func(addrs []string) (int, error)
	// exchange is join for a state sync with one seed (syncOne); a
	// separate field so that tests tell syncs from tries.
	exchange func(addrs []string) (int, error)
	// live returns the gossip addresses in the member's view, itself
	// included.
	live  func() map[string]bool
	every time.Duration
	wait  backoff
	log   zerolog.Logger
}

// resolveTimeout bounds one seed's name lookup.
const resolveTimeout = 2 * time.Second

// addrs resolves the seeds into distinct "ip:port" addresses other than the
// member's own. A seed whose name does not resolve is skipped and logged at
// debug level: before the first pod is ready a headless Service has no
// address at all, and that is expected.
func (j *seedJoiner) addrs() []string {
	var out []string
	for _, s := range j.seeds {
		host, port, err := net.SplitHostPort(s)
		if err != nil {
			j.log.Warn().Err(err).Str("seed", s).Msg("seed is not host:port; skipped")
			continue
		}
		hosts := []string{host}
		if net.ParseIP(host) == nil {
			ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
			hosts, err = j.resolve(ctx, host)
			cancel()
			if err != nil {
				j.log.Debug().Err(err).Str("seed", s).Msg("seed name does not resolve yet")
				continue
			}
		}
		for _, h := range hosts {
			a := net.JoinHostPort(h, port)
			if a != j.self && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// try joins the seed addresses missing from the view and reports whether
// the view holds a peer afterwards.
func (j *seedJoiner) try() bool {
	live := j.live()
	var missing []string
	for _, a := range j.addrs() {
		if !live[a] {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		if n, err := j.join(missing); err == nil {
			j.log.Info().Int("contacted", n).Strs("seeds", missing).Msg("joined seeds missing from the view")
		} else {
			j.log.Debug().Err(err).Strs("seeds", missing).Msg("no seed answered yet")
		}
		live = j.live()
	}
	return len(live) > 1 || len(live) == 1 && !live[j.self]
}

// maxJoinsInFlight bounds the tries run at once. A try to an address with
// no host behind it (a seed whose pod or container is not up yet) blocks
// until the connection times out, seconds later; meanwhile the schedule
// goes on with new tries, so a seed that comes up is joined within the
// backoff, not after the stale try gives up. At the backoff's one-second
// cap, ten cover memberlist's LAN connection timeout of ten seconds.
const maxJoinsInFlight = 10

// settleSyncs state syncs, settleEvery apart, follow every time a member
// goes from alone to having a peer. Members started together join their
// seed at the same moment and each gets the part of the view the seed had
// then; the rest reaches them as gossip, which memberlist retransmits a
// bounded number of times, so a member can miss a peer until the next
// push-pull, 30 s later on the lan profile. A sync with a seed a second
// later, when the seed has heard from everyone started with it, closes
// that gap.
const (
	settleSyncs = 2
	settleEvery = time.Second
)

// run makes a try whenever the schedule says, until stop closes. joined
// says whether the first try, made before run, found a peer. Tries run on
// their own goroutines and report whether the view holds a peer after
// them; the schedule follows the latest report. After each change from
// alone to joined it makes the settle syncs. Tries and syncs still running
// when stop closes finish on their own (their join fails once memberlist
// shuts down).
func (j *seedJoiner) run(joined bool, stop <-chan struct{}) {
	results := make(chan bool, maxJoinsInFlight)
	inFlight := 0
	next := func() time.Duration {
		if joined {
			j.wait.Reset()
			return j.every
		}
		return j.wait.Next()
	}
	var settle <-chan time.Time
	settleLeft := 0
	startSettling := func() {
		settleLeft = settleSyncs
		settle = time.After(settleEvery)
	}
	if joined {
		startSettling()
	}
	t := time.NewTimer(next())
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case ok := <-results:
			inFlight--
			if ok != joined {
				joined = ok
				t.Reset(next())
				if joined {
					startSettling()
				}
			}
		case <-settle:
			settle = nil
			if !joined || settleLeft == 0 {
				continue
			}
			settleLeft--
			if settleLeft > 0 {
				settle = time.After(settleEvery)
			}
			go func() {
				if addr, err := j.syncOne(); err != nil {
					j.log.Debug().Err(err).Msg("settle sync failed")
				} else {
					j.log.Debug().Str("seed", addr).Msg("settle sync")
				}
			}()
		case <-t.C:
			if inFlight < maxJoinsInFlight {
				inFlight++
				go func() { results <- j.try() }()
			}
			t.Reset(next())
		}
	}
}

// syncOne exchanges full state with the first seed address that answers,
// in the order addrs gives, whether or not the seed is in the view
// already, and reports which one did.
func (j *seedJoiner) syncOne() (string, error) {
	addrs := j.addrs()
	if len(addrs) == 0 {
		return "", fmt.Errorf("no seed address to sync with (seeds %v)", j.seeds)
	}
	var errs []error
	for _, a := range addrs {
		if n, err := j.exchange([]string{a}); err == nil && n > 0 {
			return a, nil
		} else if err != nil {
			errs = append(errs, err)
		}
	}
	return "", fmt.Errorf("no seed answered a state sync: %w", errors.Join(errs...))
}
