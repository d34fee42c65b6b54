"""Frontend: submits jobs for one app and receives their tasks' messages.

The same semantics as the Go client's Frontend (client/frontend.go): it
serves FrontendService, registers with the first scheduler that answers,
tracks each job until every task has had a message, heartbeats its
scheduler with an empty job (the protocol's liveness check), fails over to
the next scheduler when one dies and reports the jobs in flight on it,
and moves off a draining scheduler without reporting the jobs it still
finishes.
"""

import dataclasses
import logging
import os
import threading
import time

from thrift.Thrift import TException

from sparrowfleet import _rpc
from sparrowfleet._gen.sparrowrpc import FrontendService, SchedulerService
from sparrowfleet._gen.sparrowrpc.ttypes import IncompleteRequestException, TSchedulingRequest
from sparrowfleet.errors import (
    InDoubtError,
    InvalidRequestError,
    SaturatedError,
    UnreachableError,
    refusal_error,
)
from sparrowfleet.types import Failover, Message, job_to_wire, ref_from_wire

# Defaults. The timeout is above the Go client's 100 ms: a Python process
# shares its interpreter between the RPC threads and the application's,
# and a scheduler taken for dead when it was only slow costs a failover.
DEFAULT_TIMEOUT = 1.0
DEFAULT_HEARTBEAT = 0.2
# Above the scheduler's default longest hold on a saturated fleet (30 s), so
# that a held call is answered, not taken for a failure.
DEFAULT_SUBMIT_TIMEOUT = 60.0

log = logging.getLogger("sparrowfleet.frontend")


class _JobState:
    __slots__ = ("job", "scheduler", "pending")

    def __init__(self, job, scheduler):
        self.job = job
        self.scheduler = scheduler
        self.pending = {t.id for t in job.tasks}


