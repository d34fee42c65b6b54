package shortjobs

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sparrowfleet/sparrow/core/queue"
)

func TestLongLevel(t *testing.T) {
	for _, tc := range []struct {
		count int
		want  uint8
	}{{-1, 0}, {0, 0}, {1, 1}, {2, 2}, {3, 2}, {4, 3}, {7, 3}, {8, 4}, {1 << 20, 21}} {
		if got := LongLevel(tc.count); got != tc.want {
			t.Errorf("LongLevel(%d) = %d, want %d", tc.count, got, tc.want)
		}
	}
	for _, tc := range []struct {
		advert []byte
		want   uint8
	}{{nil, 0}, {[]byte{0}, 0}, {[]byte{5}, 3}, {[]byte{1, 4}, 4}, {[]byte{0, 2}, 2}} {
		if got := AdvertLevel(tc.advert); got != tc.want {
			t.Errorf("AdvertLevel(%v) = %d, want %d", tc.advert, got, tc.want)
		}
	}
}

func TestSteerLong(t *testing.T) {
	so := []bool{true, false, false, false, false, false}
	lv := []uint8{0, 2, 0, 1, 0, 3}
	tests := []struct {
		name      string
		want      int
		so        []bool
		level     []uint8
		wantNodes []int32
		wantSteer bool
	}{
		{"enough idle general nodes", 2, so, lv, []int32{2, 4}, true},
		{"whole lowest levels", 3, so, lv, []int32{2, 3, 4}, true},
		{"up to level 2", 4, so, lv, []int32{1, 2, 3, 4}, true},
		{"every general node", 5, so, lv, []int32{1, 2, 3, 4, 5}, false},
		{"more wanted than general nodes", 9, so, lv, []int32{1, 2, 3, 4, 5}, false},
		{"never short-only", 1, so, []uint8{0, 1, 1, 1, 1, 1}, []int32{1, 2, 3, 4, 5}, false},
		{"every node short-only", 1, []bool{true, true}, []uint8{0, 0}, []int32{0, 1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, steered := SteerLong([]int32{99}, tc.want, tc.so, tc.level)
			if got[0] != 99 || !slices.Equal(got[1:], tc.wantNodes) || steered != tc.wantSteer {
				t.Fatalf("got %v %v, want [99] + %v %v", got, steered, tc.wantNodes, tc.wantSteer)
			}
		})
	}
}

// TestSteerLongAgainstSort checks SteerLong against an independent
// statement of its rule over random fleets: sort the general nodes by
// level; the candidates are those whose level is at most the level of the
// want-th of them.
func TestSteerLongAgainstSort(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 3))
		n := 1 + rng.IntN(40)
		so, lv := make([]bool, n), make([]uint8, n)
		var general []int
		for i := range n {
			so[i] = rng.IntN(4) == 0
			lv[i] = uint8(rng.IntN(5))
			if !so[i] {
				general = append(general, i)
			}
		}
		want := 1 + rng.IntN(n+2)
		got, _ := SteerLong(nil, want, so, lv)
		var expect []int32
		switch {
		case len(general) == 0:
			for i := range n {
				expect = append(expect, int32(i))
			}
		default:
			levels := make([]int, 0, len(general))
			for _, i := range general {
				levels = append(levels, int(lv[i]))
			}
			slices.Sort(levels)
			top := levels[min(want, len(levels))-1]
			for _, i := range general {
				if int(lv[i]) <= top {
					expect = append(expect, int32(i))
				}
			}
		}
		if !slices.Equal(got, expect) {
			t.Fatalf("seed %d: SteerLong(want %d, so %v, levels %v) = %v, want %v", seed, want, so, lv, got, expect)
		}
	}
}

