package rpc

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// ParseHostPort parses "host:port" into the wire's THostPort.
func ParseHostPort(s string) (*sparrowrpc.THostPort, error) {
	host, portStr, err := net.SplitHostPort(s)
	if err != nil {
		return nil, fmt.Errorf("address %q is not host:port: %w", s, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port <= 0 || port > 65535 {
		return nil, fmt.Errorf("address %q has a bad port", s)
	}
	if host == "" {
		return nil, fmt.Errorf("address %q has no host", s)
	}
	return &sparrowrpc.THostPort{Host: host, Port: int32(port)}, nil
}

// HostPortString formats a THostPort as "host:port"; nil gives "".
func HostPortString(hp *sparrowrpc.THostPort) string {
	if hp == nil {
		return ""
	}
	return net.JoinHostPort(hp.Host, strconv.Itoa(int(hp.Port)))
}

// Advertised returns the address peers should use for a listener bound to
// bound: the bound address, with a wildcard or empty host replaced by
// host.
func Advertised(bound, host string) string {
	h, p, err := net.SplitHostPort(bound)
	if err != nil {
		return bound
	}
	if h == "" || h == "0.0.0.0" || h == "::" {
		h = host
	}
	return net.JoinHostPort(h, p)
}

// AdvertiseHost picks the host a daemon advertises for its Thrift
// services: the explicit one if set, else the host of its gossip address.
func AdvertiseHost(explicit, gossip string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	h, _, err := net.SplitHostPort(gossip)
	if err != nil {
		return "", fmt.Errorf("gossip address %q: %w", gossip, err)
	}
	return h, nil
}

// RouteHost returns the local IP address the kernel would send from to
// reach addr ("host:port"): the address of this machine that addr's side
// of the network can call back. Connecting a UDP socket picks the route
// and sends nothing.
func RouteHost(ctx context.Context, addr string) (string, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", addr)
	if err != nil {
		return "", fmt.Errorf("no route to %s: %w", addr, err)
	}
	defer conn.Close()
	host, _, err := net.SplitHostPort(conn.LocalAddr().String())
	if err != nil {
		return "", fmt.Errorf("route to %s: %w", addr, err)
	}
	return host, nil
}
