package membership

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	gometrics "github.com/hashicorp/go-metrics"
	sockaddr "github.com/hashicorp/go-sockaddr"
	"github.com/hashicorp/memberlist"
)

// maxDatagram is the largest UDP payload a gossip packet can have.
const maxDatagram = 65535

// gossipRecvBuffer is the socket receive buffer asked for; the kernel may
// grant less, which only matters for bursts.
const gossipRecvBuffer = 2 << 20

// gossipTransport carries memberlist's packets over UDP and its streams
// over TCP, both on one port of one address. It plays the part of
// memberlist's NetTransport with a different cost per packet: NetTransport
// hands memberlist a fresh 64 KiB buffer for every datagram it receives,
// and with a probe and an ack per member every second that buffer is most
// of what an idle member allocates, and so most of its garbage collector's
// work. This transport reads every datagram into one buffer owned by its
// reader and hands memberlist a copy of exactly the datagram's length,
// which memberlist owns from then on, as it owned NetTransport's. Sends to
// an IP address are parsed without the resolver.
//
// Contract: Start a transport with listenGossip; memberlist owns it from
// Create on, and its Shutdown closes the sockets and waits for the reader
// and the acceptor to return. Every method is safe for concurrent use.
type gossipTransport struct {
	tcp *net.TCPListener
	udp *net.UDPConn
	// port is the one port both sockets are bound to.
	port int

	packets chan *memberlist.Packet
	streams chan net.Conn
	closing chan struct{}
	once    sync.Once
	wg      sync.WaitGroup

	labels []gometrics.Label
	logf   func(format string, args ...any)
}

var _ memberlist.NodeAwareTransport = (*gossipTransport)(nil)

// listenGossip binds TCP and UDP on host:port. Port 0 picks a port free
// for both protocols, trying again when UDP finds the TCP port taken.
// logf receives accept and read errors in memberlist's log format, so
// that the member's memberlist log classifies them as its own.
func listenGossip(host string, port int, labels []gometrics.Label, logf func(string, ...any)) (*gossipTransport, error) {
	// An empty host binds every address, as memberlist's own transport does.
	ip := net.IPv4zero
	if host != "" {
		if ip = net.ParseIP(host); ip == nil {
			return nil, fmt.Errorf("gossip bind address %q is not an IP address", host)
		}
	}
	tries := 1
	if port == 0 {
		tries = 10
	}
	var err error
	for range tries {
		var t *gossipTransport
		if t, err = bindGossip(ip, port); err == nil {
			t.labels, t.logf = labels, logf
			t.wg.Add(2)
			go t.acceptStreams()
			go t.readPackets()
			return t, nil
		}
	}
	return nil, err
}

func bindGossip(ip net.IP, port int) (*gossipTransport, error) {
	tcp, err := net.ListenTCP("tcp", &net.TCPAddr{IP: ip, Port: port})
	if err != nil {
		return nil, fmt.Errorf("gossip TCP listener on %s: %w", net.JoinHostPort(ip.String(), fmt.Sprint(port)), err)
	}
	port = tcp.Addr().(*net.TCPAddr).Port
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip, Port: port})
	if err != nil {
		_ = tcp.Close()
		return nil, fmt.Errorf("gossip UDP listener on %s: %w", net.JoinHostPort(ip.String(), fmt.Sprint(port)), err)
	}
	// A smaller buffer than asked for is not an error: the kernel caps it
	// at net.core.rmem_max, and a burst beyond it loses packets that
	// memberlist's retransmits and probes already tolerate.
	_ = udp.SetReadBuffer(gossipRecvBuffer)
	return &gossipTransport{
		tcp: tcp, udp: udp, port: port,
		packets: make(chan *memberlist.Packet),
		streams: make(chan net.Conn),
		closing: make(chan struct{}),
	}, nil
}

// Port is the port both sockets are bound to.
func (t *gossipTransport) Port() int { return t.port }

