package scheduler

import (
	"context"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// originalFrontend, embedded in a fake FrontendService, answers the
// extension frontendMessages as an original frontend does: with
// UNKNOWN_METHOD.
type originalFrontend struct{}

func (originalFrontend) FrontendMessages(context.Context, []*sparrowrpc.TFrontendMessage) error {
	return thrift.NewTApplicationException(thrift.UNKNOWN_METHOD, "Unknown function frontendMessages")
}
