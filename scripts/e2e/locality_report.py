#!/usr/bin/env python3
"""Polls, checks and tabulates the locality coordinator's fault scenarios
(used by scripts/e2e/locality.sh).

  locality_report.py poll OUT.jsonl EVERY_S NAME=URL...
        sample every EVERY_S seconds until killed (SIGTERM): names starting
        with "scheduler" are schedulers' /metrics, "coord" coordinators'
        /status; one JSON line per sample (see poll)
  locality_report.py ready OUT fleet COORD [STANDBY]
  locality_report.py ready OUT guided SINCE [MIN_S]
        exit 0 when the fleet is ready, or prices guide placement (see
        ready); locality.sh's waits
  locality_report.py check OUT NAME
        check scenario NAME, write OUT/NAME/result.json; exit 1 if a
        check failed
  locality_report.py table OUT NAME...
        markdown table of the results

OUT holds the run's shared files: timeline.jsonl (the poller's samples)
and exN.launches (each executor's launch lines). OUT/NAME holds the
scenario's fault.env (host times in seconds since the epoch, written by
locality.sh) and the driver's summary and exit status (driver.json,
driver.rc).

What a scenario must show (check):
  - the driver exits 0: every job completed (lost work resubmitted);
  - no (request, task) of the scenario launched twice across executors;
  - before the fault, every scheduler held fresh prices and the prices
    widened tasks (guidance at work);
  - when prices stop coming (kill, partition), every scheduler stops
    using them at most STALE + LOC_SLACK_S after the last set was computed
    (its version is the coordinator's clock at that period, the host's
    clock too) and at most STALE + PERIOD + LOC_SLACK_S after the fault;
    meanwhile no task is widened by prices and the delay widens tasks
    (Sparrow's delay relaxation took over);
  - after the coordinator's return (or a standby's takeover), every
    scheduler holds fresh prices again and the prices widen tasks again,
    within LOC_RESUME_WITHIN_S.
"""
import collections
import concurrent.futures
import json
import os
import re
import signal
import sys
import time

import e2elib
import urllib.request

STALE = float(os.environ.get("LOC_STALE_S", "3"))
PERIOD = float(os.environ.get("LOC_PERIOD_S", "1"))
SLACK = float(os.environ.get("LOC_SLACK_S", "1"))
RESUME_WITHIN = float(os.environ.get("LOC_RESUME_WITHIN_S", "15"))
# No node monitor is faulted here, so a task reported lost is a false
# death: a warning, or a failure with LOC_STRICT_LOST=1 (see check).
STRICT_LOST = os.environ.get("LOC_STRICT_LOST") == "1"
NODES = int(os.environ.get("LOC_NODES", "12"))
EXECUTORS = [f"ex{i}" for i in range(1, NODES + 1)]

METRIC = re.compile(r'^(sparrow_scheduler_[a-z_]+)(?:\{([^}]*)\})? (\S+)$')
WIDEN = [("rack", "delay"), ("rack", "prices"), ("cluster", "delay"), ("cluster", "prices")]


# ---- poll

def get(url, parse):
    try:
        with urllib.request.urlopen(url, timeout=0.4) as r:
            return parse(r.read().decode())
    except Exception:  # down, paused, cut off or mid-restart: no sample
        return None


def sched_metrics(text):
    m = {"widened": {}, "launched": {}}
    for line in text.splitlines():
        x = METRIC.match(line)
        if not x:
            continue
        name, labels, v = x.group(1), dict(re.findall(r'(\w+)="([^"]*)"', x.group(2) or "")), float(x.group(3))
        if name == "sparrow_scheduler_tasks_widened_total":
            m["widened"][f"{labels.get('level')}/{labels.get('cause')}"] = int(v)
        elif name == "sparrow_scheduler_preferred_tasks_launched_total":
            m["launched"][labels.get("level")] = int(v)
        elif name == "sparrow_scheduler_locality_prices_fresh":
            m["fresh"] = int(v)
        elif name == "sparrow_scheduler_locality_prices_version":
            m["version"] = v / 1e9  # the coordinator's clock at that period, s
        elif name == "sparrow_scheduler_locality_prices_accepted_total":
            m["accepted"] = int(v)
        elif name == "sparrow_scheduler_relaxing_requests":
            m["relaxing"] = int(v)
    return m if "fresh" in m else None