class Frontend:
    """Submits jobs of app to schedulers (addresses "host:port", tried in
    order) and passes every task message to on_message(Message), called on
    an RPC thread (keep it quick). Safe for concurrent use.

    listen is where its FrontendService listens (port 0: any free port);
    advertise_host replaces a wildcard host in the address given to
    schedulers. timeout (seconds) bounds connecting to and calling a
    scheduler, except for the answer to a submitted job, which a scheduler
    holds while its node monitors are full and which is waited for up to
    submit_timeout. heartbeat is how often an empty job checks the current
    scheduler (0 or less: never). on_failover(Failover), if set, is called
    after each failover. The constructor registers with a scheduler and
    raises UnreachableError if none answers.
    """

    def __init__(self, app, schedulers, on_message, *, listen="127.0.0.1:0", advertise_host="127.0.0.1",
                 timeout=DEFAULT_TIMEOUT, submit_timeout=DEFAULT_SUBMIT_TIMEOUT, heartbeat=DEFAULT_HEARTBEAT,
                 on_failover=None):
        if not app:
            raise ValueError("frontend: missing app")
        if isinstance(schedulers, str):
            schedulers = [schedulers]
        if not schedulers:
            raise ValueError("frontend: no scheduler addresses")
        if on_message is None:
            raise ValueError("frontend: on_message is required")
        self.app = app
        self.schedulers = list(schedulers)
        self._on_message = on_message
        self._on_failover = on_failover
        self._heartbeat_every = heartbeat
        self._pool = _rpc.Pool(SchedulerService, timeout, timeout)
        # Submits wait longer for their answer; heartbeats and registration
        # stay on _pool.
        self._submits = _rpc.Pool(SchedulerService, timeout, max(submit_timeout, timeout))
        self._prefix = os.urandom(6).hex()
        self._lock = threading.Lock()
        self._current = 0
        self._next_id = 0
        self._in_flight = {}
        # Set while a failover is under way; it is set() when it ends, so
        # concurrent callers that saw the same failure wait for it rather
        # than each failing over.
        self._failing = None
        # Schedulers moved off while they drained: the heartbeat pings each
        # while jobs submitted through it are in flight, and reports those
        # jobs as a failover would once it stops answering.
        self._draining = set()
        self._stop = threading.Event()
        self._server = _rpc.Server(FrontendService.Processor(_Handler(self)), listen, advertise_host,
                                   "sparrowfleet-frontend")
        self.address = self._server.address
        try:
            self._connect(0)
        except BaseException:
            self._server.close()
            raise
        self._heartbeat = None
        if heartbeat > 0:
            self._heartbeat = threading.Thread(target=self._heartbeat_loop, name="sparrowfleet-heartbeat",
                                               daemon=True)
            self._heartbeat.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def scheduler(self):
        """The scheduler the frontend currently uses."""
        with self._lock:
            return self.schedulers[self._current]

    def _connect(self, start):
        """Registers with the first scheduler, from index start and wrapping
        around, that answers; returns its index."""
        errors = []
        n = len(self.schedulers)
        for k in range(n):
            i = (start + k) % n
            addr = self.schedulers[i]
            try:
                ok = self._pool.call(addr, lambda c: c.registerFrontend(self.app, self.address))
            except (TException, _rpc.DialError, _rpc.CallError) as e:
                errors.append((addr, e))
                continue
            if not ok:
                errors.append((addr, "scheduler refused registration"))
                continue
            with self._lock:
                self._current = i
            log.info("frontend %s registered with scheduler %s", self.app, addr)
            return i
        raise UnreachableError(self.schedulers, errors)

    def submit(self, job):
        """Sends job to the current scheduler and returns its request id once a
        scheduler accepted it. A scheduler that cannot be reached is failed
        over and the next one tried. A refusal raises SaturatedError (with
        the suggested retry_after), UnknownAppError, UnplaceableError or
        InvalidRequestError; no scheduler answering raises
        UnreachableError; a scheduler that failed after the job was sent
        raises InDoubtError (and the job is reported to on_failover with
        the others). The caller's job is not changed: a job submitted
        again without a request id gets a new one. A draining scheduler's refusal moves the frontend to
        the next scheduler, where the job is submitted again."""
        if not job.tasks:
            raise InvalidRequestError("job has no tasks", job.request_id)
        job = dataclasses.replace(job)  # the request id made up here is this submission's
        with self._lock:
            if not job.request_id:
                self._next_id += 1
                job.request_id = "%s-%s-%d" % (self.app, self._prefix, self._next_id)
            if job.request_id in self._in_flight:
                raise InvalidRequestError("request id is already in flight", job.request_id)
        req = job_to_wire(job, self.app, self.address)
        for attempt in range(len(self.schedulers)):
            sched = self.scheduler
            self._track(job, sched)  # before sending: messages may come before the answer
            try:
                self._submits.call(sched, lambda c: c.submitJob(req))
                return job.request_id
            except IncompleteRequestException as refused:
                self.forget(job.request_id)
                err = refusal_error(sched, job.request_id, self.app, refused)
                if (isinstance(err, SaturatedError) and err.scheduler_draining
                        and attempt + 1 < len(self.schedulers)):
                    # Nothing of the job was accepted; the jobs the draining
                    # scheduler did accept stay its to finish.
                    try:
                        self._move_off(sched, err, failed=False)
                        continue
                    except UnreachableError:
                        pass
                raise err from None
            except _rpc.DialError as e:
                self.forget(job.request_id)
                try:
                    self._move_off(sched, e, failed=True)
                except UnreachableError as un:
                    un.request_id = job.request_id
                    raise
                continue
            except (TException, _rpc.CallError) as e:
                # Sent, then failed: the failover reports this job with the rest.
                try:
                    self._move_off(sched, e, failed=True)
                except UnreachableError:
                    pass
                raise InDoubtError(job.request_id, sched, e) from None
        raise UnreachableError(self.schedulers, request_id=job.request_id)

    def _track(self, job, sched):
        with self._lock:
            self._in_flight[job.request_id] = _JobState(job, sched)

    def forget(self, request_id):
        """Stops tracking a job, e.g. once the application knows it is done."""
        with self._lock:
            self._in_flight.pop(request_id, None)

    def in_flight(self):
        """The request ids of the jobs still in flight."""
        with self._lock:
            return list(self._in_flight)

    def _move_off(self, frm, cause, failed):
        """Makes the next scheduler that accepts the registration the current
        one, unless another thread already moved off frm or is doing so.
        With failed, frm is taken as dead and its jobs in flight are
        reported to on_failover; without, frm drains and still finishes
        the jobs it accepted."""
        detected = time.time()
        with self._lock:
            if self._failing is not None:
                wait = self._failing
            elif self.schedulers[self._current] != frm:
                return
            else:
                wait = None
                self._failing = threading.Event()
                start = (self._current + 1) % len(self.schedulers)
        if wait is not None:
            wait.wait()
            return
        try:
            if not failed:
                log.info("scheduler %s draining (%s); moving to the next", frm, cause)
                idx = self._connect(start)
                if self.schedulers[idx] != frm:
                    with self._lock:
                        self._draining.add(frm)
                return
            log.warning("scheduler %s failed (%s); failing over", frm, cause)
            idx = self._connect(start)
            self._report_gone(frm, self.schedulers[idx], cause, detected)
        finally:
            with self._lock:
                self._failing.set()
                self._failing = None

    def _report_gone(self, frm, to, cause, detected):
        """Tells on_failover that scheduler frm is gone, with the jobs still in
        flight through it, which stop being tracked."""
        self._pool.forget(frm)
        self._submits.forget(frm)
        jobs = []
        with self._lock:
            self._draining.discard(frm)
            for rid in [r for r, st in self._in_flight.items() if st.scheduler == frm]:
                jobs.append(self._in_flight.pop(rid).job)
        event = Failover(from_=frm, to=to, in_flight=jobs, error=cause, detected_at=detected,
                         reconnected=time.time())
        if self._on_failover is not None:
            try:
                self._on_failover(event)
            except Exception:
                log.exception("on_failover raised")

    def _ping(self, sched):
        ping = TSchedulingRequest(app=self.app, tasks=[])
        self._pool.call(sched, lambda c: c.submitJob(ping))

    def _watch_draining(self):
        """Pings each scheduler moved off while it drained: one with no job in
        flight any more is forgotten; one that stopped answering left
        before finishing its jobs, which are reported as a failover's."""
        with self._lock:
            busy = {st.scheduler for st in self._in_flight.values()}
            self._draining &= busy
            watch = list(self._draining)
        for sched in watch:
            try:
                self._ping(sched)
            except IncompleteRequestException:
                pass  # it answered
            except (TException, _rpc.DialError, _rpc.CallError) as e:
                log.warning("draining scheduler %s left with jobs in flight: %s", sched, e)
                self._report_gone(sched, self.scheduler, e, time.time())

    def _heartbeat_loop(self):
        while not self._stop.wait(self._heartbeat_every):
            sched = self.scheduler
            try:
                self._ping(sched)
            except IncompleteRequestException:
                pass  # it answered (a draining scheduler refuses even the empty job)
            except (TException, _rpc.DialError, _rpc.CallError) as e:
                try:
                    self._move_off(sched, e, failed=True)
                except UnreachableError as un:
                    log.error("no scheduler available; will keep trying: %s", un)
            self._watch_draining()

    def close(self):
        """Stops the heartbeat and the FrontendService."""
        self._stop.set()
        if self._heartbeat is not None:
            self._heartbeat.join()
        self._server.close()
        self._pool.close()
        self._submits.close()

    def _deliver(self, tid, status, body):
        msg = Message(task=ref_from_wire(tid), status=status, body=body or b"")
        with self._lock:
            st = self._in_flight.get(msg.task.request_id)
            if st is not None:
                st.pending.discard(msg.task.task_id)
                if not st.pending:
                    del self._in_flight[msg.task.request_id]
        self._on_message(msg)


class _Handler:
    """Serves FrontendService for a Frontend."""

    def __init__(self, frontend):
        self._frontend = frontend

    def frontendMessage(self, taskId, status, message):
        try:
            self._frontend._deliver(taskId, status, message)
        except Exception:
            log.exception("on_message raised")
