package placement

import (
	"slices"
	"testing"
)

// TestOffers drives a request through offers and getTasks and checks each
// answer and the request's state.
func TestOffers(t *testing.T) {
	nodes := []Node{{Addr: "a"}, {Addr: "b"}, {Addr: "c"}, {Addr: "d"}}
	probes := func() []Probe {
		return []Probe{{Node: nodes[0], Count: 1}, {Node: nodes[1], Count: 1}, {Node: nodes[2], Count: 1}, {Node: nodes[3], Count: 1}}
	}
	three := []Task{{ID: "t0"}, {ID: "t1"}, {ID: "t2"}}

	t.Run("taken offers launch and use a reservation", func(t *testing.T) {
		r := NewRequest("r", three)
		r.AddProbes(probes())
		for i, addr := range []string{"a", "b", "c"} {
			task, ok := r.Offer(addr)
			if !ok || task != i {
				t.Fatalf("Offer(%s) = %d, %v; want %d", addr, task, ok, i)
			}
		}
		if _, ok := r.Offer("d"); ok {
			t.Fatal("a fourth offer for three tasks")
		}
		if r.Offered() != 3 || r.Spare() || r.Unlaunched() != 3 {
			t.Fatalf("offered %d spare %v unlaunched %d", r.Offered(), r.Spare(), r.Unlaunched())
		}
		// While offered, no other node gets them, but its reservation
		// is spent as by any getTask.
		if _, ok := r.Assign("d"); ok {
			t.Fatal("an offered task was assigned elsewhere")
		}
		r.OfferTaken("a", 0)
		r.OfferTaken("b", 1)
		r.OfferTaken("c", 2)
		if !r.Launched() || r.Offered() != 0 || len(r.Outstanding()) != 0 {
			t.Fatalf("launched %v offered %d outstanding %v", r.Launched(), r.Offered(), r.Outstanding())
		}
	})

	t.Run("declined offers go out first, in submission order", func(t *testing.T) {
		r := NewRequest("r", three)
		r.AddProbes(probes())
		r.Offer("a") // t0
		r.Offer("b") // t1
		r.OfferDeclined(1)
		r.OfferDeclined(0)
		if !r.Spare() || r.Offered() != 0 {
			t.Fatalf("spare %v offered %d", r.Spare(), r.Offered())
		}
		var got []int
		for _, addr := range []string{"c", "d", "a"} {
			task, ok := r.Assign(addr)
			if !ok {
				t.Fatalf("Assign(%s) got nothing", addr)
			}
			got = append(got, task)
		}
		if !slices.Equal(got, []int{0, 1, 2}) || !r.Launched() {
			t.Fatalf("assigned %v, want [0 1 2]", got)
		}
	})

	t.Run("uncovered counts offered tasks", func(t *testing.T) {
		r := NewRequest("r", three)
		r.AddProbes([]Probe{{Node: nodes[0], Count: 1}, {Node: nodes[1], Count: 1}, {Node: nodes[2], Count: 1}})
		r.Offer("a")
		r.Offer("b")
		r.Offer("c")
		if u := r.Uncovered(); len(u) != 0 {
			t.Fatalf("Uncovered = %v with every task covered", u)
		}
		r.DropNode("c") // c's reservation is gone: one task lacks a place
		if u := r.Uncovered(); len(u) != 1 {
			t.Fatalf("Uncovered = %v after losing a node, want one task", u)
		}
		// A taken offer whose node was dropped meanwhile still launches.
		r.OfferTaken("c", 2)
		if r.Unlaunched() != 2 || !r.IsLaunched(2) || len(r.Uncovered()) != 0 {
			t.Fatalf("unlaunched %d, uncovered %v", r.Unlaunched(), r.Uncovered())
		}
	})

	t.Run("no offers for constrained requests or nodes without reservations", func(t *testing.T) {
		r := NewRequest("r", []Task{{ID: "t0", Nodes: []string{"a"}}, {ID: "t1"}})
		r.AddProbes(probes())
		if _, ok := r.Offer("a"); ok {
			t.Fatal("a constrained request made an offer")
		}
		r = NewRequest("r", three)
		r.AddProbes(probes()[:1])
		if _, ok := r.Offer("b"); ok {
			t.Fatal("offer to a node without a reservation")
		}
	})

	t.Run("reset forgets offers", func(t *testing.T) {
		r := NewRequest("r", three)
		r.AddProbes(probes())
		r.Offer("a")
		r.Offer("b")
		r.OfferDeclined(1)
		r.Reset("s", three)
		r.AddProbes(probes())
		if r.Offered() != 0 || r.IsOffered(0) {
			t.Fatal("offers survived Reset")
		}
		if task, ok := r.Assign("c"); !ok || task != 0 {
			t.Fatalf("Assign after Reset = %d, %v; want 0", task, ok)
		}
	})
}
