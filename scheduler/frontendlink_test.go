package scheduler

import (
	"testing"
	"time"
)

const linkAddr = "127.0.0.1:9000"

var linkT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// noJitter draws the shortest wait, so backoffs are d/2 exactly.
func noJitter(time.Duration) time.Duration { return 0 }

// TestLinkBackoff: the wait before a probe doubles per failed attempt from
// frontendBackoffMin to frontendBackoffMax, drawn from the upper half.
func TestLinkBackoff(t *testing.T) {
	tests := []struct {
		failures int
		lo, hi   time.Duration // jitter 0, jitter at its largest
	}{
		{1, 50 * time.Millisecond, 100 * time.Millisecond},
		{2, 100 * time.Millisecond, 200 * time.Millisecond},
		{3, 200 * time.Millisecond, 400 * time.Millisecond},
		{7, 3200 * time.Millisecond, 6400 * time.Millisecond},
		{8, 5 * time.Second, 10 * time.Second}, // 12.8 s, capped
		{50, 5 * time.Second, 10 * time.Second},
	}
	for _, tt := range tests {
		lo := newLinkBook(1, 0, noJitter)
		hi := newLinkBook(1, 0, func(d time.Duration) time.Duration { return d - 1 })
		if got := lo.backoff(tt.failures); got != tt.lo {
			t.Errorf("backoff(%d) with no jitter = %v, want %v", tt.failures, got, tt.lo)
		}
		if got := hi.backoff(tt.failures); got != tt.hi-1 {
			t.Errorf("backoff(%d) with most jitter = %v, want %v", tt.failures, got, tt.hi-1)
		}
	}
}

// linkEvent is one step of a link scenario at t0+at. "msg" asks begin and,
// if a slot was taken, ends the delivery at once with outcome; "hold"
// asks begin and keeps the slot; "release" ends the oldest held slot with
// outcome; "reset" is a frontend registering at the address.
type linkEvent struct {
	at      time.Duration
	op      string
	outcome linkOutcome
	want    linkVerdict // for msg and hold
}

