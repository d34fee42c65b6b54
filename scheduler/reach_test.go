package scheduler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

func TestUnreachableErr(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"connect refused", &rpc.DialError{Addr: "a", Err: syscall.ECONNREFUSED}, true},
		{"connect timed out", &rpc.DialError{Addr: "a", Err: errors.New("i/o timeout")}, true},
		{"reset under a call", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"closed under a call", thrift.NewTTransportExceptionFromError(io.EOF), true},
		{"our own pool busy", rpc.ErrBusy, false},
		{"method unknown", thrift.NewTApplicationException(thrift.UNKNOWN_METHOD, "no"), false},
		{"answer timed out", errors.New("read tcp: i/o timeout"), false},
		{"no error", nil, false},
	} {
		if got := unreachableErr(tc.err); got != tc.want {
			t.Errorf("%s: unreachableErr = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// dialScript answers redials: addr connects once up is set.
type dialScript struct {
	mu    sync.Mutex
	up    map[string]bool
	dials []time.Duration // when each redial came, since start
	start time.Time
}

func (d *dialScript) dial(addr string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dials = append(d.dials, time.Since(d.start))
	if d.up[addr] {
		return nil
	}
	return syscall.ECONNREFUSED
}

func (d *dialScript) set(addr string, up bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.up[addr] = up
}

func downSet(r *reachability) []string {
	down, _ := r.state()
	var out []string
	for a := range down {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// A node monitor held unreachable is redialed after 1 s, then after
// twice the last wait up to 30 s, and is reachable again on the first
// redial that connects, on a call that succeeds, or on gossip news.
func TestReachability(t *testing.T) {
	refused := &rpc.DialError{Addr: "n", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, r *reachability, d *dialScript)
	}{
		{"redials back off while it stays down", func(t *testing.T, r *reachability, d *dialScript) {
			r.noted("n", refused)
			time.Sleep(2 * time.Minute)
			d.mu.Lock()
			got := slices.Clone(d.dials)
			d.mu.Unlock()
			want := []time.Duration{1, 3, 7, 15, 31, 61, 91}
			for i := range want {
				want[i] *= time.Second
			}
			if !slices.Equal(got, want) {
				t.Errorf("redials at %v, want %v", got, want)
			}
			if !slices.Equal(downSet(r), []string{"n"}) {
				t.Errorf("held unreachable: %v, want [n]", downSet(r))
			}
		}},
		{"a redial that connects ends it", func(t *testing.T, r *reachability, d *dialScript) {
			r.noted("n", refused)
			time.Sleep(2 * time.Second) // redialed once, refused
			d.set("n", true)
			time.Sleep(2 * time.Second) // the next redial, at 3 s, connects
			synctest.Wait()
			if got := downSet(r); len(got) != 0 {
				t.Errorf("still held unreachable: %v", got)
			}
		}},
		{"each failed call is remembered, not a word heard", func(t *testing.T, r *reachability, d *dialScript) {
			r.heard("n")
			if _, ok := r.lastFailed("n"); ok {
				t.Error("a node heard of has a failed call of its own")
			}
			r.noted("n", refused)
			first, _ := r.lastFailed("n")
			time.Sleep(500 * time.Millisecond)
			r.noted("n", refused)
			if last, ok := r.lastFailed("n"); !ok || last.Sub(first) != 500*time.Millisecond {
				t.Errorf("last failed call at %v (%v), want 500ms after the first", last.Sub(first), ok)
			}
		}},
		{"a watch's failed connect holds it down and tells, but is not a failed call", func(t *testing.T, r *reachability, d *dialScript) {
			told := make(chan string, 1)
			r.tell = func(addr string) { told <- addr }
			r.lost("n", refused)
			if !slices.Equal(downSet(r), []string{"n"}) {
				t.Errorf("held unreachable: %v, want [n]", downSet(r))
			}
			if _, ok := r.lastFailed("n"); ok {
				t.Error("a watch's connect counted as a failed call")
			}
			if got := <-told; got != "n" {
				t.Errorf("told of %q, want n", got)
			}
		}},
		{"a call that succeeds ends it", func(t *testing.T, r *reachability, d *dialScript) {
			r.noted("n", refused)
			r.noted("n", nil)
			if got := downSet(r); len(got) != 0 {
				t.Errorf("still held unreachable: %v", got)
			}
		}},
		{"gossip news ends it", func(t *testing.T, r *reachability, d *dialScript) {
			r.noted("n", refused)
			r.reached("n")
			if got := downSet(r); len(got) != 0 {
				t.Errorf("still held unreachable: %v", got)
			}
		}},
		{"errors that say nothing of the node change nothing", func(t *testing.T, r *reachability, d *dialScript) {
			r.noted("n", rpc.ErrBusy)
			r.noted("m", errors.New("read tcp: i/o timeout"))
			if got := downSet(r); len(got) != 0 {
				t.Errorf("held unreachable: %v", got)
			}
		}},
		{"the version moves with the set", func(t *testing.T, r *reachability, d *dialScript) {
			_, v0 := r.state()
			r.noted("n", refused)
			if !r.changedSince(v0) {
				t.Error("a new unreachable node left the version")
			}
			_, v1 := r.state()
			r.noted("n", refused)
			if r.changedSince(v1) {
				t.Error("a second failure of a node already held moved the version")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := &dialScript{up: map[string]bool{}, start: time.Now()}
				r := newReachability(d.dial, zerolog.Nop())
				defer r.close()
				tc.run(t, r, d)
			})
		})
	}
}

// scriptedNodes fails calls to the addresses in refuse with a refused
// connect and answers the rest.
type scriptedNodes struct {
	NodeMonitors
	refuse map[string]bool
}

func (s scriptedNodes) EnqueueTaskReservations(_ context.Context, addr string, _ *sparrowrpc.TEnqueueTaskReservationsRequest) (bool, error) {
	if s.refuse[addr] {
		return false, &rpc.DialError{Addr: addr, Err: syscall.ECONNREFUSED}
	}
	return true, nil
}

func TestReachNodesNoteEveryCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newReachability(func(string) error { return syscall.ECONNREFUSED }, zerolog.Nop())
		defer r.close()
		fake := scriptedNodes{refuse: map[string]bool{"dead": true}}
		n := reachNodes{NodeMonitors: fake, reach: r}
		for _, addr := range []string{"dead", "live"} {
			n.EnqueueTaskReservations(context.Background(), addr, &sparrowrpc.TEnqueueTaskReservationsRequest{})
		}
		if got := downSet(r); !slices.Equal(got, []string{"dead"}) {
			t.Errorf("held unreachable: %v, want [dead]", got)
		}
		fake.refuse["dead"] = false
		n.EnqueueTaskReservations(context.Background(), "dead", &sparrowrpc.TEnqueueTaskReservationsRequest{})
		if got := downSet(r); len(got) != 0 {
			t.Errorf("held unreachable after a call succeeded: %v", got)
		}
	})
}

