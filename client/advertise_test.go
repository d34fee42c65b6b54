package client

import (
	"context"
	"strings"
	"testing"
)

// TestFirstRemote: the route is looked up to the first scheduler not on
// loopback; none is looked up when all are.
func TestFirstRemote(t *testing.T) {
	tests := []struct {
		schedulers []string
		want       string
		err        string
	}{
		{schedulers: []string{"127.0.0.1:20503", "localhost:1", "[::1]:2", "127.9.9.9:3"}},
		{schedulers: []string{"127.0.0.1:20503", "sched.example:20503", "10.0.0.1:20503"}, want: "sched.example:20503"},
		{schedulers: []string{"10.0.0.1:20503"}, want: "10.0.0.1:20503"},
		{schedulers: []string{"sched"}, err: `scheduler address "sched"`},
	}
	for _, tt := range tests {
		got, err := firstRemote(tt.schedulers)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("firstRemote(%v) = %q, %v; want %q, error %q", tt.schedulers, got, err, tt.want, tt.err)
		}
	}
}

// TestAdvertisedAddr: a listener on a specific host is advertised as it
// is; a wildcard one with the host given, or, for "auto" and unset, with
// 127.0.0.1 when every scheduler is on loopback.
func TestAdvertisedAddr(t *testing.T) {
	loop := []string{"127.0.0.1:20503"}
	tests := []struct {
		bound, host string
		want        string
	}{
		{bound: "127.0.3.5:50201", host: "10.1.1.1", want: "127.0.3.5:50201"},
		{bound: "[::]:50201", host: "10.1.1.1", want: "10.1.1.1:50201"},
		{bound: "0.0.0.0:50201", host: "fe.example", want: "fe.example:50201"},
		{bound: "[::]:50201", host: AdvertiseAuto, want: "127.0.0.1:50201"},
		{bound: "0.0.0.0:50201", host: "", want: "127.0.0.1:50201"},
	}
	for _, tt := range tests {
		got, err := advertisedAddr(context.Background(), tt.bound, tt.host, loop)
		if err != nil || got != tt.want {
			t.Errorf("advertisedAddr(%q, %q) = %q, %v; want %q", tt.bound, tt.host, got, err, tt.want)
		}
	}
	if _, err := advertisedAddr(context.Background(), "[::]:50201", "", []string{"no-port"}); err == nil {
		t.Error("auto with a malformed scheduler address: no error")
	}
}

// TestAutoAdvertiseHostRoutes: a scheduler on another loopback address is
// on loopback all the same; the route lookup itself is checked in rpc.
func TestAutoAdvertiseHostRoutes(t *testing.T) {
	if h, err := AutoAdvertiseHost(context.Background(), []string{"127.0.1.2:20503", "localhost:1"}); err != nil || h != "127.0.0.1" {
		t.Errorf("AutoAdvertiseHost on loopback = %q, %v; want 127.0.0.1", h, err)
	}
}
