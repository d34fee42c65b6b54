package queue

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// FuzzDiscipline drives every discipline with an op sequence decoded from
// the input and checks it against a simple reference model: the multiset of
// live reservations in push order. Invariants checked after every op:
//   - Len equals the model size, and Pop fails exactly when the model is empty;
//   - Pop returns a live reservation (never a removed or already popped one);
//   - RemoveRequest/RemoveApp return exactly the model's matching count;
//   - discipline order: FIFO pops the oldest; Fair pops the oldest of the
//     chosen user; Priority pops from the smallest queued priority and the
//     oldest of the chosen user there;
//   - SetWeight rejects invalid weights without effect and applies valid ones;
//   - bookkeeping stays bounded by what is queued (checkBounds).
//
// Run the seeds with go test, or explore with
// go test -fuzz=FuzzDiscipline ./queue/.
func FuzzDiscipline(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 3, 3, 3})                         // push then pop
	f.Add([]byte{0, 1, 2, 0, 5, 7, 1, 9, 4, 5, 0, 3, 3, 3}) // push, remove, pop
	f.Add([]byte{7, 0, 5, 7, 1, 7, 0, 0, 1, 4, 0, 2, 8, 3, 4, 4})
	rng := rand.New(rand.NewPCG(2013, 42)) // fixed seed: reproducible corpus
	for _, n := range []int{64, 256, 1024, 4096} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, kind := range Kinds() {
			runModel(t, kind, data)
		}
	})
}

var (
	fuzzUsers = []string{"ann", "bob", "cat", "dan", "never-pushed"}
	fuzzReqs  = []string{"r0", "r1", "r2", "r3", "r4", "never-pushed"}
	fuzzApps  = []string{"spark", "impala", "", "never-pushed"}
	// Valid and invalid weights alike.
	fuzzWeights = []float64{1, 2, 0.5, 3, 1e-3, 0, -1, math.NaN(), math.Inf(1)}
)

func runModel(t *testing.T, kind string, data []byte) {
	d, err := New(kind, 1, map[string]float64{"ann": 2})
	if err != nil {
		t.Fatal(err)
	}
	pos := 0
	next := func() int {
		if pos >= len(data) {
			return 0
		}
		pos++
		return int(data[pos-1])
	}
	var live []Reservation // the model, in push order
	label := 0

	checkPop := func() {
		r, ok := d.Pop()
		if ok != (len(live) > 0) {
			t.Fatalf("%s: Pop ok=%v with %d live", kind, ok, len(live))
		}
		if !ok {
			return
		}
		i := slices.IndexFunc(live, func(l Reservation) bool { return l.Scheduler == r.Scheduler })
		if i < 0 {
			t.Fatalf("%s: popped %+v, which is not live (removed or popped before)", kind, r)
		}
		if live[i] != r {
			t.Fatalf("%s: popped %+v, pushed %+v", kind, r, live[i])
		}
		switch kind {
		case "fifo":
			if i != 0 {
				t.Fatalf("fifo: popped %s but %s is older", r.Scheduler, live[0].Scheduler)
			}
		case "fair":
			if j := slices.IndexFunc(live, func(l Reservation) bool { return l.User == r.User }); j != i {
				t.Fatalf("fair: popped %s but %s of the same user is older", r.Scheduler, live[j].Scheduler)
			}
		case "priority":
			for _, l := range live {
				if l.Priority < r.Priority {
					t.Fatalf("priority: popped priority %d while %d is queued", r.Priority, l.Priority)
				}
			}
			if j := slices.IndexFunc(live, func(l Reservation) bool {
				return l.User == r.User && l.Priority == r.Priority
			}); j != i {
				t.Fatalf("priority: popped %s but %s of the same user and priority is older", r.Scheduler, live[j].Scheduler)
			}
		}
		live = slices.Delete(live, i, i+1)
	}
	remove := func(what string, match func(Reservation) bool, got int) {
		want := 0
		for _, l := range live {
			if match(l) {
				want++
			}
		}
		if got != want {
			t.Fatalf("%s: %s removed %d, model has %d", kind, what, got, want)
		}
		live = slices.DeleteFunc(live, match)
	}

	for ops := 0; pos < len(data) && ops < 5000; ops++ {
		switch op := next(); op % 8 {
		case 0, 1, 2:
			x, y := next(), next()
			label++
			r := Reservation{
				RequestID: fuzzReqs[x%5],
				App:       fuzzApps[y%3],
				User:      fuzzUsers[(x/5)%4],
				Group:     "g",
				Priority:  int32((y/3)%3) - 1,
				Scheduler: fmt.Sprint("s", label), // unique, to identify it
			}
			d.Push(r)
			live = append(live, r)
		case 3, 4:
			checkPop()
		case 5:
			id := fuzzReqs[next()%len(fuzzReqs)]
			remove("RemoveRequest("+id+")", func(l Reservation) bool { return l.RequestID == id }, d.RemoveRequest(id))
		case 6:
			app := fuzzApps[next()%len(fuzzApps)]
			remove("RemoveApp("+app+")", func(l Reservation) bool { return l.App == app }, d.RemoveApp(app))
		case 7:
			u, w := fuzzUsers[next()%len(fuzzUsers)], fuzzWeights[next()%len(fuzzWeights)]
			ws, ok := d.(Weights)
			if !ok {
				continue
			}
			before := ws.Weight(u)
			err := ws.SetWeight(u, w)
			valid := CheckWeight(w) == nil
			switch {
			case valid && err != nil:
				t.Fatalf("%s: SetWeight(%s, %v): %v", kind, u, w, err)
			case !valid && err == nil:
				t.Fatalf("%s: SetWeight(%s, %v) accepted", kind, u, w)
			case valid && ws.Weight(u) != w:
				t.Fatalf("%s: Weight(%s) = %v after SetWeight %v", kind, u, ws.Weight(u), w)
			case !valid && ws.Weight(u) != before:
				t.Fatalf("%s: rejected SetWeight changed weight", kind)
			}
		}
		if d.Len() != len(live) {
			t.Fatalf("%s: Len = %d, model %d", kind, d.Len(), len(live))
		}
		checkBounds(t, d)
	}
	for len(live) > 0 {
		checkPop()
		if d.Len() != len(live) {
			t.Fatalf("%s: Len = %d, model %d", kind, d.Len(), len(live))
		}
	}
	checkPop() // must report empty
	checkBounds(t, d)
}
