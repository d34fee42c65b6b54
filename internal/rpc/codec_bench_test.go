package rpc

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

func bigRequest(m int) *sparrowrpc.TSchedulingRequest {
	req := &sparrowrpc.TSchedulingRequest{App: "spark", User: &sparrowrpc.TUserGroupInfo{User: "u", Group: "g"}}
	for i := 0; i < m; i++ {
		req.Tasks = append(req.Tasks, &sparrowrpc.TTaskSpec{
			TaskId:     fmt.Sprint(i),
			Preference: &sparrowrpc.TPlacementPreference{},
			Message:    make([]byte, 100),
		})
	}
	return req
}

// BenchmarkEncodeSchedulingRequest500 and ...Decode...: the wire cost of a
// 500-task job with 100-byte task messages, binary protocol.
func BenchmarkEncodeSchedulingRequest500(b *testing.B) {
	req := bigRequest(500)
	buf := thrift.NewTMemoryBuffer()
	prot := thrift.NewTBinaryProtocolConf(buf, nil)
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := req.Write(context.Background(), prot); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

func BenchmarkDecodeSchedulingRequest500(b *testing.B) {
	buf := thrift.NewTMemoryBuffer()
	if err := bigRequest(500).Write(context.Background(), thrift.NewTBinaryProtocolConf(buf, nil)); err != nil {
		b.Fatal(err)
	}
	wire := append([]byte(nil), buf.Bytes()...)
	b.SetBytes(int64(len(wire)))
	b.ReportAllocs()
	for b.Loop() {
		in := thrift.NewTMemoryBufferLen(len(wire))
		in.Write(wire)
		var req sparrowrpc.TSchedulingRequest
		if err := req.Read(context.Background(), thrift.NewTBinaryProtocolConf(in, nil)); err != nil {
			b.Fatal(err)
		}
		if len(req.Tasks) != 500 {
			b.Fatal("short decode")
		}
	}
}
