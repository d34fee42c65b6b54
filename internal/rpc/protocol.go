package rpc

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/thrift/lib/go/thrift"
)

// boundedProtocol refuses container headers that claim more elements than
// bytes remain in the current frame. Generated code allocates a slice of the
// claimed size before reading elements, so without this check a 20-byte
// frame could make the process allocate gigabytes.
//
// On the server side it also meters what decoding allocates (an estimate
// per struct, container element and byte field) and refuses a frame whose
// decoding would pass decodeFactor bytes per wire byte, so that the Budget
// a frame was charged really bounds its memory.
type boundedProtocol struct {
	thrift.TProtocol
	frame frameReader
	// left is the decoding allowance of the current frame; metered is
	// false on the client side, where replies come from our own peers.
	left    int64
	metered bool
	// made counts the calls a client writes; served counts the calls a
	// server reads, under their names when known has them (the service's
	// methods) and as OtherMethod otherwise, so a name from the wire
	// never becomes a label. Nil counts nothing.
	made, served *CallCounter
	known        map[string]thrift.TProcessorFunction
}

// frameReader is a transport that knows how much of the current frame is
// unread.
type frameReader interface {
	RemainingBytes() uint64
}

// Estimated allocation of decoded items, for the meter: a generated struct
// (every sparrowfleet struct fits a 64-byte size class), a container
// element's slot, and a string or binary field's header.
const (
	meterStruct  = 64
	meterElement = 16
	meterField   = 16
)

// ioBufferBytes sizes the buffer under each framed transport. Thrift's
// framed transport writes a frame's header and body separately; through a
// buffer they leave in one write, one syscall, which halves the syscalls
// of every call (they dominate CPU on the hot path).
const ioBufferBytes = 16 << 10

func init() {
	// Generated processors poll the connection every 5 ms during each call
	// to cancel the handler's context if the client goes away. sparrowfleet
	// handlers do not use that cancellation, and the polling cost ~4% of
	// CPU on the hot path.
	thrift.ServerConnectivityCheckInterval = 0
}

// newFramed wraps a socket for the Sparrow wire format: framed, over a
// write buffer.
func newFramed(sock thrift.TTransport, cfg *thrift.TConfiguration) *thrift.TFramedTransport {
	return thrift.NewTFramedTransportConf(thrift.NewTBufferedTransport(sock, ioBufferBytes), cfg)
}

// newProtocol is the client side's protocol: bounded, not metered.
func newProtocol(framed *thrift.TFramedTransport, cfg *thrift.TConfiguration) thrift.TProtocol {
	return newCallerProtocol(framed, cfg, nil)
}

// newCallerProtocol is newProtocol counting the calls it writes in made
// (nil: not counted).
func newCallerProtocol(framed *thrift.TFramedTransport, cfg *thrift.TConfiguration, made *CallCounter) *boundedProtocol {
	return &boundedProtocol{TProtocol: thrift.NewTBinaryProtocolConf(framed, cfg), frame: framed, made: made}
}

// newServerProtocol is a server connection's protocol over t, metered,
// counting the calls it reads in served (nil: not counted) by the names
// of proc's methods.
func newServerProtocol(t *serverTransport, cfg *thrift.TConfiguration, served *CallCounter, proc thrift.TProcessor) *boundedProtocol {
	p := &boundedProtocol{TProtocol: thrift.NewTBinaryProtocolConf(t, cfg), frame: t, metered: true, served: served}
	if served != nil {
		p.known = proc.ProcessorMap()
	}
	return p
}

// WriteMessageBegin implements thrift.TProtocol, counting a call sent.
func (p *boundedProtocol) WriteMessageBegin(ctx context.Context, name string, typ thrift.TMessageType, seq int32) error {
	if p.made != nil && (typ == thrift.CALL || typ == thrift.ONEWAY) {
		p.made.Add(name)
	}
	return p.TProtocol.WriteMessageBegin(ctx, name, typ, seq)
}

// ReadMessageBegin implements thrift.TProtocol, counting a call received.
func (p *boundedProtocol) ReadMessageBegin(ctx context.Context) (string, thrift.TMessageType, int32, error) {
	name, typ, seq, err := p.TProtocol.ReadMessageBegin(ctx)
	if err == nil && p.served != nil && (typ == thrift.CALL || typ == thrift.ONEWAY) {
		if _, ok := p.known[name]; ok {
			p.served.Add(name)
		} else {
			p.served.Add(OtherMethod)
		}
	}
	return name, typ, seq, err
}

