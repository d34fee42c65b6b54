package pingpong

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// caller makes one getTask call on the server.
type caller interface {
	call(ctx context.Context) error
	close()
}

// dial opens a caller for mode to addr.
func dial(mode Mode, addr string) (caller, error) {
	switch mode {
	case Bare:
		conf := &thrift.TConfiguration{ConnectTimeout: 5 * time.Second, SocketTimeout: 10 * time.Second}
		sock := thrift.NewTSocketConf(addr, conf)
		if err := sock.Open(); err != nil {
			return nil, fmt.Errorf("ping-pong: connect to %s: %w", addr, err)
		}
		trans := thrift.NewTFramedTransportConf(sock, conf)
		c := sparrowrpc.NewGetTaskServiceClient(thrift.NewTStandardClient(
			thrift.NewTBinaryProtocolConf(trans, conf), thrift.NewTBinaryProtocolConf(trans, conf)))
		return &bareCaller{trans: trans, c: c}, nil
	case RPC:
		return &rpcCaller{addr: addr, pool: rpc.NewPool(rpc.Config{}, sparrowrpc.NewGetTaskServiceClient)}, nil
	}
	return nil, fmt.Errorf("unknown ping-pong mode %q", mode)
}

var nodeMonitor = &sparrowrpc.THostPort{Host: "127.0.0.1", Port: 20501}

type bareCaller struct {
	trans thrift.TTransport
	c     *sparrowrpc.GetTaskServiceClient
}

func (b *bareCaller) call(ctx context.Context) error {
	_, err := b.c.GetTask(ctx, "ping", nodeMonitor)
	return err
}

func (b *bareCaller) close() { b.trans.Close() }

type rpcCaller struct {
	addr string
	pool *rpc.Pool[*sparrowrpc.GetTaskServiceClient]
}

func (r *rpcCaller) call(ctx context.Context) error {
	return r.pool.Call(ctx, r.addr, func(ctx context.Context, c *sparrowrpc.GetTaskServiceClient) error {
		_, err := c.GetTask(ctx, "ping", nodeMonitor)
		return err
	})
}

func (r *rpcCaller) close() { r.pool.Close() }
