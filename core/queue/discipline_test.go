package queue

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestKinds(t *testing.T) {
	want := []string{"fifo", "fair", "priority", "choosy"}
	got := Kinds()
	if !slices.Equal(got, want) {
		t.Fatalf("Kinds() = %v, want %v", got, want)
	}
	got[0] = "mangled"
	if Kinds()[0] != "fifo" {
		t.Fatal("Kinds() shares its backing array with callers")
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		kind    string
		def     float64
		weights map[string]float64
		wantErr []string // substrings; nil means success
		check   func(Discipline) bool
	}{
		{kind: "fifo", def: 1, check: func(d Discipline) bool { _, ok := d.(*FIFO); return ok }},
		// FIFO has no shares, so bad weights must not stop it.
		{kind: "fifo", def: math.NaN(), check: func(d Discipline) bool { _, ok := d.(*FIFO); return ok }},
		{kind: "fair", def: 1, weights: map[string]float64{"a": 2}, check: func(d Discipline) bool {
			f, ok := d.(*Fair)
			return ok && f.Weight("a") == 2 && f.Weight("z") == 1
		}},
		{kind: "priority", def: 3, check: func(d Discipline) bool {
			p, ok := d.(*Priority)
			return ok && p.Weight("z") == 3
		}},
		{kind: "fair", def: 0, wantErr: []string{"default weight", "not > 0"}},
		{kind: "priority", def: 1, weights: map[string]float64{"bob": -2}, wantErr: []string{`"bob"`, "not > 0"}},
		{kind: "lottery", def: 1, wantErr: []string{`"lottery"`, "fifo", "fair", "priority"}},
		{kind: "FIFO", def: 1, wantErr: []string{"fifo, fair, priority"}},
		{kind: "", def: 1, wantErr: []string{"unknown discipline"}},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			d, err := New(tc.kind, tc.def, tc.weights)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("New(%q) succeeded, want error", tc.kind)
				}
				if d != nil {
					t.Fatalf("New(%q) returned non-nil Discipline %#v with error", tc.kind, d)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("New(%q): %v", tc.kind, err)
			}
			if !tc.check(d) {
				t.Fatalf("New(%q) = %#v, wrong type or weights", tc.kind, d)
			}
		})
	}
}

var badWeights = []struct {
	name string
	w    float64
	msg  string
}{
	{"zero", 0, "not > 0"},
	{"negative", -1, "not > 0"},
	{"negative zero", math.Copysign(0, -1), "not > 0"},
	{"NaN", math.NaN(), "NaN"},
	{"+Inf", math.Inf(1), "infinite"},
	{"-Inf", math.Inf(-1), "infinite"},
	{"subnormal", 5e-324, "too small"},
}

