package client

import (
	"context"
	"fmt"
	"net"

	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// AdvertiseAuto is the AdvertiseHost that picks the host schedulers call
// a frontend back on (AutoAdvertiseHost).
const AdvertiseAuto = "auto"

// AutoAdvertiseHost picks the host schedulers should call a frontend back
// on: 127.0.0.1 when every scheduler address is on loopback, else the
// local address of the interface that routes to the first scheduler not
// on loopback (through a load balancer, the balancer's address: its
// schedulers are on the same side of the network). A host name is
// resolved for the route.
func AutoAdvertiseHost(ctx context.Context, schedulers []string) (string, error) {
	target, err := firstRemote(schedulers)
	if err != nil {
		return "", err
	}
	if target == "" {
		return "127.0.0.1", nil
	}
	host, err := rpc.RouteHost(ctx, target)
	if err != nil {
		return "", fmt.Errorf("advertise host %s: %w; set AdvertiseHost", AdvertiseAuto, err)
	}
	return host, nil
}

// firstRemote returns the first scheduler address not on loopback, or ""
// when all are ("localhost" counts as loopback).
func firstRemote(schedulers []string) (string, error) {
	for _, s := range schedulers {
		h, _, err := net.SplitHostPort(s)
		if err != nil {
			return "", fmt.Errorf("scheduler address %q: %w", s, err)
		}
		if ip := net.ParseIP(h); h != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return s, nil
		}
	}
	return "", nil
}

// advertisedAddr is the FrontendService address given to schedulers for
// a listener bound to bound: bound, with a wildcard host replaced by
// host, which AdvertiseAuto or "" resolves (AutoAdvertiseHost), only when
// it is needed.
func advertisedAddr(ctx context.Context, bound, host string, schedulers []string) (string, error) {
	h, _, err := net.SplitHostPort(bound)
	if err != nil || (h != "" && !net.ParseIP(h).IsUnspecified()) {
		return bound, nil
	}
	if host == "" || host == AdvertiseAuto {
		if host, err = AutoAdvertiseHost(ctx, schedulers); err != nil {
			return "", err
		}
	}
	return rpc.Advertised(bound, host), nil
}
