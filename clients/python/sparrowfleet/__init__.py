"""sparrowfleet: a Python client for a sparrowfleet (Sparrow) scheduler fleet.

Frontend submits jobs for an app and receives its tasks' messages; Executor
runs the tasks a node monitor launches. Both speak the original Sparrow
Thrift protocol (framed transport, binary protocol), with sparrowfleet's
additive extensions, through the module generated from
thrift/sparrow.thrift (sparrowfleet._gen.sparrowrpc).
"""

from sparrowfleet.errors import (
    InDoubtError,
    InvalidRequestError,
    RefusedError,
    RegistrationError,
    SaturatedError,
    SparrowError,
    UnknownAppError,
    UnplaceableError,
    UnreachableError,
    parse_retry_after,
)
from sparrowfleet.executor import Executor, LaunchedTask
from sparrowfleet.frontend import Frontend
from sparrowfleet.types import (
    STATUS_FAILED,
    STATUS_LOST,
    STATUS_OK,
    Constraint,
    Failover,
    Job,
    Message,
    Task,
    TaskRef,
    User,
)

__all__ = [
    "Constraint", "Executor", "Failover", "Frontend", "InDoubtError", "InvalidRequestError", "Job",
    "LaunchedTask", "Message", "RefusedError", "RegistrationError", "STATUS_FAILED", "STATUS_LOST",
    "STATUS_OK", "SaturatedError", "SparrowError", "Task", "TaskRef", "UnknownAppError",
    "UnplaceableError", "UnreachableError", "User", "parse_retry_after",
]
