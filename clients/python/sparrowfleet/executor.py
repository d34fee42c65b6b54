"""Executor: runs the tasks its node monitor launches for one app.

The same semantics as the Go client's Backend (client/backend.go) and the
sleep executor (bench/executor): it serves BackendService, registers with
its node monitor and keeps trying until the node monitor answers, watches
the node monitor's port and registers again once it comes back from being
unreachable (a restarted node monitor has forgotten its executors), runs
each task on a thread pool, ends each task with one taskDone call (or the
original tasksFinished and sendFrontendMessage with a node monitor that
does not know taskDone), and drains on SIGTERM: it stops taking tasks and
lets running ones finish, for a bounded time.
"""

import logging
import signal
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from thrift.Thrift import TApplicationException, TException

from sparrowfleet import _rpc
from sparrowfleet._gen.sparrowrpc import BackendService, NodeMonitorService
from sparrowfleet.errors import RegistrationError
from sparrowfleet.types import (
    STATUS_FAILED,
    STATUS_OK,
    TaskRef,
    User,
    as_bytes,
    ref_from_wire,
    ref_to_wire,
    split_host_port,
)

DEFAULT_NODE_MONITOR = "127.0.0.1:20501"
DEFAULT_TIMEOUT = 5.0
DEFAULT_REGISTER_TIMEOUT = 120.0
DEFAULT_WATCH = 1.0
DEFAULT_DRAIN = 5.0

log = logging.getLogger("sparrowfleet.executor")


@dataclass
class LaunchedTask:
    """A task the node monitor launched here. cancelled is set when the
    executor closes before the task returned (a drain that ran out of
    time): a long task should check it and stop."""

    ref: TaskRef
    message: bytes
    user: User
    cancelled: threading.Event = field(default_factory=threading.Event, repr=False)


class ShuttingDown(Exception):
    """launchTask on an executor that drains or is closed."""


def registration_backoff(attempt):
    """The wait before registration attempt attempt+1: 100 ms doubling to 1 s."""
    return min(0.1 * (2 ** min(attempt, 5)), 1.0)


