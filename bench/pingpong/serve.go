package pingpong

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Mode names the stack a call goes through.
type Mode string

// The stacks measured.
const (
	Bare Mode = "bare" // the thrift library alone
	RPC  Mode = "rpc"  // internal/rpc's server and pool
)

// ParseMode returns the Mode named s.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Bare, RPC:
		return m, nil
	}
	return "", fmt.Errorf("unknown ping-pong mode %q (want %q or %q)", s, Bare, RPC)
}

// emptyGetTask answers every getTask and fetchTask with no task.
type emptyGetTask struct{}

func (emptyGetTask) GetTask(context.Context, string, *sparrowrpc.THostPort) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	return []*sparrowrpc.TTaskLaunchSpec{}, nil
}

func (emptyGetTask) FetchTask(context.Context, string, *sparrowrpc.THostPort, int64) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	return []*sparrowrpc.TTaskLaunchSpec{}, nil
}

func (emptyGetTask) TasksFinished(context.Context, *sparrowrpc.THostPort, []*sparrowrpc.TFullTaskId) error {
	return nil
}

// Serve answers getTask calls with stack mode on addr until ctx ends.
// ready is called with the bound address once calls can be made.
func Serve(ctx context.Context, mode Mode, addr string, ready func(bound string)) error {
	proc := sparrowrpc.NewGetTaskServiceProcessor(emptyGetTask{})
	switch mode {
	case Bare:
		sock, err := thrift.NewTServerSocket(addr)
		if err != nil {
			return fmt.Errorf("ping-pong server: listen on %s: %w", addr, err)
		}
		conf := &thrift.TConfiguration{}
		srv := thrift.NewTSimpleServer4(proc, sock,
			thrift.NewTFramedTransportFactoryConf(thrift.NewTTransportFactory(), conf),
			thrift.NewTBinaryProtocolFactoryConf(conf))
		if err := srv.Listen(); err != nil {
			return fmt.Errorf("ping-pong server: %w", err)
		}
		ready(sock.Addr().String())
		errc := make(chan error, 1)
		go func() { errc <- srv.AcceptLoop() }()
		select {
		case <-ctx.Done():
			// Stop waits for open connections to end; a client that
			// keeps one open must not keep the server from ending.
			stopped := make(chan struct{})
			go func() { srv.Stop(); close(stopped) }()
			select {
			case <-stopped:
			case <-time.After(2 * time.Second):
			}
			return nil
		case err := <-errc:
			return fmt.Errorf("ping-pong server: %w", err)
		}
	case RPC:
		srv, err := rpc.Listen(addr, rpc.Config{}, zerolog.Nop())
		if err != nil {
			return fmt.Errorf("ping-pong server: %w", err)
		}
		ready(srv.Addr())
		errc := make(chan error, 1)
		go func() { errc <- srv.Serve(proc) }()
		select {
		case <-ctx.Done():
			srv.Close()
			return nil
		case err := <-errc:
			return fmt.Errorf("ping-pong server: %w", err)
		}
	}
	return fmt.Errorf("unknown ping-pong mode %q", mode)
}
