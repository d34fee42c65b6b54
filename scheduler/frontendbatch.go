package scheduler

import (
	"context"
	"sync"

	"github.com/sparrowfleet/sparrow/internal/batch"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Messages to frontends that serve frontendMessages go in batches.
//
// A job whose TSchedulingRequest named its frontend's address and carried
// FRONTEND_MESSAGES in frontendFeatures has its messages sent to that
// address with frontendMessages: the messages that arrive for one address
// while a call to it is in flight go together in its next call, in the
// order they arrived, one call in flight per address. Every message still
// takes its own in-flight slot on the address's link before it is queued
// and gives it back with the call's outcome (frontendlink.go), so the
// link's bound, backoff, probes and deregistration see each message as
// they do when it is sent alone, and a batch holds at most the link's
// in-flight bound. Every other message is sent alone with frontendMessage,
// as to an original frontend. A frontend that answers frontendMessages
// with UNKNOWN_METHOD is sent that batch's messages one by one, in order,
// and every later message alone.

// FrontendBatches is implemented by Frontends that can call the
// extension frontendMessages. Frontends without it send every message
// alone.
type FrontendBatches interface {
	FrontendMessages(ctx context.Context, addr string, messages []*sparrowrpc.TFrontendMessage) error
}

func (f thriftFrontends) FrontendMessages(ctx context.Context, addr string, messages []*sparrowrpc.TFrontendMessage) error {
	return f.pool.Call(ctx, addr, func(ctx context.Context, c *sparrowrpc.ExtendedFrontendServiceClient) error {
		return c.FrontendMessages(ctx, messages)
	})
}

// frontendItem is one queued message and where its sender waits for the
// outcome.
type frontendItem struct {
	msg  *sparrowrpc.TFrontendMessage
	done chan error // buffered 1
}

// methodFrontendMessages is the extension's name, as rpc.Capabilities
// records it.
const methodFrontendMessages = "frontendMessages"

// frontendSender sends messages to frontends, batched where the frontend
// serves frontendMessages. Safe for concurrent use: caps and queue have
// their own locks, and the rest is set once.
//
// Lock contract: mu guards queued; no call is made under it.
type frontendSender struct {
	fronts  Frontends
	batches FrontendBatches // nil: every message goes alone
	queue   *batch.Batcher[string, frontendItem]
	caps    rpc.Capabilities // the addresses that answered frontendMessages UNKNOWN_METHOD

	mu     sync.Mutex
	queued int        // messages queued and not yet answered
	idle   *sync.Cond // on mu: queued fell to zero
}

func newFrontendSender(fronts Frontends) *frontendSender {
	f := &frontendSender{fronts: fronts}
	f.idle = sync.NewCond(&f.mu)
	f.batches, _ = fronts.(FrontendBatches)
	f.queue = batch.New(f.sendBatch)
	return f
}

// send delivers one message to addr and returns the call's error; batched
// says the message's job advertised frontendMessages.
func (f *frontendSender) send(addr string, batched bool, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error {
	if !f.batching(addr, batched) {
		return f.fronts.FrontendMessage(context.Background(), addr, taskID, status, message)
	}
	return f.sendTogether(addr, []*sparrowrpc.TFrontendMessage{{TaskId: taskID, Status: status, Message: message}})[0]
}

// batching reports whether messages of a job that advertised
// frontendMessages (batched) go to addr in batches.
func (f *frontendSender) batching(addr string, batched bool) bool {
	return batched && f.batches != nil && !f.caps.Lacks(addr, methodFrontendMessages)
}

// sendTogether queues msgs for addr in one batch, of a job that
// advertised frontendMessages, and returns each one's error once every one
// is answered.
func (f *frontendSender) sendTogether(addr string, msgs []*sparrowrpc.TFrontendMessage) []error {
	items := make([]frontendItem, len(msgs))
	for i, m := range msgs {
		items[i] = frontendItem{msg: m, done: make(chan error, 1)}
	}
	f.mu.Lock()
	f.queued += len(items)
	f.mu.Unlock()
	f.queue.SendAll(addr, items...)
	errs := make([]error, len(items))
	for i, it := range items {
		errs[i] = <-it.done
	}
	f.mu.Lock()
	f.queued -= len(items)
	if f.queued == 0 {
		f.idle.Broadcast()
	}
	f.mu.Unlock()
	return errs
}

// sendBatch sends one batch to addr and tells each message's sender the
// outcome.
func (f *frontendSender) sendBatch(addr string, items []frontendItem) {
	lacks := f.caps.Lacks(addr, methodFrontendMessages)
	var err error
	if !lacks {
		msgs := make([]*sparrowrpc.TFrontendMessage, len(items))
		for i, it := range items {
			msgs[i] = it.msg
		}
		err = f.batches.FrontendMessages(context.Background(), addr, msgs)
	}
	if lacks || rpc.IsUnknownMethod(err) {
		f.caps.MarkLacking(addr, methodFrontendMessages)
		for _, it := range items {
			it.done <- f.fronts.FrontendMessage(context.Background(), addr, it.msg.TaskId, it.msg.Status, it.msg.Message)
		}
		return
	}
	for _, it := range items {
		it.done <- err
	}
}

// forget drops what is known of addr, for a frontend that restarted
// there, perhaps with other extensions.
func (f *frontendSender) forget(addr string) { f.caps.Forget(addr) }

// wait returns once every queued message has been sent and answered,
// including those queued while it waits.
func (f *frontendSender) wait() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.queued > 0 {
		f.idle.Wait()
	}
}
