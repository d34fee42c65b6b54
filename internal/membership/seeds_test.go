package membership

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
)

func TestBackoffSchedule(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name     string
		min, max time.Duration
		want     []time.Duration
	}{
		{"doubles to a one-second cap", 100 * ms, time.Second, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second, time.Second}},
		{"cap below a doubling", 100 * ms, 300 * ms, []time.Duration{100 * ms, 200 * ms, 300 * ms, 300 * ms}},
		{"min equals max", time.Second, time.Second, []time.Duration{time.Second, time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBackoff(tc.min, tc.max)
			var got []time.Duration
			for range tc.want {
				got = append(got, b.Next())
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("schedule %v, want %v", got, tc.want)
			}
			b.Reset()
			if d := b.Next(); d != tc.min {
				t.Fatalf("after Reset the next wait is %v, want %v", d, tc.min)
			}
		})
	}
}

// fakeFleet stands in for memberlist and DNS around a seedJoiner: a seed
// name resolves to whatever addrs holds, a join succeeds once some address
// it is given is up, and the view is self plus the addresses joined.
type fakeFleet struct {
	mu     sync.Mutex
	start  time.Time
	addrs  map[string][]string // host name -> addresses
	up     map[string]bool     // "ip:port" answering joins
	view   map[string]bool
	tries  []time.Duration // when each join was made, since start
	joined [][]string      // the addresses each join was given
	syncs  []time.Duration // when each state sync was made, since start
	synced [][]string      // the addresses each state sync was given
}

func newFakeFleet(self string) *fakeFleet {
	return &fakeFleet{start: time.Now(), addrs: map[string][]string{}, up: map[string]bool{}, view: map[string]bool{self: true}}
}

func (f *fakeFleet) resolve(_ context.Context, host string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a, ok := f.addrs[host]; ok && len(a) > 0 {
		return slices.Clone(a), nil
	}
	return nil, errors.New("no such host")
}

func (f *fakeFleet) join(addrs []string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tries = append(f.tries, time.Since(f.start))
	f.joined = append(f.joined, slices.Clone(addrs))
	n := 0
	for _, a := range addrs {
		if f.up[a] {
			f.view[a] = true
			n++
		}
	}
	if n == 0 {
		return 0, errors.New("connection refused")
	}
	return n, nil
}

// exchange is a state sync: it answers as join does, recorded apart.
func (f *fakeFleet) exchange(addrs []string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncs = append(f.syncs, time.Since(f.start))
	f.synced = append(f.synced, slices.Clone(addrs))
	n := 0
	for _, a := range addrs {
		if f.up[a] {
			n++
		}
	}
	if n == 0 {
		return 0, errors.New("connection refused")
	}
	return n, nil
}

func (f *fakeFleet) syncSnapshot() ([]time.Duration, [][]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.syncs), slices.Clone(f.synced)
}

func (f *fakeFleet) live() map[string]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	live := make(map[string]bool, len(f.view))
	for a := range f.view {
		live[a] = true
	}
	return live
}

func (f *fakeFleet) set(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

func (f *fakeFleet) snapshot() ([]time.Duration, [][]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.tries), slices.Clone(f.joined)
}

func (f *fakeFleet) joiner(self string, seeds ...string) *seedJoiner {
	return &seedJoiner{seeds: seeds, self: self, resolve: f.resolve, join: f.join, exchange: f.exchange, live: f.live,
		every: 10 * time.Second, wait: newBackoff(joinBackoffMin, joinBackoffCap), log: zerolog.Nop()}
}

// runJoiner starts j as Start does: a first try, then the loop until the
// test's bubble ends.
func runJoiner(t *testing.T, j *seedJoiner) {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	joined := j.try()
	go j.run(joined, stop)
}

func durations(ms ...int) []time.Duration {
	out := make([]time.Duration, len(ms))
	for i, m := range ms {
		out[i] = time.Duration(m) * time.Millisecond
	}
	return out
}

// A member started before its seed tries at 0, 0.1, 0.3, 0.7, 1.5, 2.5 s
// and then every second until the seed answers, then only every rejoin
// interval, and only for seeds missing from its view.
func TestJoinBacksOffUntilJoinedThenRejoinsPeriodically(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const self, seed = "10.0.0.9:7946", "10.0.0.1:7946"
		f := newFakeFleet(self)
		j := f.joiner(self, seed, "10.0.0.2:7946")
		runJoiner(t, j)
		time.Sleep(3200 * time.Millisecond)
		f.set(func() { f.up[seed] = true }) // the seed starts at 3.2 s
		time.Sleep(31 * time.Second)
		synctest.Wait()
		tries, joined := f.snapshot()
		want := durations(0, 100, 300, 700, 1500, 2500, 3500, 13500, 23500, 33500)
		if !slices.Equal(tries, want) {
			t.Fatalf("joins at %v, want %v", tries, want)
		}
		// Once the seed is in the view, only the missing one is joined.
		for i, got := range joined {
			want := []string{seed, "10.0.0.2:7946"}
			if tries[i] > 3500*time.Millisecond {
				want = []string{"10.0.0.2:7946"}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("join %d at %v was given %v, want %v", i, tries[i], got, want)
			}
		}
	})
}

