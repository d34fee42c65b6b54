package queue

import (
	"fmt"
	"slices"
	"testing"
)

// TestTagAndInlineOverflow checks, for every discipline, that Pop returns
// each reservation's Tag unchanged, and that removing requests and apps
// works the same whether their index entries sit inline in the index or,
// past inlineKeys requests or one app, in its maps.
func TestTagAndInlineOverflow(t *testing.T) {
	cases := []struct {
		name     string
		requests int // distinct requests, reservations round-robin over them
		apps     int
		perReq   int
		cancel   []int // requests removed before draining
		drop     []int // apps removed before draining
	}{
		{name: "one request", requests: 1, apps: 1, perReq: 3},
		{name: "inline full", requests: inlineKeys, apps: 1, perReq: 2, cancel: []int{0}},
		{name: "overflow to map", requests: inlineKeys + 3, apps: 1, perReq: 2, cancel: []int{1, inlineKeys + 1}},
		{name: "cancel all inline then refill", requests: inlineKeys + 2, apps: 1, perReq: 1, cancel: []int{0, 1, 2, 3}},
		{name: "several apps", requests: inlineKeys + 1, apps: 3, perReq: 3, drop: []int{1}},
		{name: "drop inline app", requests: 3, apps: 2, perReq: 2, drop: []int{0}, cancel: []int{2}},
	}
	for _, kind := range Kinds() {
		for _, tc := range cases {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				d, err := New(kind, 1, nil)
				if err != nil {
					t.Fatal(err)
				}
				live := map[uint64]Reservation{}
				tag := uint64(1)
				for k := 0; k < tc.perReq; k++ {
					for q := 0; q < tc.requests; q++ {
						r := Reservation{
							RequestID: fmt.Sprintf("req-%d", q),
							App:       fmt.Sprintf("app-%d", q%tc.apps),
							User:      fmt.Sprintf("u%d", q%2),
							Tag:       tag<<20 | uint64(q),
						}
						d.Push(r)
						live[r.Tag] = r
						tag++
					}
				}
				checkBounds(t, d)
				for _, q := range tc.cancel {
					id := fmt.Sprintf("req-%d", q)
					want := 0
					for k, r := range live {
						if r.RequestID == id {
							delete(live, k)
							want++
						}
					}
					if got := d.RemoveRequest(id); got != want {
						t.Fatalf("RemoveRequest(%s) = %d, want %d", id, got, want)
					}
					checkBounds(t, d)
				}
				for _, a := range tc.drop {
					app := fmt.Sprintf("app-%d", a)
					want := 0
					for k, r := range live {
						if r.App == app {
							delete(live, k)
							want++
						}
					}
					if got := d.RemoveApp(app); got != want {
						t.Fatalf("RemoveApp(%s) = %d, want %d", app, got, want)
					}
					checkBounds(t, d)
				}
				// Refill one new request after the removals, so that a freed
				// inline entry is reused.
				extra := Reservation{RequestID: "late", App: "app-0", User: "u0", Tag: 1 << 62}
				d.Push(extra)
				live[extra.Tag] = extra
				if d.Len() != len(live) {
					t.Fatalf("Len = %d, want %d", d.Len(), len(live))
				}
				var popped []uint64
				for {
					r, ok := d.Pop()
					if !ok {
						break
					}
					want, ok := live[r.Tag]
					if !ok {
						t.Fatalf("popped tag %#x, not live (or popped twice)", r.Tag)
					}
					if r != want {
						t.Fatalf("popped %+v, pushed %+v", r, want)
					}
					delete(live, r.Tag)
					popped = append(popped, r.Tag)
				}
				if len(live) != 0 {
					t.Fatalf("%d reservations never popped", len(live))
				}
				if kind == kindFIFO && !slices.IsSorted(popped) {
					t.Fatalf("FIFO served out of push order: %x", popped)
				}
				checkBounds(t, d)
			})
		}
	}
}
