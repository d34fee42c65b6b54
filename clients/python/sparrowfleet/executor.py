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

It also serves the extensions of ExtendedBackendService and says so when it
registers (registerBackendWithFeatures), as the Go client does: a launch
that waits briefly for its task and answers with the task's end, which then
needs no call of its own (launchTaskAndWait), and several such launches in
one call (launchTasksAndWait). A node monitor without
registerBackendWithFeatures gets the original registerBackend, and then
calls only launchTask.
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
from sparrowfleet._gen.sparrowrpc import ExtendedBackendService, NodeMonitorService
from sparrowfleet._gen.sparrowrpc.constants import BACKEND_LAUNCH_AND_WAIT, BACKEND_LAUNCH_BATCH
from sparrowfleet._gen.sparrowrpc.ttypes import TLaunchReply
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
# MAX_LAUNCH_WAIT bounds, in seconds, how long a launch call waits for its
# tasks to end, whatever the node monitor asks.
MAX_LAUNCH_WAIT = 0.1
# FEATURES are the extensions the executor serves, as
# registerBackendWithFeatures' bits.
FEATURES = BACKEND_LAUNCH_AND_WAIT | BACKEND_LAUNCH_BATCH

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


class _Handoff:
    """Where a task's end goes first: to the launch call waiting for it, if
    that call still waits when the task ends. Exactly one of the two, the
    waiting call or the task's own report, carries the end."""

    def __init__(self):
        self._cv = threading.Condition()
        self._end = None  # (status, body) once handed over
        self._abandoned = False

    def finish(self, status, body):
        """Hands the end to the waiting call; False if it stopped waiting,
        and the task must then report itself."""
        with self._cv:
            if self._abandoned:
                return False
            self._end = (status, body)
            self._cv.notify_all()
            return True

    def abandon(self):
        """No call waits: the task reports itself."""
        with self._cv:
            self._abandoned = True

    def wait(self, deadline, stop):
        """The end, if the task ends before deadline (time.monotonic()) and
        stop is not set; else None, and the task reports itself."""
        with self._cv:
            while self._end is None:
                left = deadline - time.monotonic()
                if left <= 0 or stop.is_set():
                    self._abandoned = True
                    return None
                self._cv.wait(left)
            return self._end


def _reply(hand, deadline, stop):
    """The TLaunchReply for the task behind hand (None: not waited for)."""
    end = hand.wait(deadline, stop) if hand is not None else None
    if end is None:
        return TLaunchReply(done=False)
    return TLaunchReply(done=True, status=end[0], message=end[1])


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
    monitoring. features is what the last registration offered the node
    monitor: FEATURES, or 0 once a node monitor without
    registerBackendWithFeatures has been found. launch_calls counts the
    node monitor's launch calls by method.
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
        self.features = FEATURES
        self.launch_calls = {"launchTask": 0, "launchTaskAndWait": 0, "launchTasksAndWait": 0}
        self._stop = threading.Event()
        self._closed = False
        self.registrations = 0
        self.node_monitor_reachable = True
        self._server = _rpc.Server(ExtendedBackendService.Processor(_Handler(self)), listen, advertise_host,
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
        """(Re-)registers with the node monitor once, with the extensions it
        serves (registerBackendWithFeatures), or with the original
        registerBackend to a node monitor without that method; raises on
        failure."""
        ok = None
        if self.features:
            try:
                ok = self._nm.call(self.node_monitor,
                                   lambda c: c.registerBackendWithFeatures(self.app, self.address, self.features))
            except TApplicationException as e:
                if e.type != TApplicationException.UNKNOWN_METHOD:
                    raise
                log.info("node monitor %s has no registerBackendWithFeatures; registering with registerBackend",
                         self.node_monitor)
                self.features = 0
        if not self.features:
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

    def _task(self, method, message, tid, user):
        """The LaunchedTask a launch call names; raises ValueError if it names none."""
        if tid is None or not tid.taskId:
            raise ValueError("%s: missing task id" % method)
        return LaunchedTask(ref=ref_from_wire(tid), message=message or b"",
                            user=User(user.user or "", user.group or "", user.priority or 0) if user else User())

    def _launch(self, method, items, wait_micros=0):
        """Launches the tasks of items ((message, taskId, user) each) and
        returns their handoffs (None each when not waiting). Every item is
        checked, and all are taken under one hold of the lock, so a malformed
        batch, or one that finds the executor draining, launches none."""
        tasks = [self._task(method, *item) for item in items]
        hands = [_Handoff() if wait_micros > 0 else None for _ in tasks]
        keys = [(t.ref.request_id, t.ref.task_id) for t in tasks]
        with self._lock:
            self.launch_calls[method] += 1
            if not self._accepting:
                raise ShuttingDown("%s: executor of app %r is shutting down" % (method, self.app))
            for key, task in zip(keys, tasks):
                self._running[key] = task
        for i, (key, task, hand) in enumerate(zip(keys, tasks, hands)):
            try:
                if self._on_launch is not None:
                    self._on_launch(task)
                self._pool.submit(self._run_task, key, task, hand)
            except BaseException:
                with self._lock:
                    for k in keys[i:]:
                        self._running.pop(k, None)
                    self._idle.notify_all()
                # The call fails, so nothing waits for the tasks already
                # running: they report themselves.
                for h in hands[:i]:
                    if h is not None:
                        h.abandon()
                raise
        return hands

    def _run_task(self, key, task, hand=None):
        try:
            status, body = STATUS_OK, as_bytes(self._run(task))
        except Exception as e:  # the task's failure is its message
            status, body = STATUS_FAILED, str(e).encode("utf-8", "replace") or type(e).__name__.encode()
        try:
            if hand is None or not hand.finish(status, body):
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
        self._executor._launch("launchTask", [(message, taskId, user)])

    def launchTaskAndWait(self, message, taskId, user, waitMicros):
        """launchTask, then a wait of up to waitMicros (at most
        MAX_LAUNCH_WAIT) for the task to end: an end within it is the
        answer, and is reported no other way."""
        ex = self._executor
        deadline = time.monotonic() + _wait_seconds(waitMicros)
        (hand,) = ex._launch("launchTaskAndWait", [(message, taskId, user)], waitMicros or 0)
        return _reply(hand, deadline, ex._stop)

    def launchTasksAndWait(self, tasks, waitMicros):
        """launchTaskAndWait for each of tasks, all launched before any is
        waited for, under one wait from the call's start; one TLaunchReply
        per task, in order."""
        ex = self._executor
        deadline = time.monotonic() + _wait_seconds(waitMicros)
        items = []
        for i, t in enumerate(tasks or []):
            if t is None:
                raise ValueError("launchTasksAndWait: task %d is missing" % i)
            items.append((t.message, t.taskId, t.user))
        hands = ex._launch("launchTasksAndWait", items, waitMicros or 0)
        return [_reply(hand, deadline, ex._stop) for hand in hands]


def _wait_seconds(wait_micros):
    """How long a launch call waits: waitMicros, at most MAX_LAUNCH_WAIT."""
    return min(max(wait_micros or 0, 0) / 1e6, MAX_LAUNCH_WAIT)
