"""Thrift plumbing: a threaded server for one service and a client pool.

The wire is the original Sparrow one: framed transport, binary protocol,
one service per listening port.
"""

import logging
import socket
import threading

from thrift.Thrift import TException
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from sparrowfleet.types import split_host_port

log = logging.getLogger("sparrowfleet")


class DialError(Exception):
    """Connecting failed: nothing was sent."""

    def __init__(self, addr, cause):
        self.addr = addr
        self.cause = cause
        super().__init__("connect to %s: %s" % (addr, cause))


class CallError(Exception):
    """The connection failed after the call was (perhaps) sent: no answer."""

    def __init__(self, addr, cause):
        self.addr = addr
        self.cause = cause
        super().__init__("call to %s: %s" % (addr, cause))


def advertised(bound, advertise_host):
    """The address to give peers for a listener bound to (host, port): a
    wildcard host is replaced by advertise_host."""
    host, port = bound[0], bound[1]
    if host in ("", "0.0.0.0", "::"):
        host = advertise_host
    if ":" in host:
        return "[%s]:%d" % (host, port)
    return "%s:%d" % (host, port)


class Server:
    """Serves processor on listen ("host:port"; port 0 picks a free one),
    one thread per connection, until close()."""

    def __init__(self, processor, listen, advertise_host, name):
        host, port = split_host_port(listen)
        self._processor = processor
        self._name = name
        self._sock = socket.create_server((host or "0.0.0.0", port), backlog=128)
        self.address = advertised(self._sock.getsockname(), advertise_host)
        self._lock = threading.Lock()
        self._conns = set()
        self._closed = False
        self._thread = threading.Thread(target=self._accept_loop, name=name + "-accept", daemon=True)
        self._thread.start()

    def _accept_loop(self):
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError as e:
                with self._lock:
                    if self._closed:
                        return
                log.warning("%s: accept failed: %s", self._name, e)
                continue
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                if self._closed:
                    conn.close()
                    return
                self._conns.add(conn)
            threading.Thread(target=self._serve, args=(conn,), name=self._name + "-conn", daemon=True).start()

    def _serve(self, conn):
        sock = TSocket.TSocket()
        sock.setHandle(conn)
        trans = TTransport.TFramedTransport(sock)
        prot = TBinaryProtocol.TBinaryProtocol(trans)
        try:
            while True:
                self._processor.process(prot, prot)
        except (TTransport.TTransportException, OSError, EOFError):
            pass  # the peer closed the connection, or close() did
        except Exception:  # a connection's failure must not end the server
            log.exception("%s: connection failed", self._name)
        finally:
            with self._lock:
                self._conns.discard(conn)
            conn.close()

    def close(self):
        """Stops accepting and closes every connection."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            conns = list(self._conns)
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept
        except OSError:
            pass
        self._sock.close()
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join()


class _Conn:
    def __init__(self, service, addr, connect_timeout, call_timeout):
        host, port = split_host_port(addr)
        sock = TSocket.TSocket(host or "127.0.0.1", port)
        sock.setTimeout(connect_timeout * 1000)
        try:
            sock.open()
        except (TTransport.TTransportException, OSError) as e:
            raise DialError(addr, e) from None
        sock.setTimeout(call_timeout * 1000)
        self.sock = sock
        self.client = service.Client(TBinaryProtocol.TBinaryProtocol(TTransport.TFramedTransport(sock)))

    def close(self):
        self.sock.close()


class Pool:
    """Client connections to peers of one service, reused while they work.
    Safe for concurrent use: each call has a connection of its own."""

    def __init__(self, service, connect_timeout, call_timeout, max_idle=4):
        self._service = service
        self._connect_timeout = connect_timeout
        self._call_timeout = call_timeout
        self._max_idle = max_idle
        self._lock = threading.Lock()
        self._idle = {}

    def call(self, addr, fn):
        """fn(client) on a connection to addr. Raises DialError if it could not
        connect, CallError if the connection failed after that, and the
        peer's own answer (a declared exception, TApplicationException) as
        is."""
        conn = None
        with self._lock:
            idle = self._idle.get(addr)
            if idle:
                conn = idle.pop()
        if conn is None:
            conn = _Conn(self._service, addr, self._connect_timeout, self._call_timeout)
        try:
            result = fn(conn.client)
        except (TTransport.TTransportException, OSError, EOFError) as e:
            conn.close()
            raise CallError(addr, e) from None
        except TException:
            self._release(addr, conn)  # the peer answered: the connection is sound
            raise
        except BaseException:
            conn.close()
            raise
        self._release(addr, conn)
        return result

    def _release(self, addr, conn):
        with self._lock:
            idle = self._idle.setdefault(addr, [])
            if len(idle) < self._max_idle:
                idle.append(conn)
                return
        conn.close()

    def forget(self, addr):
        """Closes the idle connections to addr."""
        with self._lock:
            idle = self._idle.pop(addr, [])
        for c in idle:
            c.close()

    def close(self):
        with self._lock:
            idle, self._idle = self._idle, {}
        for conns in idle.values():
            for c in conns:
                c.close()
