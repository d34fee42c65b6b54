// Package parallel runs independent jobs, such as simulation runs, on a
// fixed number of goroutines.
package parallel

import "sync"

// Each calls run for every item on at most workers goroutines, starting
// the items in the order given, and after each one calls done(item, n)
// with n the number finished so far. Calls of done are serialised, so it
// may write progress without a lock of its own. Each returns once every
// item has finished. workers below 1 count as 1.
func Each[T any](workers int, items []T, run func(T), done func(item T, finished int)) {
	work := make(chan T)
	var (
		mu       sync.Mutex
		finished int
		wg       sync.WaitGroup
	)
	for range min(max(workers, 1), len(items)) {
		wg.Go(func() {
			for it := range work {
				run(it)
				mu.Lock()
				finished++
				if done != nil {
					done(it, finished)
				}
				mu.Unlock()
			}
		})
	}
	for _, it := range items {
		work <- it
	}
	close(work)
	wg.Wait()
}
