package procs

import (
	"net"
	"strings"
	"testing"
)

// TestTakenNamesTheHeldAddress: an address a fleet would bind, held by
// another listener, is named before any member starts, and FreeNet picks
// another network.
func TestTakenNamesTheHeldAddress(t *testing.T) {
	network, err := FreeNet(1, 1, 1)
	if err != nil {
		t.Skipf("cannot bind 127.0.0.0/8 loopback addresses: %v", err)
	}
	for _, tc := range []struct {
		name string
		hold string // address held, "" for none
		udp  bool
	}{
		{"all free", "", false},
		{"a node monitor's port", addr(network, 2, 0, 20502), false},
		{"a scheduler's gossip port, UDP only", addr(network, 1, 0, gossipPort), true},
		{"the driver's port", addr(network, 3, 0, 50201), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.hold != "" {
				if tc.udp {
					pc, err := net.ListenPacket("udp", tc.hold)
					if err != nil {
						t.Fatal(err)
					}
					defer pc.Close()
				} else {
					ln, err := net.Listen("tcp", tc.hold)
					if err != nil {
						t.Fatal(err)
					}
					defer ln.Close()
				}
			}
			err := taken(network, 1, 1, 1)
			switch {
			case tc.hold == "" && err != nil:
				t.Errorf("nothing held, got %v", err)
			case tc.hold != "" && (err == nil || !strings.Contains(err.Error(), tc.hold)):
				t.Errorf("holding %s, got %v", tc.hold, err)
			}
			if tc.hold == "" {
				return
			}
			other, err := FreeNet(1, 1, 1)
			if err != nil || other == network {
				t.Errorf("FreeNet = %q, %v: want a network other than %s", other, err, network)
			}
		})
	}
}
