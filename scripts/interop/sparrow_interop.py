#!/usr/bin/python3
"""Interoperability check: a Python Thrift client against sparrowfleet daemons.

Acts as both the frontend and the backend (executor) of one app, using only
the Python code generated from thrift/sparrow.thrift (thrift/gen-py) and the
Apache Thrift Python library, against a running `sparrow scheduler`
(SchedulerService) and `sparrow nodemonitor` (NodeMonitorService):

  1. serves BackendService (launchTask) and FrontendService (frontendMessage),
     each on its own port, framed transport + binary protocol;
  2. registerBackend(app, backend address) on the node monitor;
  3. registerFrontend(app, frontend address) on the scheduler;
  4. submitJob with N tasks, each with a distinct message, retrying while the
     scheduler has not yet learnt through gossip that the node monitor hosts
     the app;
  5. for every launchTask, from a worker thread (never inside the handler):
     sendFrontendMessage(app, taskId, 0, b"done:" + message) and then
     tasksFinished([taskId]) on the node monitor;
  6. waits for N frontendMessage calls and checks that every task launched
     exactly once with its own message and that every frontend message came
     back once with the right task id, status and body.

On success it prints one JSON line, {"launched": N, "messages": N, "ok": true},
and exits 0. On failure it prints {"ok": false, "error": ...} and exits 1
(2 for bad usage). Needs the Debian python3-thrift module (/usr/bin/python3).
"""

import argparse
import json
import os
import queue
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True  # do not litter the source tree with __pycache__
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "thrift", "gen-py"))

from thrift.protocol import TBinaryProtocol  # noqa: E402
from thrift.server import TServer  # noqa: E402
from thrift.transport import TSocket, TTransport  # noqa: E402

from sparrowrpc import BackendService, FrontendService, NodeMonitorService, SchedulerService  # noqa: E402
from sparrowrpc.ttypes import (  # noqa: E402
    IncompleteRequestException,
    TSchedulingRequest,
    TTaskSpec,
    TUserGroupInfo,
)

STATUS_APP = 0
NO_NODE_YET = "no live node monitor hosts app"


class Failure(Exception):
    """A check failed; the message says which."""


def split_addr(addr):
    host, sep, port = addr.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise argparse.ArgumentTypeError("%r is not host:port" % addr)
    return host.strip("[]"), int(port)


def log(verbose, *parts):
    if verbose:
        print("sparrow_interop:", *parts, file=sys.stderr, flush=True)


class Connection:
    """One framed, binary-protocol client connection to one service."""

    def __init__(self, service, addr, timeout_ms):
        host, port = addr
        sock = TSocket.TSocket(host, port)
        sock.setTimeout(timeout_ms)
        self.transport = TTransport.TFramedTransport(sock)
        self.client = service.Client(TBinaryProtocol.TBinaryProtocol(self.transport))
        self.transport.open()

    def close(self):
        self.transport.close()


class PreboundServerSocket(TSocket.TServerSocket):
    """A TServerSocket that binds at construction, so that the caller knows
    its port (port 0 picks a free one) before the server thread starts."""

    def __init__(self, host, port):
        super().__init__(host=host, port=port, socket_family=socket.AF_INET)
        super().listen()

    def listen(self):  # already listening
        pass

    def bound_port(self):
        return self.handle.getsockname()[1]


def serve(service, handler, host, name):
    """Serves service with handler on host:<free port> in a daemon thread and
    returns the "host:port" to advertise."""
    server_socket = PreboundServerSocket(host, 0)
    server = TServer.TThreadedServer(
        service.Processor(handler),
        server_socket,
        TTransport.TFramedTransportFactory(),
        TBinaryProtocol.TBinaryProtocolFactory(),
        daemon=True,
    )
    threading.Thread(target=server.serve, name=name, daemon=True).start()
    return "%s:%d" % (host, server_socket.bound_port())


def describe(tid):
    sched = tid.schedulerAddress
    where = "%s:%s" % (sched.host, sched.port) if sched is not None else None
    return {"taskId": tid.taskId, "requestId": tid.requestId, "appId": tid.appId, "scheduler": where}


class State:
    """What the handlers saw, guarded by one condition variable."""

    def __init__(self):
        self.cond = threading.Condition()
        self.launches = []  # (TFullTaskId, message, TUserGroupInfo)
        self.messages = []  # (TFullTaskId, status, message)
        self.errors = []  # errors from the worker thread


