"""Typed errors of a submission, and how a scheduler's refusal maps to them.

A scheduler refuses a job whole with an IncompleteRequestException. Newer
schedulers say why in its ``code`` (one of the REFUSAL_* constants) and, for
a saturated or draining fleet, suggest a delay in ``retryAfterMs``; older
ones carry only a message, which is then classified by its text exactly as
the Go client (client/errors.go) does. Nothing of a refused job was
scheduled, so submitting it again, even under the same request id, cannot
run a task twice.
"""

import math
import re

from sparrowfleet._gen.sparrowrpc import constants

# In every refusal of a scheduler that drains (its text, for schedulers
# that send no code).
DRAINING_REFUSAL = "this scheduler is shutting down"

# The longest suggested delay honoured: a garbled or hostile message must
# not park a job for hours.
MAX_SUGGESTED_SECONDS = 300.0


class SparrowError(Exception):
    """Every error this package raises."""


class RefusedError(SparrowError):
    """A job a scheduler (or the frontend itself, before sending) refused.

    request_id is the job's id ("" if it had none yet); scheduler the
    refusing scheduler ("" when the frontend refused it before sending);
    message the scheduler's own words (or the frontend's reason).
    """

    def __init__(self, message, request_id="", scheduler=""):
        self.request_id = request_id
        self.scheduler = scheduler
        self.message = message
        ident = " " + request_id if request_id else ""
        if scheduler:
            text = "submit%s: refused by scheduler %s: %s" % (ident, scheduler, message)
        else:
            text = "submit%s: %s" % (ident, message)
        super().__init__(text)


class SaturatedError(RefusedError):
    """The fleet stayed full past the scheduler's hold bounds.

    retry_after is the delay in seconds the scheduler suggested (0: none):
    submit again no sooner. scheduler_draining says the refusing scheduler
    is shutting down rather than out of capacity; a Frontend with another
    scheduler has already moved to it and submitted there before raising
    this.
    """

    def __init__(self, message, request_id="", scheduler="", retry_after=0.0, scheduler_draining=False):
        super().__init__(message, request_id, scheduler)
        self.retry_after = retry_after
        self.scheduler_draining = scheduler_draining


class UnknownAppError(RefusedError):
    """No live node monitor hosts the app: no executor of it registered, or
    all of them are gone. Submitting again succeeds once one has registered
    and the scheduler has heard of it through gossip."""

    def __init__(self, message, request_id="", scheduler="", app=""):
        super().__init__(message, request_id, scheduler)
        self.app = app


class UnplaceableError(RefusedError):
    """Node monitors host the app, but no live one satisfies the job's
    constraints, or a task's preferred nodes are all gone."""


class InvalidRequestError(RefusedError):
    """The request is malformed (no tasks, a duplicate task id, a request id
    in use, a bad constraint or probe ratio, over a size limit): submitting
    it again unchanged is refused again."""


class UnreachableError(SparrowError):
    """No configured scheduler answered; nothing was sent.

    request_id is the job being submitted ("" when registering); schedulers
    the addresses tried; errors each one's failure, as (address, exception).
    """

    def __init__(self, schedulers, errors=(), request_id=""):
        self.request_id = request_id
        self.schedulers = list(schedulers)
        self.errors = list(errors)
        text = "no scheduler answered"
        if request_id:
            text = "submit %s: %s" % (request_id, text)
        if self.errors:
            text += ": " + "; ".join("%s: %s" % (addr, err) for addr, err in self.errors)
        super().__init__(text)


class InDoubtError(SparrowError):
    """The scheduler failed after the job was sent: the job may or may not
    have been scheduled. The frontend has failed over, and the job is also
    in the Failover's in_flight list, so the application decides whether to
    resubmit it (only safe if its tasks are idempotent)."""

    def __init__(self, request_id, scheduler, cause):
        self.request_id = request_id
        self.scheduler = scheduler
        self.cause = cause
        super().__init__("submit %s to %s: scheduler failed after the job was sent: %s" % (request_id, scheduler, cause))


class RegistrationError(SparrowError):
    """An executor's node monitor did not accept its registration in time."""


