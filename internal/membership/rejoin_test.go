package membership

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// freeAddr finds a port free for both TCP and UDP on host.
func freeAddr(t *testing.T, host string) string {
	t.Helper()
	for i := 0; i < 20; i++ {
		ln, err := net.Listen("tcp", host+":0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		pc, err := net.ListenPacket("udp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err == nil {
			pc.Close()
			return net.JoinHostPort(host, strconv.Itoa(port))
		}
	}
	t.Fatal("no free port")
	return ""
}

// startPair starts member "a" (role roleA) on hostA and node monitor "b"
// (2 slots) on hostB joined to it, both with the local profile, and makes
// them leave when the test ends.
func startPair(t *testing.T, hostA, hostB string, roleA Role) (a, b *Cluster) {
	t.Helper()
	a, err := Start(Config{Name: "a", Bind: hostA + ":0", Profile: "local", Meta: Meta{Role: roleA}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Leave(0) })
	b, err = Start(Config{Name: "b", Bind: hostB + ":0", Seeds: []string{a.Addr()}, Profile: "local",
		Meta: Meta{Role: RoleNodeMonitor, Slots: 2}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Leave(0) })
	return a, b
}

// A member whose seed is down when it starts joins the seed once it comes
// up: joining is retried for the member's whole life, which is also what
// heals a partition after both sides declared each other dead.
func TestSeedDownAtStartIsJoinedLater(t *testing.T) {
	seedAddr := freeAddr(t, "127.0.6.1")
	b, err := Start(Config{Name: "b", Bind: "127.0.6.2:0", Seeds: []string{seedAddr}, Profile: "local",
		Meta: Meta{Role: RoleNodeMonitor}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Leave(0)
	a, err := Start(Config{Name: "a", Bind: seedAddr, Profile: "local", Meta: Meta{Role: RoleScheduler}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Leave(0)
	deadline := time.Now().Add(15 * time.Second)
	for len(a.Members("")) != 2 || len(b.Members("")) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("never joined: a sees %d members, b sees %d", len(a.Members("")), len(b.Members("")))
		}
		time.Sleep(20 * time.Millisecond) // polling interval of a condition wait
	}
}

func TestHostNamesAreResolved(t *testing.T) {
	host, port, err := splitHostPort("localhost:7946")
	if err != nil || net.ParseIP(host) == nil || port != 7946 {
		t.Fatalf("splitHostPort(localhost:7946) = %q, %d, %v; want an IP", host, port, err)
	}
	if _, _, err := splitHostPort("no-such-host.invalid:1"); err == nil {
		t.Fatal("an unresolvable host was accepted")
	}
}