def coord_status(text):
    c = (json.loads(text) or {}).get("coordinator") or {}
    loc = c.get("locality") or {}
    return {"active": bool(c.get("active")), "version": (loc.get("version") or 0) / 1e9,
            "nodes": loc.get("nodes"), "rack": loc.get("rack"), "core": loc.get("core"), "sent": loc.get("sent")}


def poll(out, every, targets):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    targets = [a.split("=", 1) for a in targets]
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(targets))

    def one(nu):
        name, url = nu
        return get(url, sched_metrics if name.startswith("scheduler") else coord_status)

    with open(out, "a", buffering=1) as f:
        while True:
            t0 = time.time()
            res = dict(zip([n for n, _ in targets], pool.map(one, targets)))
            line = {"t": t0, "sched": {}, "coord": {}}
            for name, v in res.items():
                line["sched" if name.startswith("scheduler") else "coord"][name] = v
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
            time.sleep(max(0.0, every - (time.time() - t0)))


# ---- reading


def schedulers(samples):
    return sorted({n for s in samples for n in s.get("sched", {})})


def counter(s, sched, what, key):
    m = (s.get("sched") or {}).get(sched)
    return None if m is None else (m.get(what) or {}).get(key, 0)


def total(samples, what, keys, a, b):
    """Increase of the counters keys (summed over schedulers) from the
    last sample at or before a to the last at or before b; None if either
    end has no answer from some scheduler."""
    names = schedulers(samples)

    def at(t):
        xs = [s for s in samples if s["t"] <= t and all((s.get("sched") or {}).get(n) for n in names)]
        if not xs:
            return None
        return sum(counter(xs[-1], n, what, k) for n in names for k in keys)

    x, y = at(a), at(b)
    return None if x is None or y is None else y - x


# ---- ready

def ready(out, args):
    samples = e2elib.timeline(out)
    if not samples:
        return False
    last = samples[-1]
    names = schedulers(samples)
    if args[0] == "fleet":
        if not names or not all((last["sched"].get(n) or {}).get("fresh") == 1 for n in names):
            return False
        c = (last.get("coord") or {}).get(args[1]) or {}
        if not c.get("active") or c.get("nodes") != NODES:
            return False
        if len(args) > 2:
            sb = (last.get("coord") or {}).get(args[2])
            return bool(sb) and not sb.get("active")
        return True
    # guided SINCE [MIN_S]: fresh everywhere, the prices widened tasks
    # since SINCE, and at least MIN_S passed since it.
    since = float(args[1])
    if len(args) > 2 and last["t"] < since + float(args[2]):
        return False
    if not all((last["sched"].get(n) or {}).get("fresh") == 1 for n in names):
        return False
    d = total(samples, "widened", ["rack/prices", "cluster/prices"], since, last["t"])
    return d is not None and d > 0


# ---- check

