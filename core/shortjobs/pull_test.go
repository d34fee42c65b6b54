package shortjobs

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestPullRequestIDRoundTrips(t *testing.T) {
	for _, sched := range []string{"", "s1:20503", "a\x00b"} {
		id := PullRequestID(sched)
		got, ok := PullScheduler(id)
		if !ok || got != sched {
			t.Fatalf("PullScheduler(PullRequestID(%q)) = %q, %v", sched, got, ok)
		}
	}
	for _, id := range []string{"", "job-1", "pull", "\x00pul"} {
		if _, ok := PullScheduler(id); ok {
			t.Fatalf("PullScheduler(%q) took an ordinary request id for a pull", id)
		}
	}
}

// TestBacklogLeastMatchesAScan drives a Backlog with random updates and
// checks Least against a scan of the jobs' current work after each.
func TestBacklogLeastMatchesAScan(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		b := NewBacklog()
		model := map[string]float64{}
		order := map[string]int{} // when each job's current work was set
		step := 0
		for range 400 {
			id := fmt.Sprint("j", rng.IntN(20))
			switch rng.IntN(4) {
			case 0:
				b.Remove(id)
				delete(model, id)
			default:
				w := float64(rng.IntN(6)) // 0 removes; repeats keep the earlier order
				b.Set(id, w)
				if w <= 0 {
					delete(model, id)
				} else if model[id] != w {
					model[id] = w
					order[id] = step
				}
			}
			step++
			wantID, wantW, wantOK := "", 0.0, false
			for j, w := range model {
				if !wantOK || w < wantW || (w == wantW && order[j] < order[wantID]) {
					wantID, wantW, wantOK = j, w, true
				}
			}
			gotID, gotW, gotOK := b.Least()
			if gotID != wantID || gotW != wantW || gotOK != wantOK {
				t.Fatalf("seed %d step %d: Least = (%q, %v, %v), want (%q, %v, %v)", seed, step, gotID, gotW, gotOK, wantID, wantW, wantOK)
			}
			if b.Len() != len(model) {
				t.Fatalf("seed %d step %d: Len = %d, want %d", seed, step, b.Len(), len(model))
			}
			if len(b.h) > 64+4*len(model)+1 {
				t.Fatalf("seed %d step %d: heap holds %d entries for %d jobs", seed, step, len(b.h), len(model))
			}
		}
	}
}

// TestBacklogAscendMatchesASort drives a Backlog with random updates and
// checks after each that Ascend yields every job once, in the order of a
// sort of the jobs' current work (earliest set first among equals), and
// that it stops when told.
func TestBacklogAscendMatchesASort(t *testing.T) {
	type job struct {
		id    string
		work  float64
		order int
	}
	for seed := uint64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		b := NewBacklog()
		model := map[string]job{}
		for step := range 300 {
			id := fmt.Sprint("j", rng.IntN(30))
			if rng.IntN(4) == 0 {
				b.Remove(id)
				delete(model, id)
			} else {
				w := float64(rng.IntN(8))
				b.Set(id, w)
				switch {
				case w <= 0:
					delete(model, id)
				case model[id].work != w:
					model[id] = job{id, w, step}
				}
			}
			var want []job
			for _, j := range model {
				want = append(want, j)
			}
			slices.SortFunc(want, func(a, b job) int {
				if a.work != b.work {
					if a.work < b.work {
						return -1
					}
					return 1
				}
				return a.order - b.order
			})
			var got []job
			for id, w := range b.Ascend() {
				got = append(got, job{id, w, model[id].order})
			}
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d step %d: Ascend = %v, want %v", seed, step, got, want)
			}
			stop := rng.IntN(len(want) + 1)
			n := 0
			for range b.Ascend() {
				n++
				if n == stop {
					break
				}
			}
			if stop > 0 && n != stop {
				t.Fatalf("seed %d step %d: Ascend went on to %d after being stopped at %d", seed, step, n, stop)
			}
		}
	}
}

