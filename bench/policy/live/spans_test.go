package live

import (
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/policy"
	"github.com/sparrowfleet/sparrow/client"
)

func TestSpanBook(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	task := func(req, id, user string) client.LaunchedTask {
		lt := client.LaunchedTask{}
		lt.Ref.RequestID, lt.Ref.TaskID, lt.User.Name = req, id, user
		return lt
	}
	b := SpanBook{T0: t0}
	a, c, d := task("r1", "0", "spark"), task("r1", "1", "hadoop"), task("r2", "0", "spark")
	b.Launched(3, a)
	b.Started(a, at(10))
	b.Started(c, at(20)) // its launch was not recorded: node -1
	b.Ended(a, at(110))
	b.Launched(1, d)
	b.Started(d, at(50))
	if got := b.RunningByUser(); got["hadoop"] != 1 || got["spark"] != 1 {
		t.Fatalf("running by user %v, want one each", got)
	}
	spans := b.Stop(at(200))
	b.Ended(c, at(300)) // after Stop: ignored
	want := map[policy.Span]bool{
		{User: "spark", Node: 3, Start: 10 * time.Millisecond, End: 110 * time.Millisecond}:   true,
		{User: "hadoop", Node: -1, Start: 20 * time.Millisecond, End: 200 * time.Millisecond}: true,
		{User: "spark", Node: 1, Start: 50 * time.Millisecond, End: 200 * time.Millisecond}:   true,
	}
	if len(spans) != len(want) {
		t.Fatalf("spans %+v, want %d", spans, len(want))
	}
	for _, s := range spans {
		if !want[s] {
			t.Errorf("unexpected span %+v", s)
		}
	}
	// The end reported after Stop was not recorded: hadoop's task still
	// counts as running, cut at the next Stop.
	for _, s := range b.Stop(at(400)) {
		if s.User == "hadoop" && s.End != 400*time.Millisecond {
			t.Errorf("an end after Stop was recorded: %+v", s)
		}
	}
}