def check(out, name):
    d = os.path.join(out, name)
    env = e2elib.read_env(os.path.join(d, "fault.env"))
    start_at, fault_at, back_at, end_at = (e2elib.fnum(env, k) for k in ("start_at", "fault_at", "back_at", "end_at"))
    res = {"scenario": name, "checks": [], "failed": [], "fault": env.get("fault"), "coordinators": env.get("coordinators"),
           "scenario_s": int(float(env.get("scenario_s", "0") or 0)), "stale_s": STALE,
           "loadavg": f"{env.get('loadavg_start', '?')}→{env.get('loadavg_end', '?')}"}

    def ok(cond, what):
        res["checks"].append(("PASS " if cond else "FAIL ") + what)
        if not cond:
            res["failed"].append(what)

    # The driver: every job completed.
    drv, rc = {}, "?"
    try:
        lines = [l for l in open(os.path.join(d, "driver.json")) if l.strip().startswith("{")]
        drv = json.loads(lines[-1])
    except (OSError, IndexError, ValueError):
        pass
    if os.path.exists(os.path.join(d, "driver.rc")):
        rc = open(os.path.join(d, "driver.rc")).read().strip()
    res["driver"] = {k: drv.get(k) for k in ("jobs_submitted", "jobs_completed", "tasks_completed", "lost_reports",
                                             "failed_reports", "resubmitted_jobs", "failovers", "response_ms",
                                             "sched_delay_ms", "elapsed_s", "preferences")}
    ok(rc == "0" and drv.get("ok") is True,
       f"driver exit 0, every job completed (rc {rc}, {drv.get('jobs_completed')}/{drv.get('jobs_submitted')} jobs"
       + (f"; {drv['error']}" if drv.get("error") else "") + ")")

    # Exactly once across the executors.
    launches = collections.Counter()
    for ex in EXECUTORS:
        p = os.path.join(out, f"{ex}.launches")
        if not os.path.exists(p):
            continue
        for line in open(p):
            try:
                l = json.loads(line)["launch"]
            except (ValueError, KeyError):
                continue
            if l["request"].startswith(name + "-j"):
                launches[(l["request"], l["task"])] += 1
    dups = [k for k, n in launches.items() if n > 1]
    done = drv.get("tasks_completed") or 0
    res["launches"], res["duplicate_launches"] = sum(launches.values()), len(dups)
    ok(not dups, f"no (request, task) launched twice across executors ({sum(launches.values())} launches"
       + (f"; duplicates: {dups[:5]}" if dups else "") + ")")
    ok(sum(launches.values()) >= done, f"every completed task was launched ({sum(launches.values())} launches, {done} tasks)")
    # Lost reports: no node monitor is faulted, so each is a live node
    # monitor a scheduler took for dead, whose running task then ran again
    # under a new request id. Seen after a partition: the returning
    # coordinator gossips the deaths it saw while cut off, and schedulers
    # act on them before the accused refute (docs/LOCALITY.md, "Coordinator
    # faults"). Known, so a warning unless LOC_STRICT_LOST=1.
    lost = drv.get("lost_reports") or 0
    res["warnings"] = []
    if lost:
        what = (f"{lost} tasks reported lost though no node monitor failed (false deaths; each ran again as a "
                f"resubmission, first at {drv.get('first_lost_at')})")
        if STRICT_LOST:
            ok(False, what)
        else:
            res["warnings"].append(what)
            res["checks"].append("WARN " + what)

    ok(None not in (start_at, fault_at, back_at, end_at), "fault injected and the coordinator back (or taken over)")
    if None in (start_at, fault_at, back_at, end_at):
        return finish(d, res)
    samples = [s for s in e2elib.timeline(out) if start_at - 5 <= s["t"] <= end_at + 1]
    names = schedulers(samples)
    res["schedulers"] = names

    # Before the fault: fresh prices, and they widened tasks.
    pre = [s for s in samples if s["t"] < fault_at]
    fresh_pre = bool(pre) and all((pre[-1]["sched"].get(n) or {}).get("fresh") == 1 for n in names)
    res["prices_widened_before"] = total(samples, "widened", ["rack/prices", "cluster/prices"], start_at, fault_at)
    res["delay_widened_before"] = total(samples, "widened", ["rack/delay", "cluster/delay"], start_at, fault_at)
    ok(fresh_pre and (res["prices_widened_before"] or 0) > 0,
       f"before the fault every scheduler held fresh prices and they widened tasks ({res['prices_widened_before']} by prices, "
       f"{res['delay_widened_before']} by the delay)")

    # A standby's takeover is the return: its first prices after the fault.
    takeover = None
    if env.get("back") == "takeover":
        sb = env.get("standby")
        for s in samples:
            c = (s.get("coord") or {}).get(sb) or {}
            if s["t"] >= fault_at and c.get("active") and c.get("version", 0) >= fault_at:
                takeover = c["version"]
                break
        res["takeover_s"] = round(takeover - fault_at, 2) if takeover else None
        ok(takeover is not None, f"the standby {sb} took over and priced ({res['takeover_s']} s after the fault)")
        if takeover:
            back_at = takeover
    res["back_after_fault_s"] = round(back_at - fault_at, 2)

    # Fall back: each scheduler's first sample without fresh prices after
    # the fault, against the fault and against its last prices' age.
    fb = {}
    for n in names:
        prev, off = None, None
        for s in samples:
            m = s["sched"].get(n)
            if s["t"] < fault_at or m is None:
                if m is not None:
                    prev = (s["t"], m)
                continue
            if m.get("fresh") == 0:
                off = (s["t"], m)
                break
            prev = (s["t"], m)
        if off:
            fb[n] = {"off_after_fault_s": round(off[0] - fault_at, 2),
                     "last_prices_age_s": round(off[0] - off[1]["version"], 2),
                     "fresh_until_after_fault_s": round(prev[0] - fault_at, 2) if prev else None,
                     "off_at": off[0]}
    res["fallback"] = fb
    expect_fallback = env.get("expect_fallback") == "1"
    if expect_fallback:
        ok(len(fb) == len(names) and all(f["off_at"] < back_at for f in fb.values()),
           f"every scheduler stopped using the prices before the coordinator came back ({len(fb)} of {len(names)})")
    for n, f in fb.items():
        if f["off_at"] >= back_at:
            continue
        ok(f["last_prices_age_s"] <= STALE + SLACK and f["off_after_fault_s"] <= STALE + PERIOD + SLACK,
           f"{n} stopped using the prices {f['off_after_fault_s']} s after the fault, when its last prices were "
           f"{f['last_prices_age_s']} s old (bound: {STALE:g} + {SLACK:g} s old, {STALE + PERIOD:g} + {SLACK:g} s after the fault)")
    outage_from = max((f["off_at"] for f in fb.values() if f["off_at"] < back_at), default=None)
    if outage_from is not None:
        res["stale_for_s"] = round(back_at - outage_from, 2)
        res["prices_widened_during"] = total(samples, "widened", ["rack/prices", "cluster/prices"], outage_from, back_at)
        res["delay_widened_during"] = total(samples, "widened", ["rack/delay", "cluster/delay"], min(f["off_at"] for f in fb.values()), back_at)
        ok(res["prices_widened_during"] == 0, f"no task widened by prices while they were stale ({res['prices_widened_during']})")
        what = (f"the delay widened tasks while prices were stale: Sparrow's relaxation took over "
                f"({res['delay_widened_during']} tasks in {res['stale_for_s']} s)")
        if expect_fallback:
            ok((res["delay_widened_during"] or 0) > 0, what)
        else:
            # A standby that takes over may leave the prices stale for less
            # than a delayThreshold, too short for the delay to widen any
            # task: reported, not required (see locality.sh).
            res["checks"].append("INFO " + what)

    # Resume: every scheduler fresh again with prices computed after the
    # return, then the prices widen tasks again.
    post = [s for s in samples if s["t"] >= back_at]
    fresh_again = next((s["t"] for s in post if all((s["sched"].get(n) or {}).get("fresh") == 1
                                                     and (s["sched"].get(n) or {}).get("version", 0) >= back_at - PERIOD
                                                     for n in names)), None)
    res["fresh_after_return_s"] = round(fresh_again - back_at, 2) if fresh_again else None
    first_widen = None
    if fresh_again:
        for s in post:
            if s["t"] <= fresh_again:
                continue
            if (total(samples, "widened", ["rack/prices", "cluster/prices"], fresh_again, s["t"]) or 0) > 0:
                first_widen = s["t"]
                break
    res["prices_widen_after_return_s"] = round(first_widen - back_at, 2) if first_widen else None
    ok(fresh_again is not None and fresh_again - back_at <= RESUME_WITHIN and first_widen is not None,
       f"guidance resumed: every scheduler held fresh prices {res['fresh_after_return_s']} s after the "
       f"{'takeover' if takeover else 'return'} and the prices widened tasks again "
       f"{res['prices_widen_after_return_s']} s after it (bound {RESUME_WITHIN:g} s)")

    # Launch locality per phase, from the schedulers' counters.
    phases = {"before": (start_at, fault_at), "outage": (outage_from or fault_at, back_at),
              "after": (fresh_again or back_at, end_at)}
    res["launched"] = {}
    for ph, (a, b) in phases.items():
        res["launched"][ph] = {lv: total(samples, "launched", [lv], a, b) for lv in ("node", "rack", "cluster")}
        res["launched"][ph]["widened_prices"] = total(samples, "widened", ["rack/prices", "cluster/prices"], a, b)
        res["launched"][ph]["widened_delay"] = total(samples, "widened", ["rack/delay", "cluster/delay"], a, b)
        res["launched"][ph]["s"] = round(b - a, 1)
    return finish(d, res)


