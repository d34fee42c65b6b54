#!/usr/bin/env python3
"""Checks one e2e scenario and tabulates results (used by scripts/e2e/run.sh).

  report.py check DIR            check DIR's run, write DIR/result.json;
                                 exit 1 if a check failed
  report.py table OUT NAME...    markdown table of OUT/NAME/result.json

DIR holds driver.json (the `sparrow drive --json` summary), driver.rc,
fault.env (target, fault_at, ... as written by run.sh), every container's
`docker logs -t` output (<service>.log) and each executor's launch lines
(exN.launches). Timestamps are RFC 3339 with nanoseconds; containers share
the host's clock, so host and container times compare directly.

With the short-jobs policy (short_jobs=1 in fault.env), DIR also holds the
trace the driver replayed (trace.tr), and the result adds the policy's
figures, from the launch logs and the trace: launches by job class, long
tasks launched on the short-only node monitors (short_only in fault.env)
and short tasks launched on a node monitor while a long task ran there.
"""
import collections
import json
import os
import re
import sys

import e2elib

NET = os.environ.get("E2E_NET", "10.217.0")
NM_IP = {f"nm{i}": f"{NET}.{20 + i}" for i in range(1, 7)}
SCHED_IP = {f"scheduler{i}": f"{NET}.{10 + i}" for i in range(1, 4)}