func TestPuller(t *testing.T) {
	const s = "sched"
	type step struct {
		op   string // heard+, heard-, fetch, got, empty, gone, due
		at   time.Duration
		want PullAction
		due  []string // for "due"
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"an advert queues one pull", []step{
			{op: "heard+", want: PullQueue},
			{op: "heard+", want: PullNone},
		}},
		{"a pull that got a task is queued again", []step{
			{op: "heard+", want: PullQueue},
			{op: "fetch"},
			{op: "got", want: PullQueue},
		}},
		{"a pull is not queued while one fetches", []step{
			{op: "heard+", want: PullQueue},
			{op: "fetch"},
			{op: "heard+", want: PullNone},
			{op: "got", want: PullQueue},
		}},
		{"the backlog's end cancels a queued pull", []step{
			{op: "heard+", want: PullQueue},
			{op: "heard-", want: PullCancel},
			{op: "heard-", want: PullNone},
		}},
		{"a fetching pull is not queued again after the backlog ends", []step{
			{op: "heard+", want: PullQueue},
			{op: "fetch"},
			{op: "heard-", want: PullNone},
			{op: "got", want: PullNone},
		}},
		{"an empty answer waits for the retry delay", []step{
			{op: "heard+", want: PullQueue},
			{op: "fetch"},
			{op: "empty", at: 10, want: PullNone},
			{op: "due", at: 14},
			{op: "due", at: 15, due: []string{s}},
			{op: "due", at: 16},
		}},
		{"an empty answer then a new advert queues at once", []step{
			{op: "heard+", want: PullQueue},
			{op: "fetch"},
			{op: "empty", at: 10, want: PullNone},
			{op: "heard+", at: 11, want: PullQueue},
			{op: "due", at: 20},
		}},
		{"no retry once the backlog ended", []step{
			{op: "heard+", want: PullQueue},
			{op: "fetch"},
			{op: "empty", at: 10, want: PullNone},
			{op: "heard-", at: 11, want: PullNone},
			{op: "due", at: 20},
		}},
		{"a scheduler gone cancels its queued pull", []step{
			{op: "heard+", want: PullQueue},
			{op: "gone", want: PullCancel},
			{op: "gone", want: PullNone},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewPuller("app", 5)
			for i, st := range c.steps {
				var got PullAction
				switch st.op {
				case "heard+":
					got = p.Heard(s, 8)
				case "heard-":
					got = p.Heard(s, 0)
				case "fetch":
					p.Fetching(s)
				case "got":
					got = p.Answered(s, true, st.at)
				case "empty":
					got = p.Answered(s, false, st.at)
				case "gone":
					got = p.Gone(s)
				case "due":
					if d := p.Due(nil, st.at); !slices.Equal(d, st.due) {
						t.Fatalf("step %d: Due(%v) = %v, want %v", i, st.at, d, st.due)
					}
					continue
				}
				if got != st.want {
					t.Fatalf("step %d (%s): action %d, want %d", i, st.op, got, st.want)
				}
				if p.Queued(s) && st.op == "fetch" {
					t.Fatalf("step %d: queued while fetching", i)
				}
			}
			if len(c.steps) > 0 {
				if r := p.Reservation(s); r.RequestID != PullRequestID(s) || r.App != "app" || r.Scheduler != s {
					t.Fatalf("Reservation = %+v", r)
				}
			}
		})
	}
}

func TestPullerNextRetry(t *testing.T) {
	p := NewPuller("app", 5)
	if _, ok := p.NextRetry(); ok {
		t.Fatal("NextRetry on an empty Puller")
	}
	for i, s := range []string{"b", "a"} {
		p.Heard(s, 8)
		p.Fetching(s)
		p.Answered(s, false, time.Duration(10+i))
	}
	if at, ok := p.NextRetry(); !ok || at != 15 {
		t.Fatalf("NextRetry = %v, %v; want 15, true", at, ok)
	}
	if d := p.Due(nil, 16); !slices.Equal(d, []string{"a", "b"}) {
		t.Fatalf("Due = %v, want [a b]", d)
	}
	if _, ok := p.NextRetry(); ok {
		t.Fatal("NextRetry after every retry was due")
	}
}

func TestAdvertWork(t *testing.T) {
	for _, c := range []struct {
		least float64
		ok    bool
		want  float64
	}{
		{0, false, 0}, {5, false, 0}, {0, true, 0}, {-3, true, 0},
		{0.25, true, 1}, {1, true, 1}, {1.5, true, 2}, {2, true, 2}, {1000, true, 1024}, {1024, true, 1024},
	} {
		if got := AdvertWork(c.least, c.ok); got != c.want {
			t.Errorf("AdvertWork(%v, %v) = %v, want %v", c.least, c.ok, got, c.want)
		}
	}
}

func TestPullerStickyAndWork(t *testing.T) {
	p := NewPuller("app", 5)
	if got := p.Sticky(Long, 3, 100); got != 3 {
		t.Fatalf("no backlog: Sticky = %d, want 3", got)
	}
	p.Heard("a", 64)
	if p.Work("a") != 64 || p.Work("b") != 0 {
		t.Fatalf("Work = %v, %v", p.Work("a"), p.Work("b"))
	}
	for _, c := range []struct {
		class     Class
		remaining int
		work      float64
		want      int
	}{
		{Long, 3, 100, 0},  // a short backlog with less work left comes first
		{Long, 3, 64, 3},   // not less: the long job keeps its slot
		{Long, 1, 10, 1},   // a long job about to finish keeps its slot
		{Short, 3, 500, 3}, // short jobs always stay sticky
	} {
		if got := p.Sticky(c.class, c.remaining, c.work); got != c.want {
			t.Errorf("Sticky(%v, %d, %v) = %d, want %d", c.class, c.remaining, c.work, got, c.want)
		}
	}
}