class BackendHandler(BackendService.Iface):
    def __init__(self, state, work, verbose):
        self.state, self.work, self.verbose = state, work, verbose

    def launchTask(self, message, taskId, user):
        log(self.verbose, "launchTask", describe(taskId), message)
        with self.state.cond:
            self.state.launches.append((taskId, message, user))
            self.state.cond.notify_all()
        # Report from another thread: the node monitor is waiting for this
        # call to return, and a real executor would run the task meanwhile.
        self.work.put((taskId, message))


class FrontendHandler(FrontendService.Iface):
    def __init__(self, state, verbose):
        self.state, self.verbose = state, verbose

    def frontendMessage(self, taskId, status, message):
        log(self.verbose, "frontendMessage", describe(taskId), status, message)
        with self.state.cond:
            self.state.messages.append((taskId, status, message))
            self.state.cond.notify_all()


def executor(work, state, app, nm_addr, timeout_ms, verbose):
    """Runs launched tasks: sends each one's frontend message through the
    node monitor, then reports it finished. Its own connection, as Thrift
    clients are not safe for concurrent use."""
    conn = None
    while True:
        item = work.get()
        if item is None:
            break
        tid, message = item
        try:
            if conn is None:
                conn = Connection(NodeMonitorService, nm_addr, timeout_ms)
            conn.client.sendFrontendMessage(app, tid, STATUS_APP, b"done:" + message)
            conn.client.tasksFinished([tid])
            log(verbose, "reported", tid.taskId)
        except Exception as e:  # recorded and reported by main
            if conn is not None:
                conn.close()
                conn = None
            with state.cond:
                state.errors.append("task %r: %s: %s" % (tid.taskId, type(e).__name__, e))
                state.cond.notify_all()
    if conn is not None:
        conn.close()


def submit(sched, req, deadline, verbose):
    """submitJob, retried while the scheduler does not yet know (by gossip)
    that a node monitor hosts the app. Returns the number of attempts."""
    attempts = 0
    while True:
        attempts += 1
        try:
            sched.submitJob(req)
            return attempts
        except IncompleteRequestException as e:
            if NO_NODE_YET not in (e.message or "") or time.monotonic() >= deadline:
                raise Failure("submitJob refused after %d attempt(s): %s" % (attempts, e.message))
            log(verbose, "submitJob refused, retrying:", e.message)
            time.sleep(0.05)  # retry backoff, not synchronisation


def verify(state, app, tasks):
    """Checks launches and messages against the submitted tasks."""
    with state.cond:
        launches = list(state.launches)
        messages = list(state.messages)
        errors = list(state.errors)
    if errors:
        raise Failure("executor calls failed: " + "; ".join(errors))
    want = dict(tasks)
    by_task = {}
    request_ids = set()
    for tid, message, user in launches:
        if tid.appId != app:
            raise Failure("launchTask for task %r named app %r, want %r" % (tid.taskId, tid.appId, app))
        if tid.taskId not in want:
            raise Failure("launchTask for unknown task %r" % (tid.taskId,))
        if message != want[tid.taskId]:
            raise Failure("task %r launched with message %r, want %r" % (tid.taskId, message, want[tid.taskId]))
        if tid.schedulerAddress is None or not tid.schedulerAddress.host or not tid.schedulerAddress.port:
            raise Failure("task %r launched without a scheduler address" % (tid.taskId,))
        if not tid.requestId:
            raise Failure("task %r launched without a request id" % (tid.taskId,))
        if user is None:
            raise Failure("task %r launched without user info" % (tid.taskId,))
        request_ids.add(tid.requestId)
        by_task.setdefault(tid.taskId, []).append(tid)
    for task_id in want:
        n = len(by_task.get(task_id, []))
        if n != 1:
            raise Failure("task %r launched %d times, want exactly once" % (task_id, n))
    if len(request_ids) != 1:
        raise Failure("tasks of one job launched under %d request ids: %s" % (len(request_ids), sorted(request_ids)))

    seen = {}
    for tid, status, message in messages:
        launched = by_task.get(tid.taskId)
        if not launched:
            raise Failure("frontendMessage for task %r, which was never launched (status %d, body %r)"
                          % (tid.taskId, status, message))
        if describe(tid) != describe(launched[0]):
            raise Failure("frontendMessage task id %s does not match the launched task id %s"
                          % (describe(tid), describe(launched[0])))
        if status != STATUS_APP:
            raise Failure("frontendMessage for task %r has status %d, want %d (body %r)"
                          % (tid.taskId, status, STATUS_APP, message))
        body = b"done:" + want[tid.taskId]
        if message != body:
            raise Failure("frontendMessage for task %r has body %r, want %r" % (tid.taskId, message, body))
        seen[tid.taskId] = seen.get(tid.taskId, 0) + 1
    for task_id in want:
        if seen.get(task_id, 0) != 1:
            raise Failure("task %r got %d frontend messages, want exactly one" % (task_id, seen.get(task_id, 0)))
    return len(launches), len(messages)