def ts(s):
    """RFC 3339 (nanoseconds, Z) -> float seconds since the epoch."""
    if not s:
        return None
    m = re.match(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?Z", s)
    if not m:
        return None
    import calendar

    y, mo, d, h, mi, se = (int(x) for x in m.groups()[:6])
    frac = float("0." + (m.group(7) or "0"))
    return calendar.timegm((y, mo, d, h, mi, se, 0, 0, 0)) + frac


def ms(a, b):
    """b - a in milliseconds, or None."""
    if a is None or b is None:
        return None
    return round((b - a) * 1000, 1)


def log_lines(path):
    """(docker timestamp, parsed JSON or None, raw) per line of a docker logs -t file."""
    if not os.path.exists(path):
        return
    for raw in open(path, errors="replace"):
        t, _, rest = raw.partition(" ")
        try:
            obj = json.loads(rest)
        except ValueError:
            obj = None
        yield ts(t), obj, rest


def trace_jobs(path, cutoff):
    """(is_long, [task durations, s]) per job of a trace file, in order."""
    jobs = []
    for line in open(path):
        f = line.split()
        if len(f) >= 4:
            jobs.append((float(f[2]) >= cutoff, [float(x) for x in f[3:]]))
    return jobs


def policy_figures(d, name, env, launches):
    """The short-jobs policy's figures from launches: (request, task, node,
    at) of every launch across the executors."""
    jobs = trace_jobs(os.path.join(d, "trace.tr"), float(env.get("short_cutoff_s", "1")))
    short_only = set(env.get("short_only", "").split())
    prefix = name + "-j"
    out = {"short_launches": 0, "long_launches": 0, "long_on_short_only": 0,
           "short_beside_long": 0, "short_only_nodes": sorted(short_only)}
    long_runs = collections.defaultdict(list)  # node -> [(start, end)]
    shorts = []
    for req, task, node, at in launches:
        if not req.startswith(prefix) or at is None:
            continue
        try:
            n, k = int(req[len(prefix):].split(".")[0]), int(task)
            is_long, durs = jobs[n]
            dur = durs[k]
        except (ValueError, IndexError):
            continue
        if is_long:
            out["long_launches"] += 1
            long_runs[node].append((at, at + dur))
            if node in short_only:
                out["long_on_short_only"] += 1
        else:
            out["short_launches"] += 1
            shorts.append((node, at))
    for node, at in shorts:
        if any(s <= at < e for s, e in long_runs[node]):
            out["short_beside_long"] += 1
    return out


def check(d):
    env = e2elib.read_env(os.path.join(d, "fault.env"))
    name = os.path.basename(os.path.normpath(d))
    target = env.get("target", "")
    # Detection and recovery are measured from the fault: for a kill, when
    # the container exited (docker's State.FinishedAt, exact); otherwise
    # when the host issued the command (an upper bound: fault_cmd_ms says
    # how long the command took).
    issued = ts(env.get("fault_at"))
    fault_at = ts(env.get("died_at")) or issued
    recover_at = ts(env.get("recover_at"))
    res = {"scenario": name, "target": target, "fault_at": env.get("died_at") or env.get("fault_at"),
           "fault_ref": "container exit" if env.get("died_at") else "command issued",
           "fault_cmd_ms": ms(issued, ts(env.get("fault_done_at"))),
           "died_after_cmd_ms": ms(issued, ts(env.get("died_at"))),
           "scenario_s": int(env.get("scenario_s", "0") or 0), "checks": [], "failed": [],
           "loadavg": f"{env.get('loadavg_start', '?')}→{env.get('loadavg_end', '?')}"}

    def ok(cond, what):
        res["checks"].append(("PASS " if cond else "FAIL ") + what)
        if not cond:
            res["failed"].append(what)

    # The driver's summary.
    drv = {}
    try:
        lines = [l for l in open(os.path.join(d, "driver.json")) if l.strip().startswith("{")]
        drv = json.loads(lines[-1])
    except (OSError, IndexError, ValueError) as e:
        res["driver_error"] = f"no driver summary: {e}"
    rc = open(os.path.join(d, "driver.rc")).read().strip() if os.path.exists(os.path.join(d, "driver.rc")) else "?"
    res["driver_rc"] = rc
    ok(rc == "0" and drv.get("ok") is True,
       f"driver exit 0 and every job completed (rc {rc}, {drv.get('jobs_completed')}/{drv.get('jobs_submitted')} jobs; {drv.get('error', '')})")
    ok(fault_at is not None, "fault injected mid-run")
    res["late_ok"] = drv.get("late_ok")
    res["incomplete_tasks"] = drv.get("incomplete_tasks")
    for k in ("jobs_submitted", "tasks_submitted", "jobs_completed", "tasks_completed", "attempts_submitted",
              "lost_reports", "failed_reports", "late_ok_reports", "duplicate_ok_reports", "stale_reports", "resubmitted_jobs",
              "resubmitted_tasks", "resubmitted_by", "submit_errors", "affected_jobs", "response_ms",
              "affected_response_ms", "elapsed_s"):
        res[k] = drv.get(k)
    marks = drv.get("marks") or []
    if marks:
        res["jobs_in_flight"] = marks[0]["jobs_in_flight"]
        res["tasks_in_flight"] = marks[0]["tasks_in_flight"]

    # Exactly once: no (request, task) launched twice across executors.
    launches = collections.Counter()
    per_node = collections.Counter()
    after_recovery = collections.Counter()
    every = []
    for i in range(1, 7):
        p = os.path.join(d, f"ex{i}.launches")
        if not os.path.exists(p):
            continue
        for line in open(p):
            try:
                l = json.loads(line)["launch"]
            except (ValueError, KeyError):
                continue
            launches[(l["request"], l["task"])] += 1
            per_node[l["node"]] += 1
            t = ts(l.get("at"))
            every.append((l["request"], l["task"], l["node"], t))
            if recover_at and t and t > recover_at:
                after_recovery[l["node"]] += 1
    dups = [k for k, n in launches.items() if n > 1]
    res["launches"] = sum(launches.values())
    res["launches_per_node"] = dict(sorted(per_node.items()))
    res["duplicate_launches"] = len(dups)
    ok(not dups, f"no (request, task) launched twice across executors ({sum(launches.values())} launches"
       + (f"; duplicates: {dups[:5]}" if dups else "") + ")")
    run_launches = sum(n for (r, _), n in launches.items() if r.startswith(name + "-"))
    res["run_launches"] = run_launches
    ok(run_launches >= (drv.get("tasks_completed") or 0),
       f"every completed task was launched ({run_launches} launches of this run's requests)")
    # Nothing lost: every original job completed (the driver resubmits
    # what was reported lost, failed or in flight, and waits for the rest).
    res["jobs_lost"] = (drv.get("jobs_submitted") or 0) - (drv.get("jobs_completed") or 0) if drv else None
    res["short_jobs"] = env.get("short_jobs") == "1"
    res["coordinator"] = env.get("coordinator") == "1"
    if res["short_jobs"] and os.path.exists(os.path.join(d, "trace.tr")):
        res["policy"] = policy_figures(d, name, env, every)
        for cls in ("short", "long"):
            c = drv.get(cls) or {}
            res[f"{cls}_response_s"] = {k: c.get(k) for k in ("n", "p50", "p99")} if c else None

    # Fleet logs: gossip failure detection, node loss handling.
    first_marked = None
    node_lost = []
    first_unreachable = {}
    target_internal = NM_IP[target] + ":20502" if target in NM_IP else None
    gettask_failed = collections.Counter()
    not_sent = 0
    finished_lost = 0
    late_dropped = 0
    gettask_timeouts = 0
    for f in sorted(os.listdir(d)):
        if not f.endswith(".log"):
            continue
        svc = f[:-4]
        for t, obj, raw in log_lines(os.path.join(d, f)):
            if obj is None:
                continue
            msg = obj.get("message", "")
            if target and f"Marking {target} as failed" in msg and svc != target:
                if first_marked is None or t < first_marked:
                    first_marked = t
            # A scheduler re-places a dead node monitor's reservations at
            # once ("gone") and reports its running tasks after the grace
            # ("lost"); one entry per scheduler and node sums the two.
            if msg == "node monitor lost" or msg.startswith("node monitor gone"):
                e = next((x for x in node_lost if x["scheduler"] == svc and x["node"] == obj.get("node")), None)
                if e is None:
                    e = {"scheduler": svc, "at": t, "node": obj.get("node"), "running_lost": 0, "requests_replaced": 0}
                    node_lost.append(e)
                e["running_lost"] += obj.get("running_lost") or 0
                e["requests_replaced"] += obj.get("requests_replaced") or 0
            # A scheduler whose own call to the node monitor failed stops
            # placing on it at once, before gossip's verdict.
            if msg.startswith("node monitor unreachable;") and obj.get("node") == target_internal:
                if svc not in first_unreachable or t < first_unreachable[svc]:
                    first_unreachable[svc] = t
            if msg.startswith("getTask failed"):
                gettask_failed[svc] += 1
                if "timeout" in obj.get("error", ""):
                    gettask_timeouts += 1
            if msg == "frontend message not sent":
                not_sent += 1
            if msg == "could not report task finished":
                finished_lost += 1
            if msg.startswith("dropping a message about a task already reported lost"):
                late_dropped += 1
    res["gossip_detect_ms"] = ms(fault_at, first_marked)
    res["node_lost_logs"] = [dict(x, at=ms(fault_at, x["at"])) for x in node_lost]
    res["unreachable_ms"] = {k: ms(fault_at, v) for k, v in sorted(first_unreachable.items())}
    res["gettask_failed"] = sum(gettask_failed.values())
    res["gettask_timeouts"] = gettask_timeouts
    res["frontend_messages_not_sent"] = not_sent
    res["finished_reports_lost"] = finished_lost
    res["late_messages_dropped"] = late_dropped

    # Detection and recovery.
    fos = drv.get("failovers") or []
    res["failovers"] = len(fos)
    if fos and not name.startswith("scheduler"):
        fo = fos[0]  # spurious: no scheduler was harmed
        res["failover_from"] = fo.get("from")
        res["failover_detect_ms"] = ms(fault_at, ts(fo.get("detected_at")))
        res["reconnect_ms"] = round(fo.get("reconnect_ms", 0), 2)
        res["relaunch_ms"] = round(fo.get("relaunch_took_ms", 0), 2)
        res["failover_in_flight_jobs"] = fo.get("in_flight_jobs")
        res["failover_in_flight_tasks"] = fo.get("in_flight_tasks")
    res["first_lost_ms"] = ms(fault_at, ts(drv.get("first_lost_at")))
    res["last_lost_ms"] = ms(fault_at, ts(drv.get("last_lost_at")))
    res["first_failed_ms"] = ms(fault_at, ts(drv.get("first_failed_at")))
    res["recovery_ms"] = ms(fault_at, ts(drv.get("last_affected_done_at")))
    res["recovered_after_fault_ms"] = ms(fault_at, recover_at)
    if recover_at:
        res["launches_after_recovery"] = dict(after_recovery)

    # Scenario-specific expectations.
    if name in ("scheduler-kill", "scheduler-pause", "scheduler-partition"):
        # The failover the fault caused: the first away from the target
        # detected after it (the frontend may have failed over spuriously
        # before, on a starved CPU).
        # A starved CPU can make the frontend leave the target spuriously
        # between the mark and the fault; such a failover counts (it
        # reported the same in-flight jobs), and shows as a negative
        # detection time.
        want = SCHED_IP.get(target, "?") + ":20503"
        mark_at = ts(marks[0]["at"]) if marks else (issued or 0)
        fo = next((fo for fo in fos if fo.get("from") == want
                   and (ts(fo.get("detected_at")) or 0) >= mark_at), None)
        ok(fo is not None,
           f"frontend failed over from {target}, the scheduler it used at the fault ({len(fos)} failovers in all)")
        if fo:  # detection figures from the failover away from the target
            res["failover_from"] = fo.get("from")
            res["failover_detect_ms"] = ms(fault_at, ts(fo.get("detected_at")))
            res["reconnect_ms"] = round(fo.get("reconnect_ms", 0), 2)
            res["relaunch_ms"] = round(fo.get("relaunch_took_ms", 0), 2)
            res["failover_in_flight_jobs"] = fo.get("in_flight_jobs")
            res["failover_in_flight_tasks"] = fo.get("in_flight_tasks")
        inflight = fo.get("in_flight_tasks", 0) if fo else 0
        by = drv.get("resubmitted_by") or {}
        ok(inflight == 0 or by.get("failover", 0) + by.get("in_doubt", 0) > 0,
           f"in-flight jobs resubmitted ({inflight} tasks in flight, resubmitted {by})")
    if name == "nm-kill":
        ip = NM_IP["nm3"] + ":20502"
        mine = [x for x in node_lost if x["node"] == ip]
        # No reservation is stranded on the dead node monitor: either a
        # scheduler re-placed those it held when gossip declared it dead,
        # or a scheduler's own failed call had already taken it out of
        # placement, so that no request still held a reservation there
        # (each such request's tasks went to its other reservations). The
        # jobs' exactly-once completion is checked above; a stranded
        # reservation would hold its job until the reservation timeout.
        unreach = res.get("unreachable_ms") or {}
        ok(any((x["requests_replaced"] or 0) > 0 for x in mine) or len(unreach) > 0,
           f"reservations on nm3 re-placed at gossip's verdict or nm3 out of placement at a failed call ({mine and [(x['scheduler'], x['running_lost'], x['requests_replaced']) for x in mine]}; unreachable at {unreach})")
        rec = res.get("recovery_ms")
        ok(rec is not None and rec < 30000,
           f"every affected job done before a reservation timeout could have rescued it (recovery {rec} ms < 30000 ms)")
        ok((drv.get("lost_reports") or 0) > 0, f"tasks running on nm3 reported lost ({drv.get('lost_reports')} lost reports)")
    exec_lost = []
    for t, obj, raw in log_lines(os.path.join(d, "nm2.log")):
        if obj and obj.get("message", "").startswith("executor lost"):
            exec_lost.append({"at": ms(fault_at, t), "running_failed": obj.get("running_failed"),
                              "reservations_dropped": obj.get("reservations_dropped")})
    res["executor_lost_logs"] = exec_lost
    timeouts = 0
    for i in range(1, 4):
        for t, obj, raw in log_lines(os.path.join(d, f"scheduler{i}.log")):
            if obj and obj.get("message", "").startswith("reservations unanswered"):
                timeouts += 1
    res["reservation_timeouts"] = timeouts
    if name == "executor-kill":
        ok(bool(exec_lost), f"nm2 declared its executor lost ({exec_lost})")
        res["executor_detect_ms"] = exec_lost[0]["at"] if exec_lost else None
    if name in ("nm-pause", "nm-partition", "nm-long-partition"):
        ok(first_marked is not None, f"gossip declared {target} dead during the fault")
    if name == "nm-long-partition":
        rj = env.get("rejoined_at")
        res["rejoin_ms"] = ms(recover_at, ts(rj)) if rj and rj != "never" else None
        ok(rj and rj != "never", f"{target} rejoined and ran tasks within 30 s of reconnecting (rejoined_at {rj})")

    json.dump(res, open(os.path.join(d, "result.json"), "w"), indent=1, sort_keys=True)
    for c in res["checks"]:
        print(f"  {name}: {c}")
    interesting = {k: res.get(k) for k in (
        "jobs_in_flight", "tasks_in_flight", "lost_reports", "failed_reports", "late_ok_reports",
        "duplicate_ok_reports",
        "resubmitted_jobs", "resubmitted_by", "failovers", "failover_detect_ms", "reconnect_ms", "relaunch_ms",
        "gossip_detect_ms", "first_lost_ms", "first_failed_ms", "recovery_ms", "node_lost_logs", "unreachable_ms", "gettask_failed", "gettask_timeouts",
        "executor_lost_logs", "reservation_timeouts",
        "frontend_messages_not_sent", "finished_reports_lost", "late_messages_dropped", "launches_after_recovery",
        "fault_ref", "fault_cmd_ms", "died_after_cmd_ms", "late_ok", "incomplete_tasks", "jobs_lost", "policy",
        "short_response_s", "long_response_s")}
    print(f"  {name}: " + json.dumps(interesting))
    return 1 if res["failed"] else 0


def fmt(v, unit=""):
    if v is None:
        return "–"
    if isinstance(v, float):
        v = f"{v:.0f}" if abs(v) >= 10 else f"{v:.1f}"
    return f"{v}{unit}"


def table(out, names):
    rows = []
    for n in names:
        p = os.path.join(out, n, "result.json")
        if not os.path.exists(p):
            rows.append(f"| {n} | (no result) |" + " |" * 11)
            continue
        r = json.load(open(p))
        if n == "baseline":
            detect = "(no fault)"
        elif n == "executor-kill":
            detect = (f"node monitor {fmt(r.get('executor_detect_ms'), ' ms')}, "
                      f"1st failed report {fmt(r.get('first_failed_ms'), ' ms')}")
        elif n.startswith("scheduler"):
            detect = f"failover {fmt(r.get('failover_detect_ms'), ' ms')}"
        elif r.get("gossip_detect_ms") is not None:
            detect = f"gossip {fmt(r.get('gossip_detect_ms'), ' ms')}, 1st lost report {fmt(r.get('first_lost_ms'), ' ms')}"
        else:
            detect = "–"
        reconnect = "–"
        if n.startswith("scheduler"):
            reconnect = f"{fmt(r.get('reconnect_ms'), ' ms')} / {fmt(r.get('relaunch_ms'), ' ms')}"
        by = r.get("resubmitted_by") or {}
        resub = f"{r.get('resubmitted_jobs') or 0} jobs / {r.get('resubmitted_tasks') or 0} tasks"
        if by:
            resub += " (" + ", ".join(f"{k} {v}" for k, v in sorted(by.items())) + ")"
        replaced = ", ".join(f"{x['scheduler']}: {x['running_lost']} running, {x['requests_replaced']} requests"
                             for x in r.get("node_lost_logs") or [])
        lost_exec = ", ".join(f"nm2: executor lost, {x['running_failed']} running failed, "
                              f"{x['reservations_dropped']} reservations dropped" for x in r.get("executor_lost_logs") or [])
        if lost_exec:
            replaced += ("; " if replaced else "") + lost_exec
        if r.get("gettask_failed"):
            replaced += (f"{'; ' if replaced else ''}{r['gettask_failed']} getTask calls failed "
                         f"({r.get('gettask_timeouts', 0)} after a 1 s timeout)")
        if r.get("reservation_timeouts"):
            replaced += f"; {r['reservation_timeouts']} reservation timeouts (30 s)"
        replaced = replaced or "–"
        resp = r.get("response_ms") or {}
        rows.append(
            f"| {n} | {r.get('jobs_in_flight', '–')} / {r.get('tasks_in_flight', '–')} "
            f"| {r.get('lost_reports') or 0} lost, {r.get('failed_reports') or 0} failed, {r.get('late_ok_reports') or 0} late OK, "
            f"{r.get('duplicate_ok_reports') or 0} duplicate OK; {r.get('failovers') or 0} failovers; "
            f"{r.get('late_messages_dropped') or 0} late messages dropped by schedulers "
            f"| {replaced} | {resub} | {detect} | {reconnect} | {fmt(r.get('recovery_ms'), ' ms')} "
            f"| {fmt(resp.get('p50'))} / {fmt(resp.get('p99'))} ms "
            f"| {r.get('jobs_completed')}/{r.get('jobs_submitted')} jobs, {r.get('duplicate_launches')} dup of {r.get('launches')} launches "
            f"| {'PASS' if not r.get('failed') else 'FAIL: ' + '; '.join(r['failed'])} | {r.get('scenario_s')} s | {r.get('loadavg')} |")
    head = ("| scenario | in flight at fault (jobs / tasks) | reports to the driver | fleet's reaction (logs) "
            "| resubmitted | detection (from fault) | reconnect / relaunch | recovery (fault → last affected job done) "
            "| job response p50 / p99 | completed, exactly-once | result | time | host load (1-min avg) |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    print(head)
    print("\n".join(rows))
    policy_table(out, names)


def policy_table(out, names):
    """The short-jobs policy's figures, for the scenarios run with it."""
    rows = []
    for n in names:
        p = os.path.join(out, n, "result.json")
        if not os.path.exists(p):
            continue
        r = json.load(open(p))
        pol = r.get("policy")
        if not pol:
            continue
        sr, lr = r.get("short_response_s") or {}, r.get("long_response_s") or {}

        def sec(v):
            return "–" if v is None else f"{v:.2f}"
        rows.append(
            f"| {n} | {'yes' if r.get('coordinator') else 'no'} | {r.get('jobs_submitted')} | {r.get('run_launches')} "
            f"| {r.get('duplicate_launches')} | {r.get('jobs_lost')} "
            f"| {pol['short_launches']} / {pol['long_launches']} | {pol['long_on_short_only']} "
            f"| {pol['short_beside_long']} | {sec(sr.get('p50'))} / {sec(sr.get('p99'))} s "
            f"| {sec(lr.get('p50'))} / {sec(lr.get('p99'))} s |")
    if not rows:
        return
    print()
    print("Short-jobs policy (launches of this run's trace jobs, from the executors' logs):")
    print()
    print("| scenario | coordinator | jobs | launches (this run) | duplicates (all launches) | jobs lost | short / long launches "
          "| long on the short-only node | short beside long work | short jobs p50 / p99 | long jobs p50 / p99 |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2]))
    if len(sys.argv) >= 3 and sys.argv[1] == "table":
        table(sys.argv[2], sys.argv[3:])
        sys.exit(0)
    print(__doc__, file=sys.stderr)
    sys.exit(2)