func TestWeightValidation(t *testing.T) {
	type ctor func(float64, map[string]float64) (Weights, error)
	ctors := map[string]ctor{
		"NewFair": func(d float64, w map[string]float64) (Weights, error) {
			f, err := NewFair(d, w)
			if f == nil {
				return nil, err
			}
			return f, err
		},
		"NewPriority": func(d float64, w map[string]float64) (Weights, error) {
			p, err := NewPriority(d, w)
			if p == nil {
				return nil, err
			}
			return p, err
		},
	}
	for cname, mk := range ctors {
		for _, bw := range badWeights {
			t.Run(cname+"/default/"+bw.name, func(t *testing.T) {
				ws, err := mk(bw.w, nil)
				if err == nil || ws != nil {
					t.Fatalf("accepted default weight %v", bw.w)
				}
				if !errors.Is(err, ErrInvalidWeight) || !strings.Contains(err.Error(), bw.msg) || !strings.Contains(err.Error(), "default") {
					t.Fatalf("error %q: want ErrInvalidWeight mentioning %q and default", err, bw.msg)
				}
			})
			t.Run(cname+"/map/"+bw.name, func(t *testing.T) {
				_, err := mk(1, map[string]float64{"good": 2, "carol": bw.w})
				if err == nil {
					t.Fatalf("accepted weight %v", bw.w)
				}
				if !errors.Is(err, ErrInvalidWeight) || !strings.Contains(err.Error(), bw.msg) || !strings.Contains(err.Error(), `"carol"`) {
					t.Fatalf("error %q: want ErrInvalidWeight mentioning %q and carol", err, bw.msg)
				}
			})
			t.Run(cname+"/SetWeight/"+bw.name, func(t *testing.T) {
				ws, err := mk(1, map[string]float64{"dave": 4})
				if err != nil {
					t.Fatal(err)
				}
				for _, user := range []string{"dave", "erin"} {
					before := ws.Weight(user)
					err := ws.SetWeight(user, bw.w)
					if err == nil {
						t.Fatalf("SetWeight(%q, %v) succeeded", user, bw.w)
					}
					if !errors.Is(err, ErrInvalidWeight) || !strings.Contains(err.Error(), bw.msg) || !strings.Contains(err.Error(), user) {
						t.Fatalf("error %q: want ErrInvalidWeight mentioning %q and %q", err, bw.msg, user)
					}
					if after := ws.Weight(user); after != before {
						t.Fatalf("failed SetWeight changed weight %v -> %v", before, after)
					}
				}
			})
		}
		t.Run(cname+"/valid", func(t *testing.T) {
			src := map[string]float64{"a": 2, "b": 0.5}
			ws, err := mk(1.5, src)
			if err != nil {
				t.Fatal(err)
			}
			src["a"] = 99 // the constructor must have copied the map
			for user, want := range map[string]float64{"a": 2, "b": 0.5, "other": 1.5} {
				if got := ws.Weight(user); got != want {
					t.Errorf("Weight(%q) = %v, want %v", user, got, want)
				}
			}
			for _, w := range []float64{1e-300, 1e300, math.SmallestNonzeroFloat64 * (1 << 60), 7} {
				if err := ws.SetWeight("c", w); err != nil {
					t.Fatalf("SetWeight(c, %v): %v", w, err)
				}
				if got := ws.Weight("c"); got != w {
					t.Fatalf("Weight(c) = %v after SetWeight %v", got, w)
				}
			}
		})
	}
}

