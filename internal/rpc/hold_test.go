package rpc

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// A held connection lasts while the server runs, ends when the server
// closes, and gives a DialError where nothing listens or ctx's error
// when ctx ends.
func TestPoolHold(t *testing.T) {
	held := func(t *testing.T, p interface {
		Hold(context.Context, string, func()) error
	}, ctx context.Context, addr string) (opened chan struct{}, ended chan error) {
		opened, ended = make(chan struct{}), make(chan error, 1)
		go func() { ended <- p.Hold(ctx, addr, func() { close(opened) }) }()
		select {
		case <-opened:
		case err := <-ended:
			t.Fatalf("hold ended before it opened: %v", err)
		case <-time.After(waitTimeout):
			t.Fatal("hold did not open")
		}
		return opened, ended
	}
	wait := func(t *testing.T, ended chan error) error {
		select {
		case err := <-ended:
			return err
		case <-time.After(waitTimeout):
			t.Fatal("hold did not end")
			return nil
		}
	}
	t.Run("ends when the server closes", func(t *testing.T) {
		srv, _ := startFrontend(t, Config{})
		p := newFrontendPool(t, Config{})
		_, ended := held(t, p, context.Background(), srv.Addr())
		select {
		case err := <-ended:
			t.Fatalf("hold ended while the server ran: %v", err)
		case <-time.After(50 * time.Millisecond): // a quiet stretch; the hold must not end in it
		}
		srv.Close()
		err := wait(t, ended)
		var de *DialError
		if err == nil || errors.As(err, &de) || errors.Is(err, context.Canceled) {
			t.Fatalf("hold ended with %v; want the connection's end", err)
		}
	})
	t.Run("ends with ctx", func(t *testing.T) {
		srv, _ := startFrontend(t, Config{})
		p := newFrontendPool(t, Config{})
		ctx, cancel := context.WithCancel(context.Background())
		_, ended := held(t, p, ctx, srv.Addr())
		cancel()
		if err := wait(t, ended); !errors.Is(err, context.Canceled) {
			t.Fatalf("hold ended with %v; want context.Canceled", err)
		}
	})
	t.Run("nothing listens", func(t *testing.T) {
		addr := closedAddr(t)
		p := newFrontendPool(t, Config{ConnectTimeout: waitTimeout})
		err := p.Hold(context.Background(), addr, func() { t.Error("opened a connection to a closed port") })
		var de *DialError
		if !errors.As(err, &de) {
			t.Fatalf("hold of a closed port: %v; want a *DialError", err)
		}
	})
}

// closedAddr is a loopback address that was just free: nothing listens
// there.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