// resetMeter starts the allowance of a frame of size bytes.
func (p *boundedProtocol) resetMeter(size int) {
	p.left = int64(size)*decodeFactor + decodeSlack
}

// charge spends n bytes of the frame's decoding allowance.
func (p *boundedProtocol) charge(what string, n int64) error {
	if !p.metered {
		return nil
	}
	p.left -= n
	if p.left < 0 {
		return thrift.NewTProtocolExceptionWithType(thrift.SIZE_LIMIT,
			fmt.Errorf("request refused: decoding it would take more than %d bytes of memory per wire byte (at a %s)", decodeFactor, what))
	}
	return nil
}

func (p *boundedProtocol) check(kind string, size int) error {
	if uint64(size) > p.frame.RemainingBytes() {
		return thrift.NewTProtocolExceptionWithType(thrift.SIZE_LIMIT,
			fmt.Errorf("%s claims %d elements but only %d bytes remain in the frame", kind, size, p.frame.RemainingBytes()))
	}
	return p.charge(kind, int64(size)*meterElement)
}

// ReadStructBegin implements thrift.TProtocol, metering the struct.
func (p *boundedProtocol) ReadStructBegin(ctx context.Context) (string, error) {
	if err := p.charge("struct", meterStruct); err != nil {
		return "", err
	}
	return p.TProtocol.ReadStructBegin(ctx)
}

// readExact reads a binary-protocol length-prefixed field into a slice of
// exactly its size. Thrift's own reader grows a bytes.Buffer to at least
// 512 bytes per field, so a frame of one-byte task messages cost ~360 bytes
// of memory per wire byte (about 1.5 GB for one 4 MiB frame); here the
// whole frame is already in memory, so the length can be checked against
// it and read in one exact allocation.
func (p *boundedProtocol) readExact(ctx context.Context, kind string) ([]byte, error) {
	size, err := p.TProtocol.ReadI32(ctx)
	if err != nil {
		return nil, err
	}
	if size < 0 {
		return nil, thrift.NewTProtocolExceptionWithType(thrift.NEGATIVE_SIZE, fmt.Errorf("%s length %d is negative", kind, size))
	}
	if uint64(size) > p.frame.RemainingBytes() {
		return nil, thrift.NewTProtocolExceptionWithType(thrift.SIZE_LIMIT,
			fmt.Errorf("%s claims %d bytes but only %d remain in the frame", kind, size, p.frame.RemainingBytes()))
	}
	if err := p.charge(kind, int64(size)+meterField); err != nil {
		return nil, err
	}
	buf := make([]byte, size)
	if _, err := io.ReadFull(p.TProtocol.Transport(), buf); err != nil {
		return nil, thrift.NewTProtocolException(err)
	}
	return buf, nil
}

// ReadBinary implements thrift.TProtocol with an exact allocation.
func (p *boundedProtocol) ReadBinary(ctx context.Context) ([]byte, error) {
	return p.readExact(ctx, "binary field")
}

// ReadString implements thrift.TProtocol with an exact allocation.
func (p *boundedProtocol) ReadString(ctx context.Context) (string, error) {
	b, err := p.readExact(ctx, "string field")
	return string(b), err
}

func (p *boundedProtocol) ReadListBegin(ctx context.Context) (thrift.TType, int, error) {
	t, size, err := p.TProtocol.ReadListBegin(ctx)
	if err == nil {
		err = p.check("list", size)
	}
	return t, size, err
}

func (p *boundedProtocol) ReadSetBegin(ctx context.Context) (thrift.TType, int, error) {
	t, size, err := p.TProtocol.ReadSetBegin(ctx)
	if err == nil {
		err = p.check("set", size)
	}
	return t, size, err
}

func (p *boundedProtocol) ReadMapBegin(ctx context.Context) (thrift.TType, thrift.TType, int, error) {
	k, v, size, err := p.TProtocol.ReadMapBegin(ctx)
	if err == nil {
		err = p.check("map", size)
	}
	return k, v, size, err
}