// TestEmptyOperations checks every discipline on an empty queue and on
// removals that match nothing.
func TestEmptyOperations(t *testing.T) {
	for _, kind := range Kinds() {
		t.Run(kind, func(t *testing.T) {
			d, err := New(kind, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d.Len() != 0 {
				t.Fatalf("Len = %d", d.Len())
			}
			if r, ok := d.Pop(); ok || r != (Reservation{}) {
				t.Fatalf("Pop = %+v, %v", r, ok)
			}
			if n := d.RemoveRequest("nope"); n != 0 {
				t.Fatalf("RemoveRequest = %d", n)
			}
			if n := d.RemoveApp("nope"); n != 0 {
				t.Fatalf("RemoveApp = %d", n)
			}
			d.Push(rv("a1 r=R app=X"))
			if n := d.RemoveRequest("other"); n != 0 || d.Len() != 1 {
				t.Fatalf("RemoveRequest(other) = %d, Len %d", n, d.Len())
			}
			if n := d.RemoveApp("other"); n != 0 || d.Len() != 1 {
				t.Fatalf("RemoveApp(other) = %d, Len %d", n, d.Len())
			}
			// Reservations are stored by value: the popped copy is intact.
			want := rv("a1 r=R app=X")
			if r, ok := d.Pop(); !ok || r != want {
				t.Fatalf("Pop = %+v, %v; want %+v", r, ok, want)
			}
			checkBounds(t, d)
		})
	}
}

// TestLenExact interleaves every operation on every discipline and checks
// Len against a hand-computed count after each step.
func TestLenExact(t *testing.T) {
	type op struct {
		do   func(Discipline) int // returns the removal count (0 for push/pop)
		want int                  // removal count expected
		len  int                  // Len expected afterwards
	}
	push := func(spec string) func(Discipline) int {
		return func(d Discipline) int { d.Push(rv(spec)); return 0 }
	}
	pop := func(d Discipline) int { d.Pop(); return 0 }
	rmReq := func(id string) func(Discipline) int { return func(d Discipline) int { return d.RemoveRequest(id) } }
	rmApp := func(app string) func(Discipline) int { return func(d Discipline) int { return d.RemoveApp(app) } }
	ops := []op{
		{push("a1 r=R1 app=X p=1"), 0, 1},
		{push("a2 r=R1 app=Y p=2"), 0, 2},
		{push("b1 r=R2 app=X p=1"), 0, 3},
		{push("b2 r=R2 app=X p=3"), 0, 4},
		{push("c1 r=R3 app=Y p=1"), 0, 5},
		{rmReq("R1"), 2, 3},
		{rmReq("R1"), 0, 3},
		{push("a3 r=R1 app=Y p=0"), 0, 4},
		{rmApp("X"), 2, 2},
		{rmApp("X"), 0, 2},
		{pop, 0, 1},
		{pop, 0, 0},
		{pop, 0, 0},
		{rmReq("R3"), 0, 0},
		{push("d1 r=R4 app=Z"), 0, 1},
		{push("d2 r=R4 app=Z"), 0, 2},
		{rmApp("Z"), 2, 0},
	}
	for _, kind := range Kinds() {
		t.Run(kind, func(t *testing.T) {
			d, err := New(kind, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range ops {
				if got := o.do(d); got != o.want {
					t.Fatalf("step %d removed %d, want %d", i, got, o.want)
				}
				if got := d.Len(); got != o.len {
					t.Fatalf("step %d Len = %d, want %d", i, got, o.len)
				}
				checkBounds(t, d)
			}
		})
	}
}

// TestChurnMemory pushes and removes many distinct requests, users, apps and
// priorities and checks that bookkeeping tracks what is queued rather than
// what was ever seen, and that drained containers give back large maps.
func TestChurnMemory(t *testing.T) {
	for _, kind := range Kinds() {
		t.Run(kind, func(t *testing.T) {
			d, err := New(kind, 1, map[string]float64{"u0": 2})
			if err != nil {
				t.Fatal(err)
			}
			d.Push(rv("keep1 u=keeper r=K app=KA p=100")) // never removed; least urgent
			for i := range 20000 {
				id := seq("r", i, i)[0]
				r := Reservation{RequestID: id, App: "app-" + id, User: "user-" + id, Priority: int32(i % 7), Scheduler: id}
				d.Push(r)
				d.Push(r)
				switch i % 3 {
				case 0:
					if n := d.RemoveRequest(id); n != 2 {
						t.Fatalf("RemoveRequest = %d", n)
					}
				case 1:
					if n := d.RemoveApp(r.App); n != 2 {
						t.Fatalf("RemoveApp = %d", n)
					}
				case 2:
					// Pop both copies of this request. Under fifo and fair
					// the keeper may be served first; requeue it.
					for range 2 {
						got, _ := d.Pop()
						for try := 0; got.User == "keeper" && try < 3; try++ {
							d.Push(got)
							got, _ = d.Pop()
						}
						if got.RequestID != id {
							t.Fatalf("popped %+v, want request %s", got, id)
						}
					}
				}
				if d.Len() != 1 {
					t.Fatalf("iteration %d: Len = %d, want 1", i, d.Len())
				}
				checkBounds(t, d)
			}
			// A burst of distinct keys followed by a full drain must release
			// the oversized maps.
			for i := range 3 * shrinkAbove {
				id := seq("burst", i, i)[0]
				d.Push(Reservation{RequestID: id, App: id, User: id, Priority: int32(i), Scheduler: id})
			}
			drain(t, d)
			checkBounds(t, d)
			switch d := d.(type) {
			case *FIFO:
				if d.long == nil {
					t.Fatal("FIFO never took its linked form")
				}
				if d.long.idx.byKey[inRequest] != nil {
					t.Fatal("FIFO index not compacted")
				}
			case *Fair:
				if d.idx.byKey[inRequest] != nil || d.flows != nil {
					t.Fatal("Fair maps not compacted")
				}
			case *Priority:
				if d.idx.byKey[inRequest] != nil || d.levels != nil {
					t.Fatal("Priority maps not compacted")
				}
			}
		})
	}
}
