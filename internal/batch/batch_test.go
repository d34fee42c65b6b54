package batch

import (
	"slices"
	"sync"
	"testing"
)

func TestBatcherDeliversEveryItemOnceInOrderPerKey(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]int{}
	sends := map[string]int{}
	gate := make(chan struct{})
	holding := make(chan struct{})
	b := New(func(key string, items []int) {
		if key == "slow" && items[0] == 0 {
			close(holding)
			<-gate // hold the first batch so later items pile up
		}
		mu.Lock()
		defer mu.Unlock()
		got[key] = append(got[key], items...)
		sends[key]++
	})
	b.Add("slow", 0)
	<-holding
	for i := 1; i < 100; i++ {
		b.Add("slow", i)
		b.Add("fast", i)
	}
	close(gate)
	b.Wait()
	want := make([]int, 100)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(got["slow"], want) {
		t.Errorf("slow key got %v", got["slow"])
	}
	if !slices.Equal(got["fast"], want[1:]) {
		t.Errorf("fast key got %v", got["fast"])
	}
	// While the first send was held, the other 99 items for "slow" piled
	// up and must have gone out together in one second batch.
	mu.Lock()
	defer mu.Unlock()
	if sends["slow"] != 2 {
		t.Errorf("slow key sent in %d batches, want 2 (item 0, then the 99 that waited)", sends["slow"])
	}
}

func TestBatcherConcurrentAdds(t *testing.T) {
	var mu sync.Mutex
	count := map[int]int{}
	b := New(func(key int, items []int) {
		mu.Lock()
		defer mu.Unlock()
		for _, v := range items {
			count[v]++
		}
	})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				b.Add(i%3, w*1000+i)
			}
		}(w)
	}
	wg.Wait()
	b.Wait()
	if len(count) != 8000 {
		t.Fatalf("delivered %d distinct items, want 8000", len(count))
	}
	for v, c := range count {
		if c != 1 {
			t.Fatalf("item %d delivered %d times", v, c)
		}
	}
}

// SendAll sends on the caller's goroutine when no sender runs for the key,
// and returns once that batch is sent; items queued while it sends go in
// the next batch, on a sender of their own; with a sender running, it
// only queues. Every item is delivered once, in order.
func TestBatcherSendAll(t *testing.T) {
	var mu sync.Mutex
	var got [][]int
	sent := make(chan struct{})
	gate := make(chan struct{})
	b := New(func(_ string, items []int) {
		if items[0] == 0 {
			close(sent)
			<-gate
		}
		mu.Lock()
		defer mu.Unlock()
		got = append(got, slices.Clone(items))
	})
	returned := make(chan struct{})
	go func() {
		b.SendAll("k", 0, 1)
		close(returned)
	}()
	<-sent
	b.SendAll("k", 2) // a sender (the first caller) runs: queued only
	b.Add("k", 3)
	select {
	case <-returned:
		t.Fatal("SendAll returned before its batch was sent")
	default:
	}
	close(gate)
	<-returned
	b.Wait()
	mu.Lock()
	defer mu.Unlock()
	if want := [][]int{{0, 1}, {2, 3}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches %v, want %v", got, want)
	}
}