func TestLinkStateMachine(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name      string
		max       int
		deadAfter time.Duration
		events    []linkEvent
		want      FrontendStats // counters after the events (Links and Down included)
	}{{
		name: "healthy frontend: every message is sent and no link is kept",
		max:  4, deadAfter: time.Minute,
		events: []linkEvent{{0, "msg", outcomeOK, linkSend}, {ms, "msg", outcomeOK, linkSend}, {2 * ms, "msg", outcomeOK, linkSend}},
		want:   FrontendStats{Delivered: 3},
	}, {
		name: "a failure takes the link down; messages within the backoff are dropped; the probe's success brings it up",
		max:  4, deadAfter: time.Minute,
		events: []linkEvent{
			{0, "msg", outcomeFailed, linkSend},
			{ms, "msg", 0, linkDown},
			{49 * ms, "msg", 0, linkDown},
			{50 * ms, "msg", outcomeOK, linkProbe},
			{51 * ms, "msg", outcomeOK, linkSend},
		},
		want: FrontendStats{Delivered: 2, Failed: 1, Links: 1}, // kept: its failure is not logged yet
	}, {
		name: "each failed probe doubles the backoff",
		max:  4, deadAfter: time.Minute,
		events: []linkEvent{
			{0, "msg", outcomeFailed, linkSend},
			{50 * ms, "msg", outcomeFailed, linkProbe}, // next probe 100 ms later
			{149 * ms, "msg", 0, linkDown},
			{150 * ms, "msg", outcomeFailed, linkProbe}, // next probe 200 ms later
			{349 * ms, "msg", 0, linkDown},
			{350 * ms, "msg", outcomeOK, linkProbe},
		},
		want: FrontendStats{Delivered: 1, Failed: 3, Links: 1},
	}, {
		name: "only one probe at a time",
		max:  4, deadAfter: time.Minute,
		events: []linkEvent{
			{0, "msg", outcomeFailed, linkSend},
			{60 * ms, "hold", 0, linkProbe},
			{61 * ms, "msg", 0, linkDown},
			{62 * ms, "release", outcomeOK, 0},
			{63 * ms, "msg", outcomeOK, linkSend},
		},
		want: FrontendStats{Delivered: 2, Failed: 1, Links: 1},
	}, {
		name: "messages in flight when the link went down do not lengthen the backoff",
		max:  4, deadAfter: time.Minute,
		events: []linkEvent{
			{0, "hold", 0, linkSend}, {0, "hold", 0, linkSend}, {0, "hold", 0, linkSend},
			{ms, "release", outcomeFailed, 0}, {ms, "release", outcomeFailed, 0}, {ms, "release", outcomeFailed, 0},
			{51 * ms, "msg", outcomeFailed, linkProbe},
		},
		want: FrontendStats{Failed: 4, Links: 1, Down: 1},
	}, {
		name: "the in-flight bound",
		max:  2, deadAfter: time.Minute,
		events: []linkEvent{
			{0, "hold", 0, linkSend}, {0, "hold", 0, linkSend},
			{0, "msg", 0, linkFull},
			{ms, "release", outcomeOK, 0},
			{ms, "msg", outcomeOK, linkSend},
			{ms, "release", outcomeOK, 0},
		},
		want: FrontendStats{Delivered: 3},
	}, {
		name: "a busy pool is not a down frontend",
		max:  2, deadAfter: time.Minute,
		events: []linkEvent{{0, "msg", outcomeBusy, linkSend}, {ms, "msg", outcomeOK, linkSend}},
		want:   FrontendStats{Delivered: 1, DroppedInflight: 1, Links: 1},
	}, {
		name: "a frontend that answers with an error is reachable",
		max:  2, deadAfter: time.Minute,
		events: []linkEvent{{0, "msg", outcomeAnswered, linkSend}, {ms, "msg", outcomeOK, linkSend}},
		want:   FrontendStats{Delivered: 1, Failed: 1, Links: 1},
	}, {
		name: "down for deadAfter: dead, however the probes went",
		max:  2, deadAfter: time.Second,
		events: []linkEvent{
			{0, "msg", outcomeFailed, linkSend},
			{999 * ms, "msg", outcomeFailed, linkProbe},
			{1000 * ms, "msg", 0, linkDead},
		},
		want: FrontendStats{Failed: 2, Links: 1, Down: 1},
	}, {
		name: "quiet since its last failure: the next message probes before the link is judged dead",
		max:  2, deadAfter: time.Second,
		events: []linkEvent{
			{0, "msg", outcomeFailed, linkSend},
			// No traffic for a minute: the frontend may be back.
			{time.Minute, "msg", outcomeOK, linkProbe},
			{time.Minute + ms, "msg", outcomeOK, linkSend},
		},
		want: FrontendStats{Delivered: 2, Failed: 1, Links: 1},
	}, {
		name: "quiet, then a failed probe: dead",
		max:  2, deadAfter: time.Second,
		events: []linkEvent{
			{0, "msg", outcomeFailed, linkSend},
			{time.Minute, "msg", outcomeFailed, linkProbe},
			{time.Minute + ms, "msg", 0, linkDead},
		},
		want: FrontendStats{Failed: 2, Links: 1, Down: 1},
	}, {
		name: "deadAfter <= 0 never deregisters",
		max:  2, deadAfter: -1,
		events: []linkEvent{
			{0, "msg", outcomeFailed, linkSend},
			{time.Hour, "msg", outcomeFailed, linkProbe},
			{time.Hour + ms, "msg", 0, linkDown},
		},
		want: FrontendStats{Failed: 2, Links: 1, Down: 1},
	}, {
		name: "a registration resets a down link",
		max:  2, deadAfter: time.Minute,
		events: []linkEvent{
			{0, "msg", outcomeFailed, linkSend},
			{ms, "reset", 0, 0},
			{2 * ms, "msg", outcomeOK, linkSend},
		},
		want: FrontendStats{Delivered: 1, Failed: 1, Links: 1},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newLinkBook(tt.max, tt.deadAfter, noJitter)
			type held struct {
				l     *frontendLink
				probe bool
			}
			var holds []held
			for i, ev := range tt.events {
				now := linkT0.Add(ev.at)
				switch ev.op {
				case "msg", "hold":
					v, l := b.begin(linkAddr, now)
					if v != ev.want {
						t.Fatalf("event %d (%s at %v): verdict %d, want %d", i, ev.op, ev.at, v, ev.want)
					}
					if v != linkSend && v != linkProbe {
						if v == linkDown {
							b.drop(linkAddr, dropUnreachable)
						}
						continue
					}
					if ev.op == "hold" {
						holds = append(holds, held{l, v == linkProbe})
					} else {
						b.end(linkAddr, l, now, v == linkProbe, ev.outcome)
					}
				case "release":
					h := holds[0]
					holds = holds[1:]
					b.end(linkAddr, h.l, now, h.probe, ev.outcome)
				case "reset":
					b.reset(linkAddr)
				}
			}
			got := b.snapshot(0)
			want := tt.want
			var downs uint64
			for _, ev := range tt.events {
				if ev.want == linkDown {
					downs++
				}
			}
			want.DroppedUnreachable = downs
			if got != want {
				t.Errorf("stats %+v, want %+v", got, want)
			}
		})
	}
}

