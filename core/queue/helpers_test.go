package queue

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
)

// rv builds a test reservation from a compact spec: a label followed by
// optional key=value fields, e.g. "a1 u=alice r=R1 app=spark p=2".
// The label is stored in Scheduler so service order can be compared as
// strings. Defaults: user = label without trailing digits, request = label,
// app = "app", priority = 0.
func rv(spec string) Reservation {
	fields := strings.Fields(spec)
	label := fields[0]
	r := Reservation{
		RequestID: label,
		App:       "app",
		User:      strings.TrimRight(label, "0123456789"),
		Scheduler: label,
	}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			panic("bad spec field " + f)
		}
		switch k {
		case "u":
			r.User = v
		case "r":
			r.RequestID = v
		case "app":
			r.App = v
		case "g":
			r.Group = v
		case "p":
			p, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				panic(err)
			}
			r.Priority = int32(p)
		default:
			panic("bad spec key " + k)
		}
	}
	return r
}

// rvs builds one reservation per spec.
func rvs(specs ...string) []Reservation {
	out := make([]Reservation, len(specs))
	for i, s := range specs {
		out[i] = rv(s)
	}
	return out
}

// seq expands "a", 1, 3 into "a1", "a2", "a3".
func seq(prefix string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// drain pops everything, checking Len stays exact, and returns the labels.
func drain(t *testing.T, d Discipline) []string {
	t.Helper()
	var out []string
	for want := d.Len(); want > 0; want-- {
		r, ok := d.Pop()
		if !ok {
			t.Fatalf("Pop returned false with Len %d", want)
		}
		out = append(out, r.Scheduler)
		if got := d.Len(); got != want-1 {
			t.Fatalf("Len after Pop = %d, want %d", got, want-1)
		}
	}
	if r, ok := d.Pop(); ok || r != (Reservation{}) {
		t.Fatalf("Pop on empty = %+v, %v; want zero, false", r, ok)
	}
	return out
}

func pushAll(d Discipline, rs []Reservation) {
	for _, r := range rs {
		d.Push(r)
	}
}

func mustFair(t testing.TB, def float64, w map[string]float64) *Fair {
	t.Helper()
	f, err := NewFair(def, w)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustPriority(t testing.TB, def float64, w map[string]float64) *Priority {
	t.Helper()
	p, err := NewPriority(def, w)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// orderCase is a table entry shared by the per-discipline order tests: push
// everything, apply removals, then drain and compare the service order.
type orderCase struct {
	name        string
	weights     map[string]float64
	push        []Reservation
	removeReqs  []string
	removeApps  []string
	wantRemoved int
	want        []string
}

func runOrderCase(t *testing.T, d Discipline, tc orderCase) {
	t.Helper()
	pushAll(d, tc.push)
	if got := d.Len(); got != len(tc.push) {
		t.Fatalf("Len after pushes = %d, want %d", got, len(tc.push))
	}
	removed := 0
	for _, id := range tc.removeReqs {
		removed += d.RemoveRequest(id)
	}
	for _, app := range tc.removeApps {
		removed += d.RemoveApp(app)
	}
	if removed != tc.wantRemoved {
		t.Fatalf("removed %d, want %d", removed, tc.wantRemoved)
	}
	if got, want := d.Len(), len(tc.push)-tc.wantRemoved; got != want {
		t.Fatalf("Len after removals = %d, want %d", got, want)
	}
	got := drain(t, d)
	if strings.Join(got, " ") != strings.Join(tc.want, " ") {
		t.Fatalf("service order\n got %v\nwant %v", got, tc.want)
	}
}

// checkBounds asserts the white-box memory invariants: bookkeeping never
// outgrows what is queued (plus one remembered idle user per queued item).
// checkQueuedByUser fails the test if f.QueuedByUser does not count
// queued, the reservations the test knows to be queued, by user.
func checkQueuedByUser(t testing.TB, step int, f *FIFO, queued []Reservation) {
	t.Helper()
	want := map[string]int{}
	for _, r := range queued {
		want[r.User]++
	}
	got := map[string]int{}
	f.QueuedByUser(got)
	if !maps.Equal(got, want) {
		t.Fatalf("step %d: QueuedByUser = %v, want %v", step, got, want)
	}
}

func checkBounds(t testing.TB, d Discipline) {
	t.Helper()
	n := d.Len()
	checkIndex := func(ix *index) {
		for _, k := range []linkKind{inRequest, inApp} {
			got := len(ix.byKey[k])
			for _, e := range ix.inline(k) {
				if e.l.empty() {
					continue
				}
				got++
				if _, dup := ix.byKey[k][e.key]; dup {
					t.Fatalf("key %q of kind %d filed both inline and in the map", e.key, k)
				}
			}
			if got > n {
				t.Fatalf("index kind %d holds %d keys with Len %d", k, got, n)
			}
		}
	}
	checkFair := func(f *Fair, n int) {
		if f.n != n {
			t.Fatalf("fair count %d, want %d", f.n, n)
		}
		if len(f.active.fs) > n || len(f.idle.fs) > n {
			t.Fatalf("active %d idle %d users with Len %d", len(f.active.fs), len(f.idle.fs), n)
		}
		if len(f.flows) != len(f.active.fs)+len(f.idle.fs) {
			t.Fatalf("flows %d != active %d + idle %d", len(f.flows), len(f.active.fs), len(f.idle.fs))
		}
		for _, fl := range f.idle.fs {
			if fl.tag <= f.vtime || !fl.q.empty() {
				t.Fatalf("idle user %q tag %v vtime %v empty %v", fl.user, fl.tag, f.vtime, fl.q.empty())
			}
		}
		if n == 0 && f.vtime != 0 {
			t.Fatalf("empty fair queue kept vtime %v", f.vtime)
		}
	}
	switch d := d.(type) {
	case *FIFO:
		if d.long != nil {
			checkIndex(&d.long.idx)
		}
	case *Fair:
		checkIndex(d.idx)
		checkFair(d, n)
	case *Priority:
		checkIndex(&d.idx)
		if len(d.levels) != len(d.order) || len(d.levels) > n {
			t.Fatalf("levels %d order %d with Len %d", len(d.levels), len(d.order), n)
		}
		sum := 0
		for _, lv := range d.levels {
			if lv.fair.n == 0 {
				t.Fatalf("empty level %d kept", lv.prio)
			}
			checkFair(lv.fair, lv.fair.n)
			sum += lv.fair.n
		}
		if sum != n {
			t.Fatalf("levels hold %d, Len %d", sum, n)
		}
	}
}

// filedHeader returns the header key is filed under in list kind k, looked
// up without the index's last-used cache.
func filedHeader(ix *index, k linkKind, key string) *list {
	inl := ix.inline(k)
	for i := range inl {
		if e := &inl[i]; !e.l.empty() && e.key == key {
			return &e.l
		}
	}
	return ix.byKey[k][key]
}