FINISH_KEYS = ("fallback", "stale_for_s", "back_after_fault_s", "takeover_s", "fresh_after_return_s",
            "prices_widen_after_return_s", "prices_widened_during", "delay_widened_during", "launched")


def finish(d, res):
    return e2elib.finish(d, res, FINISH_KEYS)


fmt = e2elib.fmt


def table(out, names):
    print("| scenario | fault | prices stopped guiding, s after the fault (their age then) | delay widenings while stale "
          "| back (return or takeover), s after the fault | fresh prices again / prices widen again, s after it "
          "| launches node / rack / cluster: before; outage; after | driver: jobs, lost, resubmitted | exactly-once | result | time | host load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, r in e2elib.results(out, names):
        if r is None:
            print(f"| {n} | (no result) |" + " |" * 10)
            continue
        fb = "; ".join(f"{s} {f['off_after_fault_s']} ({f['last_prices_age_s']})" for s, f in sorted((r.get("fallback") or {}).items())) or "never stale"
        ph = "; ".join("/".join(fmt((r.get("launched") or {}).get(p, {}).get(lv)) for lv in ("node", "rack", "cluster"))
                       for p in ("before", "outage", "after"))
        dv = r.get("driver") or {}
        drv = f"{dv.get('jobs_completed')}/{dv.get('jobs_submitted')}, {dv.get('lost_reports') or 0} lost, {dv.get('resubmitted_jobs') or 0} resubmitted"
        verdict = "PASS" if not r.get("failed") else "FAIL: " + "; ".join(r["failed"])
        if r.get("warnings"):
            verdict += " (warning: " + "; ".join(r["warnings"]) + ")"
        print(f"| {n} | {r.get('fault')} | {fb} | {fmt(r.get('delay_widened_during'))} | {fmt(r.get('back_after_fault_s'))} "
              f"| {fmt(r.get('fresh_after_return_s'))} / {fmt(r.get('prices_widen_after_return_s'))} | {ph} | {drv} "
              f"| {r.get('duplicate_launches')} dup of {r.get('launches')} | {verdict} | {r.get('scenario_s')} s | {r.get('loadavg')} |")


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) >= 4 and a[0] == "poll":
        sys.exit(poll(a[1], float(a[2]), a[3:]))
    if len(a) >= 3 and a[0] == "ready":
        sys.exit(0 if ready(a[1], a[2:]) else 1)
    if len(a) == 3 and a[0] == "check":
        sys.exit(check(a[1], a[2]))
    if len(a) >= 2 and a[0] == "table":
        table(a[1], a[2:])
        sys.exit(0)
    print(__doc__, file=sys.stderr)
    sys.exit(2)