func TestUnreachableWord(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  []byte
		want string
		ok   bool
	}{
		{"a word", encodeUnreachable("10.0.0.7:20502"), "10.0.0.7:20502", true},
		{"a host name", encodeUnreachable("node-7.example:20502"), "node-7.example:20502", true},
		{"no port", encodeUnreachable("10.0.0.7"), "", false},
		{"empty", encodeUnreachable(""), "", false},
		{"another format", append([]byte{unreachableMagic, unreachableFormat + 1}, "10.0.0.7:1"...), "", false},
		{"fairness gossip", append([]byte{0xFA, 1}, "10.0.0.7:1"...), "", false},
		{"too long", encodeUnreachable(string(make([]byte, maxUnreachableAddr+1))), "", false},
		{"nothing", nil, "", false},
	} {
		got, ok := decodeUnreachable(tc.msg)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: decodeUnreachable = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// Any message decodes to an address that encodes back to it, or to none.
func FuzzUnreachableWord(f *testing.F) {
	f.Add(encodeUnreachable("10.0.0.7:20502"))
	f.Add([]byte{unreachableMagic, unreachableFormat, ':'})
	f.Add([]byte{0xFA, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		addr, ok := decodeUnreachable(b)
		if !ok {
			return
		}
		if !slices.Equal(encodeUnreachable(addr), b) {
			t.Errorf("%q decoded to %q, which encodes to %q", b, addr, encodeUnreachable(addr))
		}
	})
}

// A scheduler tells the others of a node monitor its own call found
// unreachable, not of one it heard of; a word heard is undone by its own
// redial.
func TestReachabilityWord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var told []string
		up := map[string]bool{"heard": true}
		r := newReachability(func(addr string) error {
			mu.Lock()
			defer mu.Unlock()
			if up[addr] {
				return nil
			}
			return syscall.ECONNREFUSED
		}, zerolog.Nop())
		defer r.close()
		r.tell = func(addr string) {
			mu.Lock()
			defer mu.Unlock()
			told = append(told, addr)
		}
		r.noted("own", &rpc.DialError{Addr: "own", Err: syscall.ECONNREFUSED})
		r.heard("heard")
		synctest.Wait()
		mu.Lock()
		if !slices.Equal(told, []string{"own"}) {
			t.Errorf("told %v, want [own]", told)
		}
		mu.Unlock()
		if got := downSet(r); !slices.Equal(got, []string{"heard", "own"}) {
			t.Errorf("held unreachable: %v, want [heard own]", got)
		}
		time.Sleep(reachRecheck + time.Millisecond)
		synctest.Wait()
		if got := downSet(r); !slices.Equal(got, []string{"own"}) {
			t.Errorf("held unreachable after a redial: %v, want [own]", got)
		}
	})
}

func TestReachableLeavesOutTheUnreachable(t *testing.T) {
	a, b, c := placement.Node{Addr: "a:1"}, placement.Node{Addr: "b:1"}, placement.Node{Addr: "c:1"}
	for _, tc := range []struct {
		name  string
		hosts []placement.Node
		down  map[string]bool
		want  []placement.Node
	}{
		{"none down", []placement.Node{a, b, c}, nil, []placement.Node{a, b, c}},
		{"one down", []placement.Node{a, b, c}, map[string]bool{"b:1": true}, []placement.Node{a, c}},
		{"a node that hosts nothing here", []placement.Node{a, c}, map[string]bool{"b:1": true}, []placement.Node{a, c}},
		{"all down: all offered", []placement.Node{a, b}, map[string]bool{"a:1": true, "b:1": true}, []placement.Node{a, b}},
		{"no hosts", nil, map[string]bool{"a:1": true}, nil},
	} {
		addrs := func(ns []placement.Node) []string {
			var out []string
			for _, n := range ns {
				out = append(out, n.Addr)
			}
			return out
		}
		if got := reachable(tc.hosts, tc.down); !slices.Equal(addrs(got), addrs(tc.want)) {
			t.Errorf("%s: reachable = %v, want %v", tc.name, addrs(got), addrs(tc.want))
		}
	}
}
