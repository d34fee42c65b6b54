package batch

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// sent records a Windowed's sends with the fake clock's time.
type sent struct {
	mu      sync.Mutex
	batches []string // "key@ms:items"
}

func (s *sent) send(start time.Time) func(string, []int) {
	return func(key string, items []int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.batches = append(s.batches, fmt.Sprintf("%s@%d:%v", key, time.Since(start).Milliseconds(), items))
	}
}

func (s *sent) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.batches)
}

func TestWindowed(t *testing.T) {
	type add struct {
		at   time.Duration
		key  string
		item int
	}
	for _, tt := range []struct {
		name string
		max  int
		adds []add
		want []string
	}{
		{name: "one item waits for its window",
			adds: []add{{0, "a", 1}}, want: []string{"a@5:[1]"}},
		{name: "items within the window go together",
			adds: []add{{0, "a", 1}, {2 * time.Millisecond, "a", 2}, {4 * time.Millisecond, "a", 3}},
			want: []string{"a@5:[1 2 3]"}},
		{name: "an item after the window opens the next",
			adds: []add{{0, "a", 1}, {6 * time.Millisecond, "a", 2}},
			want: []string{"a@5:[1]", "a@10:[2]"}},
		{name: "an item after an idle window opens a fresh one",
			adds: []add{{0, "a", 1}, {20 * time.Millisecond, "a", 2}},
			want: []string{"a@5:[1]", "a@25:[2]"}},
		{name: "keys have their own windows",
			adds: []add{{0, "a", 1}, {3 * time.Millisecond, "b", 2}, {4 * time.Millisecond, "a", 3}},
			want: []string{"a@5:[1 3]", "b@8:[2]"}},
		{name: "a full batch goes at once", max: 2,
			adds: []add{{0, "a", 1}, {time.Millisecond, "a", 2}, {2 * time.Millisecond, "a", 3}},
			want: []string{"a@1:[1 2]", "a@6:[3]"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var s sent
				w := NewWindowed(5*time.Millisecond, tt.max, s.send(start))
				for _, a := range tt.adds {
					time.Sleep(a.at - time.Since(start))
					w.Add(a.key, a.item)
				}
				time.Sleep(time.Second)
				synctest.Wait()
				got := s.list()
				slices.Sort(got)
				want := slices.Sorted(slices.Values(tt.want))
				if !slices.Equal(got, want) {
					t.Errorf("sent %v, want %v", got, want)
				}
				w.Close()
			})
		})
	}
}

// Close sends what is queued without waiting for the windows, and items
// added after it go at once; every item is sent exactly once.
func TestWindowedCloseFlushes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var s sent
		w := NewWindowed(time.Hour, 0, s.send(start))
		w.Add("a", 1)
		w.Add("b", 2)
		w.Add("a", 3)
		w.Close()
		w.Add("a", 4)
		synctest.Wait()
		got := s.list()
		slices.Sort(got)
		if want := []string{"a@0:[1 3]", "a@0:[4]", "b@0:[2]"}; !slices.Equal(got, want) {
			t.Errorf("sent %v, want %v", got, want)
		}
		w.Close()
	})
}

// Many goroutines adding: every item is sent once, in order per key, and
// no batch is over max.
func TestWindowedConcurrentAdds(t *testing.T) {
	var mu sync.Mutex
	got := map[int][]int{}
	w := NewWindowed(time.Millisecond, 7, func(key int, items []int) {
		if len(items) > 7 {
			t.Errorf("batch of %d, max 7", len(items))
		}
		mu.Lock()
		defer mu.Unlock()
		got[key] = append(got[key], items...)
	})
	var wg sync.WaitGroup
	for key := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				w.Add(key, i)
			}
		}()
	}
	wg.Wait()
	w.Close()
	for key := range 4 {
		want := make([]int, 500)
		for i := range want {
			want[i] = i
		}
		if !slices.Equal(got[key], want) {
			t.Errorf("key %d: got %d items, want 0..499 in order", key, len(got[key]))
		}
	}
}

// With no window, the first item goes at once and the items added while
// its send runs go together in the next send.
func TestWindowedWithoutWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var s sent
		record := s.send(start)
		w := NewWindowed(0, 0, func(key string, items []int) {
			time.Sleep(time.Millisecond) // the call's round trip
			record(key, items)
		})
		w.Add("a", 1)
		synctest.Wait()
		w.Add("a", 2)
		w.Add("a", 3)
		time.Sleep(time.Second)
		synctest.Wait()
		if got, want := s.list(), []string{"a@1:[1]", "a@2:[2 3]"}; !slices.Equal(got, want) {
			t.Errorf("sent %v, want %v", got, want)
		}
		w.Close()
	})
}
