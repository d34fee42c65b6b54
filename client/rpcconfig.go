package client

import "github.com/sparrowfleet/sparrow/internal/rpc"

// RPCConfig bounds a frontend's or executor's Thrift connections: timeouts,
// frame size, connection caps and TLS (see docs/SECURITY.md). The zero
// value is the defaults. It is the fleet's own connection settings type,
// named here because the package that defines it is internal.
type RPCConfig = rpc.Config

// TLSFiles names the PEM files of a frontend's or executor's TLS
// identity; its Config, ServerConfig and ClientConfig methods build the
// *tls.Config for RPCConfig.TLS.
type TLSFiles = rpc.TLSFiles
