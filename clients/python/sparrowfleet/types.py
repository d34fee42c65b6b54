"""What applications hand to and receive from the fleet, and their wire form."""

from dataclasses import dataclass, field
from typing import List, Optional

from sparrowfleet._gen.sparrowrpc import constants
from sparrowfleet._gen.sparrowrpc.ttypes import (
    TConstraint,
    TFullTaskId,
    THostPort,
    TPlacementPreference,
    TSchedulingRequest,
    TTaskSpec,
    TUserGroupInfo,
)

# Status codes the fleet itself uses in frontend messages. Applications use
# their own codes, which sparrowfleet never interprets.
STATUS_OK = constants.STATUS_APP
STATUS_LOST = constants.STATUS_TASK_LOST
STATUS_FAILED = constants.STATUS_TASK_FAILED

_MAX_I32 = 2**31 - 1


@dataclass
class Task:
    """One task of a job. id must be unique within the job; message is passed,
    opaque, to the executor that runs it (str is sent as UTF-8). nodes and
    racks restrict where it runs (empty: anywhere); a positive
    delay_threshold (seconds) lets the scheduler relax them after that long;
    input_bytes prices moving it off its preferred nodes."""

    id: str
    message: bytes = b""
    nodes: List[str] = field(default_factory=list)
    racks: List[str] = field(default_factory=list)
    delay_threshold: float = 0.0
    input_bytes: int = 0


@dataclass
class User:
    """On whose behalf a job runs, for fair sharing and priorities (a smaller
    priority is served first)."""

    name: str = ""
    group: str = ""
    priority: int = 0


@dataclass
class Constraint:
    """Restricts every task of a job to node monitors whose attribute key
    satisfies op: "=" (one of values), "!=" (none of values, or absent) or
    "exists"."""

    key: str
    op: str
    values: List[str] = field(default_factory=list)


@dataclass
class Job:
    """A set of tasks scheduled together. request_id identifies the job in
    messages; the Frontend makes one up when it is empty. probe_ratio above
    zero overrides the scheduler's d; task_seconds above zero is the job's
    estimated mean task duration, for schedulers run with --short-jobs."""

    tasks: List[Task]
    request_id: str = ""
    user: User = field(default_factory=User)
    probe_ratio: float = 0.0
    description: str = ""
    constraints: List[Constraint] = field(default_factory=list)
    task_seconds: float = 0.0


@dataclass(frozen=True)
class TaskRef:
    """A launched task, as the fleet names it; scheduler is the
    SchedulerService address that placed it."""

    task_id: str
    request_id: str
    app: str
    scheduler: str = ""


@dataclass
class Message:
    """A task message delivered to a frontend: status STATUS_OK (or the
    application's own code) from the executor, STATUS_LOST or STATUS_FAILED
    from the fleet."""

    task: TaskRef
    status: int
    body: bytes


@dataclass
class Failover:
    """The frontend moved from scheduler from_ to to. in_flight are the jobs
    submitted through from_ whose tasks had not all reported back: their
    messages will not arrive (unless from_ was only slow), so the
    application resubmits them (as new jobs), ignores them or checks them.
    detected_at and reconnected are time.time() values."""

    from_: str
    to: str
    in_flight: List[Job]
    error: Optional[BaseException]
    detected_at: float
    reconnected: float


def as_bytes(value):
    """value as bytes: bytes unchanged, str as UTF-8, None as empty."""
    if value is None:
        return b""
    if isinstance(value, str):
        return value.encode("utf-8")
    return bytes(value)


def split_host_port(addr):
    """(host, port) of "host:port" ("" host for ":port"); ValueError names a
    bad address."""
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError("address %r is not host:port" % (addr,))
    return host.strip("[]"), int(port)


def ref_from_wire(tid):
    if tid is None:
        return TaskRef("", "", "")
    sched = ""
    hp = tid.schedulerAddress
    if hp is not None and hp.host is not None:
        sched = "%s:%d" % (hp.host, hp.port or 0)
    return TaskRef(tid.taskId or "", tid.requestId or "", tid.appId or "", sched)


def ref_to_wire(ref):
    hp = None
    if ref.scheduler:
        host, port = split_host_port(ref.scheduler)
        hp = THostPort(host=host, port=port)
    return TFullTaskId(taskId=ref.task_id, requestId=ref.request_id, appId=ref.app, schedulerAddress=hp)


def job_to_wire(job, app, frontend_address=None):
    """The TSchedulingRequest for job of app; frontend_address, when given,
    names the FrontendService that receives its messages (field 9)."""
    tasks = []
    for t in job.tasks:
        pref = TPlacementPreference(
            nodes=list(t.nodes), racks=list(t.racks),
            delayThreshold=min(int(t.delay_threshold * 1000), _MAX_I32) if t.delay_threshold > 0 else 0)
        if t.input_bytes > 0:
            pref.inputBytes = int(t.input_bytes)
        tasks.append(TTaskSpec(taskId=t.id, preference=pref, message=as_bytes(t.message)))
    req = TSchedulingRequest(
        app=app, tasks=tasks,
        user=TUserGroupInfo(user=job.user.name, group=job.user.group, priority=job.user.priority))
    if job.probe_ratio > 0:
        req.probeRatio = float(job.probe_ratio)
    if job.task_seconds > 0:
        req.taskSeconds = float(job.task_seconds)
    if job.description:
        req.description = job.description
    if job.request_id:
        req.requestId = job.request_id
    if job.constraints:
        req.constraints = [TConstraint(key=c.key, op=c.op, values=list(c.values)) for c in job.constraints]
    if frontend_address:
        req.frontendAddress = frontend_address
    return req