class Executor:
    """Runs tasks of app for the node monitor at node_monitor ("host:port").

    run(LaunchedTask) runs one task on a worker thread (at most workers at
    once; None: the thread pool's default): what it returns (bytes, str or
    None) becomes the task's STATUS_OK message to its frontend; an
    exception becomes a STATUS_FAILED message with its text. Either way the
    task is then reported finished. on_launch(LaunchedTask), if set, is
    called on the RPC thread for each launch, before run; keep it quick.

    listen is the BackendService address (port 0: any free port);
    advertise_host replaces a wildcard host in the address given to the
    node monitor. timeout (seconds) bounds each call to the node monitor.
    The constructor registers, trying again with backoff until the node
    monitor answers, and raises RegistrationError after register_timeout.
    Every watch seconds (0: never) it dials the node monitor's port, and
    registers again once the node monitor is back after being unreachable.
    drain is how long close_gracefully and serve_until_signal let running
    tasks finish.

    registrations counts the node monitor's accepted registrations, and
    node_monitor_reachable is what the last watch saw: both for
    monitoring.
    """

    def __init__(self, app, run, *, node_monitor=DEFAULT_NODE_MONITOR, listen="127.0.0.1:0",
                 advertise_host="127.0.0.1", workers=None, on_launch=None, timeout=DEFAULT_TIMEOUT,
                 register_timeout=DEFAULT_REGISTER_TIMEOUT, watch=DEFAULT_WATCH, drain=DEFAULT_DRAIN):
        if not app:
            raise ValueError("executor: missing app")
        if run is None:
            raise ValueError("executor: run is required")
        split_host_port(node_monitor)
        self.app = app
        self.node_monitor = node_monitor
        self._run = run
        self._on_launch = on_launch
        self._watch_every = watch
        self._drain = drain
        self._timeout = timeout
        self._nm = _rpc.Pool(NodeMonitorService, timeout, timeout)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sparrowfleet-task")
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._running = {}  # request id, task id -> LaunchedTask
        self._accepting = True
        self._no_task_done = False
        self._stop = threading.Event()
        self._closed = False
        self.registrations = 0
        self.node_monitor_reachable = True
        self._server = _rpc.Server(BackendService.Processor(_Handler(self)), listen, advertise_host,
                                   "sparrowfleet-executor")
        self.address = self._server.address
        try:
            self._register_until_answered(register_timeout)
        except BaseException:
            self._server.close()
            self._pool.shutdown(wait=False)
            raise
        self._watcher = None
        if watch > 0:
            self._watcher = threading.Thread(target=self._watch_loop, name="sparrowfleet-watch", daemon=True)
            self._watcher.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def draining(self):
        """Whether the executor has stopped taking tasks (drain or close)."""
        with self._lock:
            return not self._accepting

    @property
    def running(self):
        """How many tasks are running now."""
        with self._lock:
            return len(self._running)

    def register(self):
        """(Re-)registers with the node monitor once; raises on failure."""
        ok = self._nm.call(self.node_monitor, lambda c: c.registerBackend(self.app, self.address))
        if not ok:
            raise RegistrationError("node monitor %s refused the executor of app %r" % (self.node_monitor, self.app))
        with self._lock:
            self.registrations += 1

    def _register_until_answered(self, limit):
        # The node monitor may not be up yet (processes start in any
        # order): keep trying until it answers or the limit passes.
        deadline = time.monotonic() + limit
        last = None
        attempt = 0
        while True:
            try:
                self.register()
                log.info("executor of %s at %s registered with node monitor %s", self.app, self.address,
                         self.node_monitor)
                return
            except (TException, _rpc.DialError, _rpc.CallError, RegistrationError) as e:
                if last is None or str(e) != str(last):
                    log.info("node monitor %s not answering yet (%s); retrying", self.node_monitor, e)
                last = e
            wait = registration_backoff(attempt)
            attempt += 1
            if time.monotonic() + wait > deadline:
                raise RegistrationError("executor of app %r: no node monitor at %s accepted it within %gs: %s"
                                        % (self.app, self.node_monitor, limit, last))
            if self._stop.wait(wait):
                raise RegistrationError("executor of app %r closed before registering" % self.app)

    def _watch_loop(self):
        """Registers again when the node monitor comes back after being
        unreachable (a restart forgets registrations). It only dials the
        port: a live node monitor sees no traffic."""
        host, port = split_host_port(self.node_monitor)
        down = False
        while not self._stop.wait(self._watch_every):
            try:
                socket.create_connection((host or "127.0.0.1", port), timeout=self._watch_every).close()
            except OSError as e:
                if not down:
                    log.warning("node monitor %s unreachable: %s", self.node_monitor, e)
                    # Its connections died with it.
                    self._nm.forget(self.node_monitor)
                down = True
                self.node_monitor_reachable = False
                continue
            if not down:
                continue
            try:
                self.register()
            except (TException, _rpc.DialError, _rpc.CallError, RegistrationError) as e:
                log.warning("node monitor %s is back but re-registration failed (%s); retrying",
                            self.node_monitor, e)
                continue
            down = False
            self.node_monitor_reachable = True
            log.info("node monitor %s is back; re-registered", self.node_monitor)

    def finished(self, *refs):
        """Reports tasks done, freeing their slots (NodeMonitorService.tasksFinished)."""
        ids = [ref_to_wire(r) for r in refs]
        self._nm.call(self.node_monitor, lambda c: c.tasksFinished(ids))

    def send_frontend_message(self, ref, status, body):
        """Sends a message about a task to its job's frontend, through the node
        monitor and the task's scheduler."""
        body = as_bytes(body)
        self._nm.call(self.node_monitor, lambda c: c.sendFrontendMessage(ref.app, ref_to_wire(ref), status, body))

    def _launch(self, message, tid, user):
        if tid is None:
            raise ValueError("launchTask: missing task id")
        task = LaunchedTask(ref=ref_from_wire(tid), message=message or b"",
                            user=User(user.user or "", user.group or "", user.priority or 0) if user else User())
        key = (task.ref.request_id, task.ref.task_id)
        with self._lock:
            if not self._accepting:
                raise ShuttingDown("launchTask: executor of app %r is shutting down" % self.app)
            self._running[key] = task
        try:
            if self._on_launch is not None:
                self._on_launch(task)
            self._pool.submit(self._run_task, key, task)
        except BaseException:
            with self._lock:
                self._running.pop(key, None)
                self._idle.notify_all()
            raise

    def _run_task(self, key, task):
        try:
            status, body = STATUS_OK, as_bytes(self._run(task))
        except Exception as e:  # the task's failure is its message
            status, body = STATUS_FAILED, str(e).encode("utf-8", "replace") or type(e).__name__.encode()
        try:
            self._report(task.ref, status, body)
        finally:
            with self._lock:
                self._running.pop(key, None)
                self._idle.notify_all()

    def _report(self, ref, status, body):
        if not self._no_task_done:
            try:
                # One call frees the slot and then relays the message.
                self._nm.call(self.node_monitor,
                              lambda c: c.taskDone(ref.app, ref_to_wire(ref), status, body))
                return
            except TApplicationException as e:
                if e.type != TApplicationException.UNKNOWN_METHOD:
                    log.warning("taskDone of task %s failed: %s", ref.task_id, e)
                    self._finish_until_sent(ref)
                    return
                if not self._no_task_done:
                    log.info("node monitor has no taskDone; ending tasks with tasksFinished and "
                             "sendFrontendMessage")
                self._no_task_done = True
            except (TException, _rpc.DialError, _rpc.CallError) as e:
                # The call may have reached the node monitor or not. The
                # finished report is idempotent, so it is sent again; the
                # message is not, since it may have been relayed.
                log.warning("frontend message of task %s not sent: %s", ref.task_id, e)
                self._finish_until_sent(ref)
                return
        # The slot is freed first, then the message makes its hops.
        self._finish_until_sent(ref)
        try:
            self.send_frontend_message(ref, status, body)
        except (TException, _rpc.DialError, _rpc.CallError) as e:
            log.warning("frontend message of task %s not sent: %s", ref.task_id, e)

    def _finish_until_sent(self, ref):
        """tasksFinished for ref, sent again with backoff until it is sent or
        the executor closes: a report not sent leaves its slot taken."""
        attempt = 0
        while True:
            try:
                self.finished(ref)
                return
            except (TException, _rpc.DialError, _rpc.CallError) as e:
                if attempt == 0:
                    log.warning("could not report task %s finished (%s); retrying", ref.task_id, e)
            if self._stop.wait(registration_backoff(attempt)):
                log.error("task %s not reported finished before close", ref.task_id)
                return
            attempt += 1

    def drain(self, timeout=None):
        """Stops taking tasks (launchTask is refused from now on) and waits,
        at most timeout seconds (None: the executor's drain), for the
        running tasks to finish and be reported. Returns whether they all
        did."""
        if timeout is None:
            timeout = self._drain
        deadline = time.monotonic() + timeout
        with self._lock:
            self._accepting = False
            log.info("draining executor of %s: %d tasks running", self.app, len(self._running))
            while self._running:
                left = deadline - time.monotonic()
                if left <= 0:
                    log.warning("drain timed out with %d tasks running", len(self._running))
                    return False
                self._idle.wait(left)
        return True

    def close(self):
        """Stops serving and watching; tasks still running have their
        cancelled event set and are not waited for."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._accepting = False
            for task in self._running.values():
                task.cancelled.set()
        self._stop.set()
        self._server.close()
        if self._watcher is not None:
            self._watcher.join()
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._nm.close()

    def close_gracefully(self, timeout=None):
        """drain(timeout), then close(). Returns whether every running task
        finished in time."""
        done = self.drain(timeout)
        self.close()
        return done

    def serve_until_signal(self, signals=(signal.SIGTERM, signal.SIGINT)):
        """Serves until one of signals arrives, then drains (for the
        executor's drain at most) and closes. Call it from the main thread.
        Returns whether every running task finished in time."""
        got = threading.Event()
        previous = {s: signal.signal(s, lambda signum, frame: got.set()) for s in signals}
        try:
            while not got.wait(1.0):
                pass
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
        log.info("signal received; draining")
        return self.close_gracefully()


class _Handler:
    """Serves BackendService for an Executor."""

    def __init__(self, executor):
        self._executor = executor

    def launchTask(self, message, taskId, user):
        self._executor._launch(message, taskId, user)