func TestWorkStepAndRefreshTargets(t *testing.T) {
	for _, tc := range []struct{ remaining, want int }{{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 3}, {5, 4}, {8, 4}, {9, 5}} {
		if got := WorkStep(tc.remaining); got != tc.want {
			t.Errorf("WorkStep(%d) = %d, want %d", tc.remaining, got, tc.want)
		}
	}
	holders := []string{"a", "b", "c"}
	for _, tc := range []struct {
		before, after int
		want          []string
	}{
		{8, 7, nil},                // both in (4, 8]
		{5, 4, []string{"a", "c"}}, // into (2, 4]
		{2, 1, []string{"a", "c"}},
		{1, 0, nil}, // nothing left: the job's reservations are cancelled instead
	} {
		got := RefreshTargets(nil, holders, "b", tc.before, tc.after)
		if !slices.Equal(got, tc.want) {
			t.Errorf("RefreshTargets(%d -> %d) = %v, want %v", tc.before, tc.after, got, tc.want)
		}
	}
	// A job of m tasks handed out one by one refreshes about log2(m) times.
	for _, m := range []int{1, 10, 594, 5000} {
		n := 0
		for left := m - 1; left >= 0; left-- {
			if len(RefreshTargets(nil, holders, "x", left+1, left)) > 0 {
				n++
			}
		}
		if lim := WorkStep(m); n > lim {
			t.Errorf("m=%d: %d refreshes, want at most %d", m, n, lim)
		}
	}
}

func TestMonitorAdvert2(t *testing.T) {
	res := func(id string) queue.Reservation { return queue.Reservation{RequestID: id, App: "a", User: "u"} }
	for _, steer := range []bool{false, true} {
		t.Run(fmt.Sprintf("LongSteer=%v", steer), func(t *testing.T) {
			m := NewMonitor(Config{Cutoff: 1, StarveLimit: 4, LongSteer: steer}, 1)
			level := func(l uint8) uint8 {
				if steer {
					return l
				}
				return 0
			}
			check := func(step string, busy byte, lvl uint8, changed bool) {
				t.Helper()
				a := m.Advert2()
				if a[0] != busy || a[1] != level(lvl) {
					t.Fatalf("%s: advert %v, want [%d %d]", step, a, busy, level(lvl))
				}
				if got := m.AdvertChanged(); got != changed {
					t.Fatalf("%s: AdvertChanged %v, want %v", step, got, changed)
				}
			}
			check("idle", 0, 0, false)
			for range 3 {
				m.Queue().Push(res("L"))
			}
			m.QueuedClass("L", Long, 30)
			check("three long queued", 0, 2, steer)
			m.Queue().Push(res("S"))
			m.QueuedClass("S", Short, 1)
			check("a short one queued", 0, 2, false)
			if r, _ := m.Queue().Pop(); r.RequestID != "S" {
				t.Fatalf("popped %q, want the short one", r.RequestID)
			}
			m.Fetching(Short)
			m.NoTask(Short)
			r, _ := m.Queue().Pop()
			m.Fetching(Long)
			check("one long fetching, two queued", 1, 2, true)
			m.Launched("L", 2, 10)
			m.Queue().RemoveRequest("L")
			check("one long running", 1, 1, steer)
			m.Ended(Long, 2, r)
			if m.Queue().LongQueued() != 1 {
				t.Fatalf("sticky long reservation not counted: %d", m.Queue().LongQueued())
			}
			check("sticky long queued", 0, 1, true)
		})
	}
}

func TestMonitorShortStickyOnly(t *testing.T) {
	m := NewMonitor(Config{Cutoff: 1, StarveLimit: 4, ShortStickyOnly: true}, 1)
	r := queue.Reservation{RequestID: "L", App: "a"}
	m.Fetching(Long)
	m.Ended(Long, 3, r)
	if m.Queue().Len() != 0 {
		t.Fatal("a long task's end queued a sticky reservation")
	}
	m.Ended(Short, 3, queue.Reservation{RequestID: "S", App: "a"})
	if m.Queue().Len() != 1 {
		t.Fatal("a short task's end queued no sticky reservation")
	}
}

func TestSRPTClassFirst(t *testing.T) {
	q := NewSRPT(100)
	q.SetClassFirst(true)
	for _, id := range []string{"long-small", "short-big"} {
		q.Push(queue.Reservation{RequestID: id})
	}
	q.SetLong("long-small")
	q.SetWork("long-small", 1)
	q.SetWork("short-big", 1000)
	if r, _ := q.Pop(); r.RequestID != "short-big" {
		t.Fatalf("class first served %q first", r.RequestID)
	}
}