// A seed name is resolved on every try, into all its addresses, without
// the member's own: pods behind a headless Service appear one by one.
func TestSeedNamesAreResolvedOnEveryTry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const self, name = "10.0.0.9:7946", "gossip.fleet.svc"
		f := newFakeFleet(self)
		j := f.joiner(self, name+":7946", "10.0.0.3:7946")
		f.set(func() { f.addrs[name] = []string{"10.0.0.9"} }) // only itself is ready
		runJoiner(t, j)
		time.Sleep(150 * time.Millisecond)
		f.set(func() { f.addrs[name] = []string{"10.0.0.9", "10.0.0.1", "10.0.0.2"} })
		time.Sleep(200 * time.Millisecond)
		f.set(func() { f.up["10.0.0.2:7946"] = true })
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		tries, joined := f.snapshot()
		want := [][]string{
			{"10.0.0.3:7946"},
			{"10.0.0.3:7946"},
			{"10.0.0.1:7946", "10.0.0.2:7946", "10.0.0.3:7946"},
			{"10.0.0.1:7946", "10.0.0.2:7946", "10.0.0.3:7946"},
		}
		if !slices.EqualFunc(joined, want, slices.Equal) {
			t.Fatalf("joins at %v were given %v, want %v", tries, joined, want)
		}
	})
}

// A member whose peers have all gone goes back to the short backoff, so
// that it rejoins within a second of a seed coming back.
func TestAloneAgainBacksOffAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const self, seed = "10.0.0.9:7946", "10.0.0.1:7946"
		f := newFakeFleet(self)
		f.set(func() { f.up[seed] = true })
		j := f.joiner(self, seed)
		runJoiner(t, j)
		time.Sleep(5 * time.Second)
		f.set(func() { delete(f.view, seed); f.up[seed] = false }) // the seed dies at 5 s
		time.Sleep(6 * time.Second)                                // the 10 s rejoin finds it gone
		synctest.Wait()
		tries, _ := f.snapshot()
		want := durations(0, 10000, 10100, 10300, 10700)
		if !slices.Equal(tries, want) {
			t.Fatalf("joins at %v, want %v", tries, want)
		}
	})
}

// A try to an address with no host behind it blocks for seconds; the
// schedule goes on meanwhile, up to maxJoinsInFlight tries at once, so a
// seed that comes up is joined within the backoff.
func TestBlockedTriesDoNotHoldTheSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const self, seed = "10.0.0.9:7946", "10.0.0.1:7946"
		f := newFakeFleet(self)
		j := f.joiner(self, seed)
		hostUp := false
		join := j.join
		j.join = func(addrs []string) (int, error) {
			f.mu.Lock()
			up := hostUp
			f.mu.Unlock()
			if !up {
				defer time.Sleep(3 * time.Second) // no host: the connection times out
			}
			return join(addrs)
		}
		stop := make(chan struct{})
		defer close(stop)
		go j.run(false, stop)
		time.Sleep(2 * time.Second)
		f.set(func() { hostUp = true; f.up[seed] = true }) // the seed comes up at 2 s
		time.Sleep(11 * time.Second)
		synctest.Wait()
		tries, _ := f.snapshot()
		// The tries at 0.1 to 1.5 s block for 3 s each; the one at 2.5 s
		// joins regardless, and with the seed in view the periodic rejoin
		// has nothing to join.
		want := durations(100, 300, 700, 1500, 2500)
		if !slices.Equal(tries, want) {
			t.Fatalf("joins at %v, want %v", tries, want)
		}
	})
}

func TestBadSeedIsSkipped(t *testing.T) {
	f := newFakeFleet("10.0.0.9:7946")
	j := f.joiner("10.0.0.9:7946", "no-port", "10.0.0.1:7946", "10.0.0.1:7946", "unknown.invalid:7946")
	if got, want := j.addrs(), []string{"10.0.0.1:7946"}; !slices.Equal(got, want) {
		t.Fatalf("addrs() = %v, want %v", got, want)
	}
}

// A member that only an observer has joined is still alone: it keeps
// retrying its seeds on the short backoff.
func TestLiveAddrsLeaveObserversOut(t *testing.T) {
	self := Member{Name: "b", Gossip: "10.0.0.2:7946", Meta: Meta{Role: RoleNodeMonitor}}
	observer := Member{Name: "status-1", Gossip: "10.0.0.50:40000", Meta: Meta{Role: RoleObserver}}
	peer := Member{Name: "a", Gossip: "10.0.0.1:7946", Meta: Meta{Role: RoleScheduler}}
	for _, tc := range []struct {
		name    string
		self    Member
		members []Member
		want    []string
	}{
		{"alone", self, []Member{self}, []string{self.Gossip}},
		{"joined only by an observer", self, []Member{self, observer}, []string{self.Gossip}},
		{"joined to a peer", self, []Member{self, observer, peer}, []string{peer.Gossip, self.Gossip}},
		{"an observer itself", observer, []Member{observer, peer}, []string{peer.Gossip, observer.Gossip}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cluster{name: tc.self.Name, members: map[string]Member{}}
			for _, m := range tc.members {
				c.members[m.Name] = m
			}
			var got []string
			for a := range c.liveAddrs() {
				got = append(got, a)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("liveAddrs() = %v, want %v", got, tc.want)
			}
		})
	}
}

