package scheduler

import (
	"context"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// NodeMonitors is how a scheduler calls node monitors' InternalService,
// each by its address. The daemon's implementation is a Thrift connection
// pool; package tests use an in-memory fake. Errors follow the pool's: an
// *rpc.DialError for a call never sent, rpc.ErrBusy for one put off, a
// Thrift UNKNOWN_METHOD application exception (rpc.IsUnknownMethod) for a
// method the peer lacks; any other error may come after the call was sent.
// Safe for concurrent use.
type NodeMonitors interface {
	EnqueueTaskReservations(ctx context.Context, addr string, req *sparrowrpc.TEnqueueTaskReservationsRequest) (bool, error)
	EnqueueTaskReservationsWithOffer(ctx context.Context, addr string, req *sparrowrpc.TEnqueueTaskReservationsRequest, offers []*sparrowrpc.TTaskLaunchSpec) (*sparrowrpc.TEnqueueOfferReply, error)
	CancelTaskReservations(ctx context.Context, addr string, req *sparrowrpc.TCancelTaskReservationsRequest) error
	OfferOutcome(ctx context.Context, addr, requestID, taskID string) (*sparrowrpc.TOfferOutcome, error)
	UpdateRemainingWork(ctx context.Context, addr string, updates []*sparrowrpc.TRemainingWork) error
	Close()
}

// Frontends is how a scheduler calls frontends' FrontendService, each by
// its address, with NodeMonitors' errors. Forget drops what is kept for
// addr (its connections), for a frontend that restarted or is gone. Safe
// for concurrent use.
type Frontends interface {
	FrontendMessage(ctx context.Context, addr string, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error
	Forget(addr string)
	Close()
}

// peers is how a scheduler calls its peers.
type peers struct {
	nodes  NodeMonitors
	fronts Frontends
}

// thriftNodes is NodeMonitors over a Thrift connection pool.
type thriftNodes struct {
	pool *rpc.Pool[*sparrowrpc.InternalServiceClient]
}

func newThriftNodes(cfg rpc.Config) thriftNodes {
	return thriftNodes{rpc.NewPool(cfg, sparrowrpc.NewInternalServiceClient)}
}

func (n thriftNodes) EnqueueTaskReservations(ctx context.Context, addr string, req *sparrowrpc.TEnqueueTaskReservationsRequest) (accepted bool, err error) {
	err = n.pool.Call(ctx, addr, func(ctx context.Context, c *sparrowrpc.InternalServiceClient) error {
		accepted, err = c.EnqueueTaskReservations(ctx, req)
		return err
	})
	return accepted, err
}

func (n thriftNodes) EnqueueTaskReservationsWithOffer(ctx context.Context, addr string, req *sparrowrpc.TEnqueueTaskReservationsRequest, offers []*sparrowrpc.TTaskLaunchSpec) (rep *sparrowrpc.TEnqueueOfferReply, err error) {
	err = n.pool.Call(ctx, addr, func(ctx context.Context, c *sparrowrpc.InternalServiceClient) error {
		rep, err = c.EnqueueTaskReservationsWithOffer(ctx, req, offers[0], offers[1:])
		return err
	})
	return rep, err
}

func (n thriftNodes) CancelTaskReservations(ctx context.Context, addr string, req *sparrowrpc.TCancelTaskReservationsRequest) error {
	return n.pool.Call(ctx, addr, func(ctx context.Context, c *sparrowrpc.InternalServiceClient) error {
		return c.CancelTaskReservations(ctx, req)
	})
}

func (n thriftNodes) OfferOutcome(ctx context.Context, addr, requestID, taskID string) (ans *sparrowrpc.TOfferOutcome, err error) {
	err = n.pool.Call(ctx, addr, func(ctx context.Context, c *sparrowrpc.InternalServiceClient) error {
		ans, err = c.OfferOutcome(ctx, requestID, taskID)
		return err
	})
	return ans, err
}

func (n thriftNodes) UpdateRemainingWork(ctx context.Context, addr string, updates []*sparrowrpc.TRemainingWork) error {
	return n.pool.Call(ctx, addr, func(ctx context.Context, c *sparrowrpc.InternalServiceClient) error {
		return c.UpdateRemainingWork(ctx, updates)
	})
}

func (n thriftNodes) Close() { n.pool.Close() }

// thriftFrontends is Frontends over a Thrift connection pool.
type thriftFrontends struct {
	pool *rpc.Pool[*sparrowrpc.ExtendedFrontendServiceClient]
}

func newThriftFrontends(cfg rpc.Config) thriftFrontends {
	return thriftFrontends{rpc.NewPool(cfg, sparrowrpc.NewExtendedFrontendServiceClient)}
}

func (f thriftFrontends) FrontendMessage(ctx context.Context, addr string, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error {
	return f.pool.Call(ctx, addr, func(ctx context.Context, c *sparrowrpc.ExtendedFrontendServiceClient) error {
		return c.FrontendMessage(ctx, taskID, status, message)
	})
}

func (f thriftFrontends) Forget(addr string) { f.pool.Forget(addr) }
func (f thriftFrontends) Close()             { f.pool.Close() }
