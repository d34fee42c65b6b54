package scheduler

import (
	"testing"
	"time"
)

// TestOfferBookOffersTo: a node monitor is offered tasks unless it lacks
// the method or is in a pause; an ended pause is forgotten, and the
// clock is read only for a paused node monitor.
func TestOfferBookOffersTo(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name      string
		lacks     bool
		pause     time.Duration // relative to t0; 0: none
		want      bool
		readClock bool
		kept      bool // the pause is still recorded
	}{
		{name: "plain", want: true},
		{name: "lacks the method", lacks: true, want: false},
		{name: "in its pause", pause: time.Second, want: false, readClock: true, kept: true},
		{name: "pause ended", pause: -time.Nanosecond, want: true, readClock: true},
		{name: "lacks the method and paused", lacks: true, pause: time.Second, want: false, kept: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b offerBook
			if tt.lacks {
				b.caps.MarkLacking("n", methodOffer)
			}
			if tt.pause != 0 {
				b.pause("n", t0.Add(tt.pause))
			}
			read := false
			clock := func() time.Time { read = true; return t0 }
			if got := b.offersTo("n", clock); got != tt.want {
				t.Fatalf("offersTo = %v, want %v", got, tt.want)
			}
			if read != tt.readClock {
				t.Fatalf("clock read %v, want %v", read, tt.readClock)
			}
			if _, kept := b.guidedUntil["n"]; kept != tt.kept {
				t.Fatalf("pause kept %v, want %v", kept, tt.kept)
			}
			if !b.offersTo("other", clock) {
				t.Fatal("another node monitor is not offered tasks")
			}
		})
	}
}

// TestOfferBookDoubts: offers in doubt are recorded per node monitor,
// settled one by one, and handed back all at once when the node is lost.
func TestOfferBookDoubts(t *testing.T) {
	r1, r2 := &request{}, &request{}
	tests := []struct {
		name     string
		doubts   []offerDoubt // all on node "a"
		settle   []offerDoubt
		lostN    int // handed back when "a" is lost
		inDoubtN uint64
	}{
		{name: "none", lostN: 0},
		{name: "two requests, none settled", doubts: []offerDoubt{{r1, 0}, {r2, 1}}, lostN: 2, inDoubtN: 2},
		{name: "one settled", doubts: []offerDoubt{{r1, 0}, {r1, 1}}, settle: []offerDoubt{{r1, 0}}, lostN: 1, inDoubtN: 2},
		{name: "all settled", doubts: []offerDoubt{{r1, 0}}, settle: []offerDoubt{{r1, 0}}, lostN: 0, inDoubtN: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b offerBook
			for _, d := range tt.doubts {
				b.doubt("a", d)
			}
			b.doubt("b", offerDoubt{r1, 9})
			for _, d := range tt.settle {
				if !b.inDoubtOn("a", d) {
					t.Fatalf("%v not in doubt before settling", d)
				}
				b.settle("a", d)
				if b.inDoubtOn("a", d) {
					t.Fatalf("%v still in doubt after settling", d)
				}
			}
			if got := b.nodeLost("a"); len(got) != tt.lostN {
				t.Fatalf("lost node hands back %d doubts, want %d", len(got), tt.lostN)
			}
			if b.nodeLost("a") != nil {
				t.Fatal("doubts handed back twice")
			}
			if !b.inDoubtOn("b", offerDoubt{r1, 9}) {
				t.Fatal("another node's doubt was dropped")
			}
			var st Stats
			b.statsInto(&st)
			if st.OffersInDoubt != tt.inDoubtN+1 {
				t.Fatalf("OffersInDoubt %d, want %d", st.OffersInDoubt, tt.inDoubtN+1)
			}
		})
	}
}

// TestOfferBookBoot: a start nonce is recorded only when given.
func TestOfferBookBoot(t *testing.T) {
	var b offerBook
	for _, step := range []struct{ set, want string }{{"", ""}, {"x", "x"}, {"", "x"}, {"y", "y"}} {
		b.setBoot("n", step.set)
		if got := b.bootOf("n"); got != step.want {
			t.Fatalf("after setBoot(%q): %q, want %q", step.set, got, step.want)
		}
	}
}

// TestOfferBookFreeSlots: a node monitor's free slots are what its last
// answer said, less the tasks offered since, plus this scheduler's tasks
// that ended there since; unknown until it has answered.
func TestOfferBookFreeSlots(t *testing.T) {
	type step struct {
		op        string // "said", "offered", "finished"
		n         int
		wantBatch int // batch("n", 8) after the step
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"unknown: one at a time, whatever ends", []step{{"finished", 5, 1}, {"offered", 1, 1}}},
		{"said, then offered", []step{{"said", 6, 6}, {"offered", 4, 2}, {"offered", 4, 1}}},
		{"ends free slots again", []step{{"said", 0, 1}, {"finished", 3, 3}, {"offered", 2, 1}, {"finished", 1, 2}}},
		{"capped by the batch", []step{{"said", 2, 2}, {"finished", 20, 8}}},
		{"a new answer replaces the count", []step{{"said", 1, 1}, {"finished", 6, 7}, {"said", 2, 2}}},
		{"not said keeps the count", []step{{"said", 3, 3}, {"said", -1, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b offerBook
			for i, st := range tt.steps {
				switch st.op {
				case "said":
					b.setFree("n", st.n)
				case "offered":
					b.offered("n", st.n)
				case "finished":
					b.finished("n", st.n)
				}
				if got := b.batch("n", 8); got != st.wantBatch {
					t.Fatalf("step %d (%s %d): batch %d, want %d", i, st.op, st.n, got, st.wantBatch)
				}
			}
		})
	}
}