def run(args):
    deadline = time.monotonic() + args.timeout
    timeout_ms = int(args.rpc_timeout * 1000)
    state = State()
    work = queue.Queue()

    backend_addr = serve(BackendService, BackendHandler(state, work, args.verbose), args.listen_host, "backend")
    frontend_addr = serve(FrontendService, FrontendHandler(state, args.verbose), args.listen_host, "frontend")
    log(args.verbose, "backend at", backend_addr, "frontend at", frontend_addr)
    worker = threading.Thread(
        target=executor, args=(work, state, args.app, args.nodemonitor, timeout_ms, args.verbose),
        name="executor", daemon=True)
    worker.start()

    nm = Connection(NodeMonitorService, args.nodemonitor, timeout_ms)
    sched = Connection(SchedulerService, args.scheduler, timeout_ms)
    try:
        if not nm.client.registerBackend(args.app, backend_addr):
            raise Failure("node monitor refused registerBackend(%r, %r)" % (args.app, backend_addr))
        if not sched.client.registerFrontend(args.app, frontend_addr):
            raise Failure("scheduler refused registerFrontend(%r, %r)" % (args.app, frontend_addr))

        tasks = [("task-%d" % i, ("msg-%d-%s" % (i, args.app)).encode()) for i in range(args.tasks)]
        req = TSchedulingRequest(
            app=args.app,
            tasks=[TTaskSpec(taskId=tid, message=msg) for tid, msg in tasks],
            user=TUserGroupInfo(user="interop", group="interop", priority=0),
            description="python thrift interop check",
        )
        attempts = submit(sched.client, req, deadline, args.verbose)
        log(args.verbose, "job accepted after", attempts, "attempt(s)")

        with state.cond:
            while len(state.messages) < args.tasks and not state.errors:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Failure("timed out after %.1fs: %d/%d tasks launched, %d/%d frontend messages"
                                  % (args.timeout, len(state.launches), args.tasks, len(state.messages), args.tasks))
                state.cond.wait(left)
        # A quiet period to catch late duplicates (a task launched twice, a
        # message delivered twice); a quiescence window, not synchronisation.
        time.sleep(args.settle)
        launched, messages = verify(state, args.app, tasks)
        return {"launched": launched, "messages": messages, "ok": True, "submit_attempts": attempts}
    finally:
        work.put(None)
        nm.close()
        sched.close()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scheduler", type=split_addr, required=True, help="SchedulerService host:port")
    p.add_argument("--nodemonitor", type=split_addr, required=True, help="NodeMonitorService host:port")
    p.add_argument("--app", default="pyinterop", help="app name (default %(default)s)")
    p.add_argument("--tasks", type=int, default=3, help="tasks in the job (default %(default)s)")
    p.add_argument("--listen-host", default="127.0.0.1",
                   help="host the backend and frontend services bind and advertise (default %(default)s)")
    p.add_argument("--timeout", type=float, default=30.0, help="overall deadline in seconds (default %(default)s)")
    p.add_argument("--rpc-timeout", type=float, default=5.0, help="per-call socket timeout in seconds (default %(default)s)")
    p.add_argument("--settle", type=float, default=0.3,
                   help="seconds to keep listening for duplicates after the last message (default %(default)s)")
    p.add_argument("-v", "--verbose", action="store_true", help="log each call on stderr")
    args = p.parse_args(argv)
    if args.tasks < 1:
        p.error("--tasks must be at least 1")
    try:
        summary = run(args)
    except Exception as e:
        err = str(e) if isinstance(e, Failure) else "%s: %s" % (type(e).__name__, e)
        print("sparrow_interop: FAIL:", err, file=sys.stderr, flush=True)
        print(json.dumps({"ok": False, "error": err}), flush=True)
        return 1
    print(json.dumps(summary, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
