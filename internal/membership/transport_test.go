package membership

import (
	"bytes"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

func newTestTransport(t *testing.T) *gossipTransport {
	t.Helper()
	tr, err := listenGossip("127.0.0.1", 0, nil, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown() })
	return tr
}

func (t *gossipTransport) addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(t.Port()))
}

func recvPacket(t *testing.T, tr *gossipTransport) *memberlist.Packet {
	t.Helper()
	select {
	case p := <-tr.PacketCh():
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no packet arrived")
		return nil
	}
}

// Every packet arrives in a buffer of its own, exactly its length, that a
// later packet does not overwrite: memberlist keeps slices of them.
func TestGossipTransportPacketsOwnTheirBuffers(t *testing.T) {
	a, b := newTestTransport(t), newTestTransport(t)
	payloads := [][]byte{bytes.Repeat([]byte{'x'}, 1400), []byte("ping"), {0}}
	var got []*memberlist.Packet
	for _, want := range payloads {
		if _, err := a.WriteTo(want, b.addr()); err != nil {
			t.Fatal(err)
		}
		got = append(got, recvPacket(t, b))
	}
	for i, p := range got {
		if !bytes.Equal(p.Buf, payloads[i]) {
			t.Errorf("packet %d: got %d bytes %q..., want %d bytes", i, len(p.Buf), p.Buf[:min(8, len(p.Buf))], len(payloads[i]))
		}
		if cap(p.Buf) != len(p.Buf) {
			t.Errorf("packet %d: buffer capacity %d for %d bytes", i, cap(p.Buf), len(p.Buf))
		}
		if p.From.String() != a.addr() {
			t.Errorf("packet %d from %s, want %s", i, p.From, a.addr())
		}
		if p.Timestamp.IsZero() {
			t.Errorf("packet %d has no receive time", i)
		}
	}
}

func TestGossipTransportWriteToAddress(t *testing.T) {
	a, b := newTestTransport(t), newTestTransport(t)
	if _, err := a.WriteToAddress([]byte("ack"), memberlist.Address{Addr: b.addr(), Name: "b"}); err != nil {
		t.Fatal(err)
	}
	if p := recvPacket(t, b); string(p.Buf) != "ack" {
		t.Fatalf("got %q", p.Buf)
	}
	// A host name is resolved.
	if _, err := a.WriteTo([]byte("named"), net.JoinHostPort("localhost", strconv.Itoa(b.Port()))); err != nil {
		t.Skipf("localhost does not resolve here: %v", err)
	}
	if p := recvPacket(t, b); string(p.Buf) != "named" {
		t.Fatalf("got %q", p.Buf)
	}
}

func TestGossipTransportStreams(t *testing.T) {
	a, b := newTestTransport(t), newTestTransport(t)
	conn, err := a.DialAddressTimeout(memberlist.Address{Addr: b.addr()}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("push-pull")); err != nil {
		t.Fatal(err)
	}
	var in net.Conn
	select {
	case in = <-b.StreamCh():
	case <-time.After(10 * time.Second):
		t.Fatal("no stream accepted")
	}
	defer in.Close()
	got := make([]byte, len("push-pull"))
	if _, err := io.ReadFull(in, got); err != nil || string(got) != "push-pull" {
		t.Fatalf("read %q, %v", got, err)
	}
}

// Shutdown returns while nobody reads the channels, and again when called
// twice; the port is free afterwards.
func TestGossipTransportShutdown(t *testing.T) {
	a := newTestTransport(t)
	b, err := listenGossip("127.0.0.1", 0, nil, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	// A packet and a connection that nobody takes from the channels.
	if _, err := a.WriteTo([]byte("unread"), b.addr()); err != nil {
		t.Fatal(err)
	}
	conn, err := a.DialTimeout(b.addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := b.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := b.Shutdown(); err != nil {
		t.Fatal(err)
	}
	again, err := listenGossip("127.0.0.1", b.Port(), nil, t.Logf)
	if err != nil {
		t.Fatalf("port %d not free after shutdown: %v", b.Port(), err)
	}
	_ = again.Shutdown()
}

func TestGossipTransportAdvertise(t *testing.T) {
	tr := newTestTransport(t)
	cases := []struct {
		name     string
		ip       string
		port     int
		wantIP   string
		wantPort int
		wantErr  bool
	}{
		{name: "given", ip: "10.1.2.3", port: 7000, wantIP: "10.1.2.3", wantPort: 7000},
		{name: "given v6", ip: "fd00::1", port: 7001, wantIP: "fd00::1", wantPort: 7001},
		{name: "bound", wantIP: "127.0.0.1", wantPort: tr.Port()},
		{name: "not an address", ip: "node-1", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ip, port, err := tr.FinalAdvertiseAddr(tc.ip, tc.port)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("got %s:%d, want an error", ip, port)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ip.String() != tc.wantIP || port != tc.wantPort {
				t.Fatalf("got %s:%d, want %s:%d", ip, port, tc.wantIP, tc.wantPort)
			}
		})
	}
}

func TestListenGossipRefusesHostNames(t *testing.T) {
	if tr, err := listenGossip("gossip.example", 0, nil, t.Logf); err == nil {
		_ = tr.Shutdown()
		t.Fatal("bound a host name; want an error naming it")
	}
}

// BenchmarkTransportPacket sends packets one at a time from one transport
// to another and receives each, for this package's transport and, as the
// reference, memberlist's NetTransport. B/op and allocs/op are what one
// packet costs the receiving side and the sender together.
func BenchmarkTransportPacket(b *testing.B) {
	payload := bytes.Repeat([]byte{'p'}, 60) // about a ping
	kinds := []struct {
		name string
		new  func(b *testing.B) (memberlist.Transport, int)
	}{
		{"gossipTransport", func(b *testing.B) (memberlist.Transport, int) {
			tr, err := listenGossip("127.0.0.1", 0, nil, b.Logf)
			if err != nil {
				b.Fatal(err)
			}
			return tr, tr.Port()
		}},
		{"memberlist.NetTransport", func(b *testing.B) (memberlist.Transport, int) {
			tr, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{"127.0.0.1"}, BindPort: 0})
			if err != nil {
				b.Fatal(err)
			}
			return tr, tr.GetAutoBindPort()
		}},
	}
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			from, _ := k.new(b)
			to, port := k.new(b)
			defer from.Shutdown()
			defer to.Shutdown()
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := from.WriteTo(payload, addr); err != nil {
					b.Fatal(err)
				}
				<-to.PacketCh()
			}
		})
	}
}