// A state sync goes to the first seed address that answers, one address at
// a time, even when that seed is already in the view (the periodic rejoin
// skips it); it fails, naming the cause, when no seed answers.
func TestSyncOneExchangesStateWithTheFirstSeedThatAnswers(t *testing.T) {
	const self = "10.0.0.9:7946"
	cases := []struct {
		name     string
		up       []string
		inView   []string
		wantAddr string
		wantJoin [][]string
		wantErr  string
	}{
		{name: "first answers", up: []string{"10.0.0.1:7946", "10.0.0.2:7946"},
			wantAddr: "10.0.0.1:7946", wantJoin: [][]string{{"10.0.0.1:7946"}}},
		{name: "first down", up: []string{"10.0.0.2:7946"},
			wantAddr: "10.0.0.2:7946", wantJoin: [][]string{{"10.0.0.1:7946"}, {"10.0.0.2:7946"}}},
		{name: "seed already in view", up: []string{"10.0.0.1:7946"}, inView: []string{"10.0.0.1:7946"},
			wantAddr: "10.0.0.1:7946", wantJoin: [][]string{{"10.0.0.1:7946"}}},
		{name: "none answers", wantErr: "no seed answered a state sync",
			wantJoin: [][]string{{"10.0.0.1:7946"}, {"10.0.0.2:7946"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeFleet(self)
			f.set(func() {
				f.addrs["seeds"] = []string{"10.0.0.1", "10.0.0.2"}
				for _, a := range tc.up {
					f.up[a] = true
				}
				for _, a := range tc.inView {
					f.view[a] = true
				}
			})
			addr, err := f.joiner(self, "seeds:7946").syncOne()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
			} else if err != nil || addr != tc.wantAddr {
				t.Fatalf("synced with %q (err %v), want %q", addr, err, tc.wantAddr)
			}
			if _, synced := f.syncSnapshot(); !slices.EqualFunc(synced, tc.wantJoin, slices.Equal) {
				t.Fatalf("syncs %v, want %v", synced, tc.wantJoin)
			}
		})
	}
}

func TestSyncWithoutSeedsIsAnError(t *testing.T) {
	if _, err := (&seedJoiner{log: zerolog.Nop()}).syncOne(); err == nil {
		t.Fatal("a joiner without seeds synced")
	}
}

// A member syncs state with a seed one and two seconds after it goes from
// alone to joined, whether its first try found the seed or a later one
// did, and again after it was alone and found a peer again; never while
// alone.
func TestJoinedMemberSettlesWithTwoSyncs(t *testing.T) {
	cases := []struct {
		name      string
		seedUpAt  time.Duration // when the seed starts answering
		seedDieAt time.Duration // when it leaves the view and stops (0: never)
		backAt    time.Duration // when it answers again (0: never)
		run       time.Duration
		want      []time.Duration
	}{
		{name: "seed up at start", run: 5 * time.Second, want: durations(1000, 2000)},
		{name: "seed up at 0.25 s", seedUpAt: 250 * time.Millisecond, run: 5 * time.Second,
			want: durations(1300, 2300)}, // found by the try at 0.3 s
		{name: "seed gone and back", seedDieAt: 5 * time.Second, backAt: 10500 * time.Millisecond, run: 15 * time.Second,
			want: durations(1000, 2000, 11700, 12700)}, // alone at the 10 s rejoin; the try at 10.7 s finds it
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const self, seed = "10.0.0.9:7946", "10.0.0.1:7946"
				f := newFakeFleet(self)
				f.set(func() { f.up[seed] = tc.seedUpAt == 0 })
				j := f.joiner(self, seed)
				runJoiner(t, j)
				at := func(d time.Duration, fn func()) {
					go func() { time.Sleep(d); f.set(fn) }()
				}
				if tc.seedUpAt > 0 {
					at(tc.seedUpAt, func() { f.up[seed] = true })
				}
				if tc.seedDieAt > 0 {
					at(tc.seedDieAt, func() { delete(f.view, seed); f.up[seed] = false })
				}
				if tc.backAt > 0 {
					at(tc.backAt, func() { f.up[seed] = true })
				}
				time.Sleep(tc.run)
				synctest.Wait()
				syncs, synced := f.syncSnapshot()
				if !slices.Equal(syncs, tc.want) {
					t.Fatalf("syncs at %v, want %v", syncs, tc.want)
				}
				for i, got := range synced {
					if !slices.Equal(got, []string{seed}) {
						t.Fatalf("sync %d was given %v, want the seed alone", i, got)
					}
				}
			})
		})
	}
}