// FinalAdvertiseAddr returns ip:port when ip is given; otherwise the bound
// address, or for a wildcard bind the host's private address.
func (t *gossipTransport) FinalAdvertiseAddr(ip string, port int) (net.IP, int, error) {
	if ip != "" {
		adv := net.ParseIP(ip)
		if adv == nil {
			return nil, 0, fmt.Errorf("gossip advertise address %q is not an IP address", ip)
		}
		if v4 := adv.To4(); v4 != nil {
			adv = v4
		}
		return adv, port, nil
	}
	bound := t.tcp.Addr().(*net.TCPAddr).IP
	if !bound.IsUnspecified() {
		return bound, t.port, nil
	}
	private, err := sockaddr.GetPrivateIP()
	if err != nil {
		return nil, 0, fmt.Errorf("find this host's private address to advertise: %w", err)
	}
	if private == "" {
		return nil, 0, errors.New("gossip binds a wildcard address and this host has no private address: set an advertise address")
	}
	return net.ParseIP(private), t.port, nil
}

// WriteTo sends one packet to addr, "host:port".
func (t *gossipTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	to, err := netip.ParseAddrPort(addr)
	if err != nil {
		resolved, rerr := net.ResolveUDPAddr("udp", addr)
		if rerr != nil {
			return time.Time{}, rerr
		}
		to = resolved.AddrPort()
	}
	_, err = t.udp.WriteToUDPAddrPort(b, to)
	return time.Now(), err
}

// WriteToAddress sends one packet to a.Addr; the node's name is not needed
// to route it.
func (t *gossipTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	return t.WriteTo(b, a.Addr)
}

// PacketCh delivers every packet received, each in a buffer of its own.
func (t *gossipTransport) PacketCh() <-chan *memberlist.Packet { return t.packets }

// DialTimeout opens a stream to addr.
func (t *gossipTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	return d.Dial("tcp", addr)
}

// DialAddressTimeout opens a stream to a.Addr.
func (t *gossipTransport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	return t.DialTimeout(a.Addr, timeout)
}

// StreamCh delivers every accepted stream.
func (t *gossipTransport) StreamCh() <-chan net.Conn { return t.streams }

// Shutdown closes both sockets and waits for the reader and the acceptor.
// It may be called more than once.
func (t *gossipTransport) Shutdown() error {
	t.once.Do(func() {
		close(t.closing)
		_ = t.tcp.Close()
		_ = t.udp.Close()
	})
	t.wg.Wait()
	return nil
}

func (t *gossipTransport) closed() bool {
	select {
	case <-t.closing:
		return true
	default:
		return false
	}
}

// acceptStreams hands accepted connections to memberlist. Accept errors
// other than the listener's close (running out of descriptors, say) are
// retried after a delay doubling from 5 ms to a second, so that a full
// descriptor table does not become a busy loop.
func (t *gossipTransport) acceptStreams() {
	defer t.wg.Done()
	const first, most = 5 * time.Millisecond, time.Second
	var delay time.Duration
	for {
		conn, err := t.tcp.AcceptTCP()
		if err != nil {
			if t.closed() {
				return
			}
			delay = min(max(2*delay, first), most)
			t.logf("[ERR] memberlist: Error accepting TCP connection: %v", err)
			select {
			case <-time.After(delay):
			case <-t.closing:
				return
			}
			continue
		}
		delay = 0
		select {
		case t.streams <- conn:
		case <-t.closing:
			_ = conn.Close()
			return
		}
	}
}

// readPackets reads datagrams into one reused buffer and hands memberlist
// an exact-length copy of each.
func (t *gossipTransport) readPackets() {
	defer t.wg.Done()
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := t.udp.ReadFromUDPAddrPort(buf)
		at := time.Now()
		if err != nil {
			if t.closed() {
				return
			}
			t.logf("[ERR] memberlist: Error reading UDP packet: %v", err)
			continue
		}
		if n == 0 {
			continue
		}
		gometrics.IncrCounterWithLabels([]string{"memberlist", "udp", "received"}, float32(n), t.labels)
		own := make([]byte, n)
		copy(own, buf)
		p := &memberlist.Packet{Buf: own, From: net.UDPAddrFromAddrPort(from), Timestamp: at}
		select {
		case t.packets <- p:
		case <-t.closing:
			return
		}
	}
}