def refusal_error(scheduler, request_id, app, exc):
    """The typed error for a scheduler's refusal exc (an
    IncompleteRequestException) of job request_id of app."""
    msg = exc.message or ""
    code = getattr(exc, "code", None)
    retry_after = _suggested_delay(exc, msg)
    if code == constants.REFUSAL_SATURATED:
        return SaturatedError(msg, request_id, scheduler, retry_after, DRAINING_REFUSAL in msg)
    if code == constants.REFUSAL_DRAINING:
        return SaturatedError(msg, request_id, scheduler, retry_after, True)
    if code == constants.REFUSAL_UNKNOWN_APP:
        return UnknownAppError(msg, request_id, scheduler, app)
    if code == constants.REFUSAL_UNPLACEABLE:
        return UnplaceableError(msg, request_id, scheduler)
    if code == constants.REFUSAL_INVALID:
        return InvalidRequestError(msg, request_id, scheduler)
    return refusal_from_text(scheduler, request_id, app, msg, retry_after)


def refusal_from_text(scheduler, request_id, app, msg, retry_after=None):
    """Classifies a refusal that carries no known code by its message, as
    client/errors.go's refusalError does."""
    suggested = parse_retry_after(msg)
    if retry_after is None:
        retry_after = suggested if suggested is not None else 0.0
    if "fleet saturated" in msg or suggested is not None:
        return SaturatedError(msg, request_id, scheduler, retry_after, DRAINING_REFUSAL in msg)
    if msg.startswith("no live node monitor hosts app"):
        return UnknownAppError(msg, request_id, scheduler, app)
    if "no live node monitor" in msg:
        return UnplaceableError(msg, request_id, scheduler)
    return InvalidRequestError(msg, request_id, scheduler)


def _suggested_delay(exc, msg):
    """The scheduler's suggested delay in seconds: retryAfterMs when sent and
    in range, else the message's "retry after <d>", else 0."""
    ms = getattr(exc, "retryAfterMs", None)
    if ms is not None and 0 <= ms <= MAX_SUGGESTED_SECONDS * 1000:
        return ms / 1000.0
    parsed = parse_retry_after(msg)
    return parsed if parsed is not None else 0.0


_RETRY_KEY = "retry after "
_DELIMITERS = " \t\n,;)]\""
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"([0-9]*\.?[0-9]*)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")


def parse_retry_after(msg):
    """The delay in seconds suggested by the last "retry after <d>" in msg
    (ASCII case ignored), where <d> is a number of seconds or a Go duration
    ("1.5s", "200ms", "1m30s"); None if there is none, it does not parse,
    or it is negative or over five minutes. The Go client's
    ParseRetryAfter."""
    i = _last_index_fold_ascii(msg, _RETRY_KEY)
    if i < 0:
        return None
    rest = msg[i + len(_RETRY_KEY):]
    for j, ch in enumerate(rest):
        if ch in _DELIMITERS:
            rest = rest[:j]
            break
    rest = rest.rstrip(".")
    if not rest:
        return None
    seconds = _parse_seconds(rest)
    if seconds is None:
        seconds = _parse_go_duration(rest)
    if seconds is None or seconds < 0 or seconds > MAX_SUGGESTED_SECONDS:
        return None
    return seconds


def _parse_seconds(text):
    """A plain decimal number of seconds, as Go's strconv.ParseFloat reads
    it minus hex, infinities, NaN and underscores; None otherwise."""
    if any(c in "xXpPiInN_" for c in text):
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _parse_go_duration(text):
    """Seconds in a Go duration string (time.ParseDuration), or None."""
    sign = 1.0
    if text[:1] in "+-":
        sign = -1.0 if text[0] == "-" else 1.0
        text = text[1:]
    if text == "0":
        return 0.0
    if not text:
        return None
    total, pos = 0.0, 0
    while pos < len(text):
        m = _DURATION_PART.match(text, pos)
        if not m or m.group(1) in ("", "."):
            return None
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    return sign * total


def _last_index_fold_ascii(s, key):
    """The index of the last occurrence of key (lower-case ASCII) in s,
    ignoring ASCII case only, or -1."""
    n = len(key)
    for i in range(len(s) - n, -1, -1):
        if all(_lower_ascii(s[i + k]) == key[k] for k in range(n)):
            return i
    return -1


def _lower_ascii(ch):
    return chr(ord(ch) + 32) if "A" <= ch <= "Z" else ch
