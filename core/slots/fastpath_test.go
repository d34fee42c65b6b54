package slots

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sparrowfleet/sparrow/core/queue"
)

// plainFIFO hides queue.FIFO's optional UserCounter, so that a Core over it
// keeps its own per-request counts: the reference the fast path must match.
type plainFIFO struct{ q *queue.FIFO }

func (p plainFIFO) Push(r queue.Reservation)       { p.q.Push(r) }
func (p plainFIFO) Pop() (queue.Reservation, bool) { return p.q.Pop() }
func (p plainFIFO) RemoveRequest(id string) int    { return p.q.RemoveRequest(id) }
func (p plainFIFO) RemoveApp(app string) int       { return p.q.RemoveApp(app) }
func (p plainFIFO) Len() int                       { return p.q.Len() }

// TestFastPathsMatchReference drives two Cores through the same random
// operations: one over queue.FIFO (which counts queued users itself, so the
// Core keeps no per-request counts) and one over a FIFO that hides that
// ability. Every answer and every observable count must agree at every step.
// Slot counts above smallRunning exercise the indexed running set, and
// below it the scanned one.
func TestFastPathsMatchReference(t *testing.T) {
	for _, slots := range []int{1, 3, smallRunning, smallRunning + 1, 40} {
		t.Run(fmt.Sprint(slots), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(slots), 7))
			fast, err := New(slots, queue.NewFIFO())
			if err != nil {
				t.Fatal(err)
			}
			ref, err := New(slots, plainFIFO{queue.NewFIFO()})
			if err != nil {
				t.Fatal(err)
			}
			if !fast.countsUsers || ref.countsUsers {
				t.Fatal("test setup: expected the fast path on one Core only")
			}
			apps := []string{"a", "b"}
			users := []string{"", "u1", "u2"}
			for _, c := range []*Core{fast, ref} {
				for _, a := range apps {
					c.AddApp(a)
				}
			}
			var running []TaskKey // tasks started on both
			task := 0
			indexed := false
			for step := range 4000 {
				switch op := rng.IntN(10); {
				case op < 4:
					id := fmt.Sprintf("r%d", rng.IntN(30))
					r := queue.Reservation{RequestID: id, App: apps[rng.IntN(2)], User: users[rng.IntN(3)]}
					// Every reservation of a request has one user and app.
					h := int(id[1] - '0')
					r.App, r.User = apps[h%2], users[h%3]
					n := 1 + rng.IntN(3)
					e1, e2 := fast.Enqueue(r, n), ref.Enqueue(r, n)
					if (e1 == nil) != (e2 == nil) {
						t.Fatalf("step %d: Enqueue %v vs %v", step, e1, e2)
					}
				case op < 7:
					r1, ok1 := fast.Next()
					r2, ok2 := ref.Next()
					if r1 != r2 || ok1 != ok2 {
						t.Fatalf("step %d: Next (%v,%v) vs (%v,%v)", step, r1, ok1, r2, ok2)
					}
					if !ok1 {
						break
					}
					if rng.IntN(4) == 0 {
						fast.Released()
						ref.Released()
						break
					}
					key := TaskKey{RequestID: r1.RequestID, TaskID: fmt.Sprint(task)}
					if rng.IntN(10) == 0 && len(running) > 0 {
						key = running[rng.IntN(len(running))] // a duplicate launch
					} else {
						task++
					}
					s1, s2 := fast.Start(key, r1), ref.Start(key, r2)
					if s1 != s2 {
						t.Fatalf("step %d: Start %v vs %v", step, s1, s2)
					}
					if s1 {
						running = append(running, key)
					}
				case op < 9:
					if len(running) == 0 {
						break
					}
					i := rng.IntN(len(running))
					key := running[i]
					f1, f2 := fast.Finished(key), ref.Finished(key)
					if !f1 || !f2 {
						t.Fatalf("step %d: Finished %v, %v for a running task", step, f1, f2)
					}
					running = slices.Delete(running, i, i+1)
					if fast.Finished(key) || ref.Finished(key) {
						t.Fatalf("step %d: a task finished twice", step)
					}
				default:
					if rng.IntN(20) == 0 {
						app := apps[rng.IntN(2)]
						g1, g2 := fast.FailApp(app), ref.FailApp(app)
						if len(g1) != len(g2) {
							t.Fatalf("step %d: FailApp %d vs %d tasks", step, len(g1), len(g2))
						}
						failed := map[TaskKey]bool{}
						for _, rt := range g1 {
							failed[rt.Key] = true
						}
						running = slices.DeleteFunc(running, func(k TaskKey) bool { return failed[k] })
						break
					}
					id := fmt.Sprintf("r%d", rng.IntN(30))
					if c1, c2 := fast.Cancel(id), ref.Cancel(id); c1 != c2 {
						t.Fatalf("step %d: Cancel %d vs %d", step, c1, c2)
					}
				}
				indexed = indexed || fast.runIdx != nil
				if u1, u2 := fast.Usage(), ref.Usage(); !maps.Equal(u1, u2) {
					t.Fatalf("step %d: Usage %v vs %v", step, u1, u2)
				}
				if fast.Free() != ref.Free() || fast.Running() != ref.Running() || fast.Queued() != ref.Queued() || fast.Running() != len(running) {
					t.Fatalf("step %d: free %d/%d running %d/%d (want %d) queued %d/%d", step,
						fast.Free(), ref.Free(), fast.Running(), ref.Running(), len(running), fast.Queued(), ref.Queued())
				}
			}
			if slots > smallRunning && !indexed {
				t.Fatalf("%d slots never ran more than %d tasks: the indexed path was not tested", slots, smallRunning)
			}
		})
	}
}