// TestLinkReportsOncePerInterval: however many messages are dropped, a
// link yields one report per frontendLogInterval with the counts since
// the last, and is forgotten once up and reported.
func TestLinkReportsOncePerInterval(t *testing.T) {
	b := newLinkBook(4, time.Hour, noJitter)
	v, l := b.begin(linkAddr, linkT0)
	b.end(linkAddr, l, linkT0, v == linkProbe, outcomeFailed)
	for range 10_000 {
		if v, _ := b.begin(linkAddr, linkT0); v != linkDown {
			t.Fatalf("verdict %d during the backoff", v)
		}
		b.drop(linkAddr, dropUnreachable)
	}
	b.drop(linkAddr, dropInflight)
	tests := []struct {
		at          time.Duration
		wantReports int
		wantDropped uint64
	}{
		{time.Second, 1, 10_002},
		{2 * time.Second, 0, 0},
		{10 * time.Second, 0, 0},
		{11 * time.Second, 0, 0}, // nothing new dropped
	}
	for _, tt := range tests {
		rs := b.reports(linkT0.Add(tt.at))
		if len(rs) != tt.wantReports {
			t.Fatalf("at %v: %d reports, want %d", tt.at, len(rs), tt.wantReports)
		}
		if len(rs) == 1 {
			r := rs[0]
			if r.total() != tt.wantDropped || r.dropped[dropFailed] != 1 || r.dropped[dropUnreachable] != 10_000 ||
				r.dropped[dropInflight] != 1 || !r.down || !r.downSince.Equal(linkT0) {
				t.Fatalf("at %v: report %+v", tt.at, r)
			}
		}
	}
	// The probe succeeds: the link is kept until a report interval has
	// passed since the last line, then forgotten.
	now := linkT0.Add(12 * time.Second)
	v, l = b.begin(linkAddr, now)
	if v != linkProbe {
		t.Fatalf("verdict %d, want the probe", v)
	}
	b.end(linkAddr, l, now, true, outcomeOK)
	if n := len(b.links); n != 0 {
		t.Fatalf("%d links kept for an up frontend with nothing to report", n)
	}
}

// TestLinkForget: a deregistered link's unlogged drops go into the
// deregistration's line; a link with messages in flight is kept until the
// last ends, so their slots are given back to it.
func TestLinkForget(t *testing.T) {
	b := newLinkBook(4, time.Second, noJitter)
	_, l1 := b.begin(linkAddr, linkT0)
	v, l2 := b.begin(linkAddr, linkT0)
	b.end(linkAddr, l2, linkT0, v == linkProbe, outcomeFailed)
	if dead := b.dead(linkT0.Add(999 * time.Millisecond)); len(dead) != 0 {
		t.Fatalf("dead %v before deadAfter", dead)
	}
	at := linkT0.Add(time.Second)
	dead := b.dead(at)
	if len(dead) != 1 || dead[0] != linkAddr {
		t.Fatalf("dead %v, want [%s]", dead, linkAddr)
	}
	r := b.forget(linkAddr, at)
	if r.total() != 1 || !r.downSince.Equal(linkT0) {
		t.Fatalf("forget's report %+v", r)
	}
	if len(b.dead(at)) != 0 {
		t.Fatal("a forgotten link is still dead")
	}
	if len(b.links) != 1 {
		t.Fatal("a link with a message in flight was dropped")
	}
	b.end(linkAddr, l1, at, false, outcomeFailed)
	if st := b.snapshot(0); len(b.links) != 0 || st.Inflight != 0 {
		t.Fatalf("after the last message ended: %d links, stats %+v", len(b.links), st)
	}
}

// TestLinkNoFrontendReport: messages for apps without a frontend are
// summarised once per interval for the whole scheduler.
func TestLinkNoFrontendReport(t *testing.T) {
	b := newLinkBook(4, time.Second, noJitter)
	for range 1000 {
		b.noFrontend("gone")
	}
	b.noFrontend("other")
	if n, app := b.noFrontendReport(linkT0); n != 1001 || app != "other" {
		t.Fatalf("report %d %q, want 1001 \"other\"", n, app)
	}
	b.noFrontend("gone")
	if n, _ := b.noFrontendReport(linkT0.Add(time.Second)); n != 0 {
		t.Fatalf("second report within the interval: %d", n)
	}
	if n, _ := b.noFrontendReport(linkT0.Add(frontendLogInterval)); n != 1 {
		t.Fatalf("report after the interval: %d, want 1", n)
	}
	if st := b.snapshot(0); st.DroppedNoFrontend != 1002 {
		t.Fatalf("DroppedNoFrontend %d, want 1002", st.DroppedNoFrontend)
	}
}
