package rpc

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// fakeResolver answers lookups from a table that tests change; a name
// not in it is not found.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string]fakeAnswer
}

type fakeAnswer struct {
	addrs []string
	err   error
}

func newFakeResolver() *fakeResolver { return &fakeResolver{answers: make(map[string]fakeAnswer)} }

func (r *fakeResolver) set(host string, addrs []string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[host] = fakeAnswer{addrs, err}
}

func (r *fakeResolver) LookupHost(ctx context.Context, host string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, &net.DNSError{Err: err.Error(), Name: host, IsTimeout: true}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.answers[host]
	if !ok {
		return nil, notFound(host)
	}
	return a.addrs, a.err
}

func notFound(host string) error {
	return &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// lookupStep is one lookup of a host, with what DNS answers and what
// resolve must return.
type lookupStep struct {
	host      string
	dnsAddrs  []string
	dnsErr    error
	cancelled bool // the lookup's context is cancelled

	want         []string
	wantFallback bool
	wantErr      bool
}

func runLookupSteps(t *testing.T, names int, steps []lookupStep) {
	t.Helper()
	r := newFakeResolver()
	k := newLastKnownAddrs(r, names)
	for i, s := range steps {
		r.set(s.host, s.dnsAddrs, s.dnsErr)
		ctx, cancel := context.WithCancel(context.Background())
		if s.cancelled {
			cancel()
		}
		addrs, fallback, err := k.resolve(ctx, s.host)
		cancel()
		if (err != nil) != s.wantErr {
			t.Fatalf("step %d (%s): err %v, want error %v", i, s.host, err, s.wantErr)
		}
		if (fallback != nil) != s.wantFallback {
			t.Fatalf("step %d (%s): fallback %v, want one %v", i, s.host, fallback, s.wantFallback)
		}
		if s.wantFallback && !isDNSFailure(fallback) {
			t.Fatalf("step %d (%s): fallback %v is not the lookup's DNS failure", i, s.host, fallback)
		}
		if !slices.Equal(addrs, s.want) {
			t.Fatalf("step %d (%s): addresses %v, want %v", i, s.host, addrs, s.want)
		}
	}
}

func TestLastKnownAddrsResolve(t *testing.T) {
	a := []string{"10.0.0.1", "10.0.0.2"}
	b := []string{"10.0.0.9"}
	ok := func(host string, addrs []string) lookupStep {
		return lookupStep{host: host, dnsAddrs: addrs, want: addrs}
	}
	temporary := &net.DNSError{Err: "server misbehaving", Name: "peer", IsTemporary: true}
	timeout := &net.DNSError{Err: "i/o timeout", Name: "peer", IsTimeout: true}
	cases := []struct {
		name  string
		steps []lookupStep
	}{
		{"a name that resolves", []lookupStep{ok("peer", a), ok("peer", a)}},
		{"a name gone from DNS falls back to its last addresses", []lookupStep{
			ok("peer", a),
			{host: "peer", dnsErr: notFound("peer"), want: a, wantFallback: true},
			{host: "peer", dnsErr: notFound("peer"), want: a, wantFallback: true},
		}},
		{"a temporary DNS failure falls back", []lookupStep{
			ok("peer", a), {host: "peer", dnsErr: temporary, want: a, wantFallback: true},
		}},
		{"a DNS timeout falls back", []lookupStep{
			ok("peer", a), {host: "peer", dnsErr: timeout, want: a, wantFallback: true},
		}},
		{"an empty answer falls back", []lookupStep{
			ok("peer", a), {host: "peer", dnsAddrs: []string{}, want: a, wantFallback: true},
		}},
		{"a name never resolved has no fallback", []lookupStep{
			ok("peer", a), {host: "stranger", dnsErr: notFound("stranger"), wantErr: true},
		}},
		{"an error other than DNS's does not fall back", []lookupStep{
			ok("peer", a), {host: "peer", dnsErr: errors.New("resolver broken"), wantErr: true},
		}},
		{"a cancelled lookup does not fall back", []lookupStep{
			ok("peer", a), {host: "peer", cancelled: true, wantErr: true},
		}},
		{"each successful lookup refreshes the addresses", []lookupStep{
			ok("peer", a), ok("peer", b),
			{host: "peer", dnsErr: notFound("peer"), want: b, wantFallback: true},
			ok("peer", a),
			{host: "peer", dnsErr: notFound("peer"), want: a, wantFallback: true},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runLookupSteps(t, 8, c.steps) })
	}
}

func TestLastKnownAddrsForgetsTheOldest(t *testing.T) {
	addrs := map[string][]string{"a": {"10.0.0.1"}, "b": {"10.0.0.2"}, "c": {"10.0.0.3"}}
	ok := func(host string) lookupStep { return lookupStep{host: host, dnsAddrs: addrs[host], want: addrs[host]} }
	gone := func(host string) lookupStep {
		return lookupStep{host: host, dnsErr: notFound(host), want: addrs[host], wantFallback: true}
	}
	forgotten := func(host string) lookupStep {
		return lookupStep{host: host, dnsErr: notFound(host), wantErr: true}
	}
	cases := []struct {
		name  string
		names int
		steps []lookupStep
	}{
		{"past the cap the first name goes", 2, []lookupStep{
			ok("a"), ok("b"), ok("c"), forgotten("a"), gone("b"), gone("c"),
		}},
		{"a refreshed name stays, the one refreshed longest ago goes", 2, []lookupStep{
			ok("a"), ok("b"), ok("a"), ok("c"), forgotten("b"), gone("a"), gone("c"),
		}},
		{"a fallback does not refresh", 2, []lookupStep{
			ok("a"), ok("b"), gone("a"), ok("c"), forgotten("a"), gone("b"),
		}},
		{"a cap below one is one", 0, []lookupStep{
			ok("a"), ok("b"), forgotten("a"), gone("b"),
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runLookupSteps(t, c.names, c.steps) })
	}
}

// TestPoolDialsLastKnownAddresses: a pool dials (and Reachable probes) a
// peer whose name left DNS at the addresses the name last resolved to,
// and a name it never resolved not at all.
func TestPoolDialsLastKnownAddresses(t *testing.T) {
	srv, fe := startFrontend(t, Config{})
	_, port, err := net.SplitHostPort(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	r := newFakeResolver()
	p := newFrontendPool(t, Config{})
	p.addrs = newLastKnownAddrs(r, 8)
	peer := net.JoinHostPort("peer.test", port)
	stranger := net.JoinHostPort("stranger.test", port)

	// The server listens on 127.0.0.1 only, so its port on 127.0.0.2
	// refuses connections: the next address is tried.
	r.set("peer.test", []string{"127.0.0.2", "127.0.0.1"}, nil)
	steps := []struct {
		name    string
		addr    string
		dnsGone bool
		wantErr bool
	}{
		{"while the name resolves", peer, false, false},
		{"after the name left DNS", peer, true, false},
		{"a name never resolved", stranger, true, true},
	}
	calls := 0
	for _, s := range steps {
		if s.dnsGone {
			r.set("peer.test", nil, notFound("peer.test"))
		}
		if err := p.Reachable(context.Background(), s.addr, time.Second); (err != nil) != s.wantErr {
			t.Fatalf("%s: Reachable: %v, want an error %v", s.name, err, s.wantErr)
		}
		// Every call dials: the idle connection is dropped first.
		p.Forget(s.addr)
		err := sendStatus(p, s.addr, 0)
		if s.wantErr {
			var de *DialError
			if !errors.As(err, &de) {
				t.Fatalf("%s: %v, want a DialError", s.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		calls++
		if fe.count() != calls {
			t.Fatalf("%s: the server ran %d calls, want %d", s.name, fe.count(), calls)
		}
	}
}

// TestPoolVerifiesTLSAgainstTheHostName: a pool that dials a name at its
// resolved (or last known) addresses checks the server's certificate
// against the name, not the address.
func TestPoolVerifiesTLSAgainstTheHostName(t *testing.T) {
	f := newTLSFixture(t)
	named := f.ca.issue(t, CertOptions{Name: "named", Hosts: []string{"peer.test"}})
	other := f.ca.issue(t, CertOptions{Name: "other-name", Hosts: []string{"127.0.0.1", "elsewhere.test"}})
	cases := []struct {
		name    string
		server  TLSFiles
		dnsGone bool
		wantErr string
	}{
		{"a certificate for the name", named, false, ""},
		{"a certificate for the name, after the name left DNS", named, true, ""},
		{"a certificate for the address only", other, false, "peer.test"},
		{"a certificate for the address only, after the name left DNS", other, true, "peer.test"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			addr, counter := startTLSServer(t, mustTLS(t)(c.server.Config()))
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				t.Fatal(err)
			}
			r := newFakeResolver()
			r.set("peer.test", []string{"127.0.0.1"}, nil)
			p := NewPool(Config{TLS: mustTLS(t)(f.client.ClientConfig())}, sparrowrpc.NewFrontendServiceClient)
			defer p.Close()
			p.addrs = newLastKnownAddrs(r, 8)
			if c.dnsGone {
				// The name resolved once (a plain lookup), then left DNS.
				if _, _, err := p.addrs.resolve(context.Background(), "peer.test"); err != nil {
					t.Fatal(err)
				}
				r.set("peer.test", nil, notFound("peer.test"))
			}
			err = p.Call(context.Background(), net.JoinHostPort("peer.test", port), func(ctx context.Context, cl *sparrowrpc.FrontendServiceClient) error {
				return cl.FrontendMessage(ctx, &sparrowrpc.TFullTaskId{TaskId: "t", RequestId: "r"}, 0, []byte("m"))
			})
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("TLS call by name: %v", err)
				}
				if counter.calls.Load() != 1 {
					t.Fatalf("the server ran %d calls, want 1", counter.calls.Load())
				}
				return
			}
			var de *DialError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("TLS call to a server whose certificate does not name peer.test: %v, want a DialError naming %s", err, c.wantErr)
			}
			if counter.calls.Load() != 0 {
				t.Fatal("a refused server ran a call")
			}
		})
	}
}
