"""Checks and figures of the rolling-upgrade test (scripts/e2e/rolling.sh).

    rolling_report.py OUT FALLBACK_S

reads OUT/before.json and OUT/during.json (the drivers' summaries),
OUT/events.env (when each member was stopped, started and ready again),
the executors' launch lines (OUT/ex*.launches) and the members' logs, and
prints a markdown report. Exits 1 if a check failed."""
import glob
import json
import os
import sys
from datetime import datetime

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2elib import read_env  # noqa: E402


def ts(s):
    """An RFC 3339 time with up to nanoseconds as a POSIX float."""
    s = s.strip().replace("Z", "+00:00")
    if "." in s:
        head, rest = s.split(".", 1)
        frac, zone = rest[:rest.index("+")], rest[rest.index("+"):]
        s = head + "." + (frac + "000000")[:6] + zone
    return datetime.fromisoformat(s).timestamp()


def summary(out, name):
    """The driver's JSON summary (its last stdout line) and exit code."""
    p = os.path.join(out, name + ".json")
    lines = [l for l in open(p)] if os.path.exists(p) else []
    s = json.loads(lines[-1]) if lines else None
    rc_p = os.path.join(out, name + ".rc")
    rc = int(open(rc_p).read().strip()) if os.path.exists(rc_p) else None
    return s, rc


def log_lines(out, svc):
    """(time, record) for each JSON line of svc's docker log (docker's -t
    time, which has nanoseconds)."""
    p = os.path.join(out, svc + ".log")
    if not os.path.exists(p):
        return
    for line in open(p, errors="replace"):
        t, _, rest = line.partition(" ")
        i = rest.find("{")
        if i < 0:
            continue
        try:
            yield ts(t), json.loads(rest[i:])
        except ValueError:
            continue


def launches(out):
    """(request, task) -> count of launches across every executor."""
    seen = {}
    for p in glob.glob(os.path.join(out, "ex*.launches")):
        for line in open(p):
            try:
                l = json.loads(line)["launch"]
            except (ValueError, KeyError):
                continue
            k = (l["request"], l["task"])
            seen[k] = seen.get(k, 0) + 1
    return seen


def in_doubt(out, name):
    """Request ids the driver resubmitted because their submit was in
    doubt (sent, then the scheduler failed)."""
    ids = set()
    p = os.path.join(out, name + ".err")
    if os.path.exists(p):
        for line in open(p, errors="replace"):
            if line.startswith("{"):
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if r.get("cause") == "in_doubt" and r.get("request"):
                    ids.add(r["request"])
    return ids


def main():
    out, fallback = sys.argv[1], float(sys.argv[2])
    ev = read_env(os.path.join(out, "events.env"))
    checks, failed = [], False

    def check(ok, what):
        nonlocal failed
        checks.append(("ok  " if ok else "FAIL") + " " + what)
        failed = failed or not ok

    before, brc = summary(out, "before")
    during, drc = summary(out, "during")
    for name, s, rc in (("before", before, brc), ("during", during, drc)):
        done = s is not None and s["ok"] and s["jobs_completed"] == s["jobs_submitted"]
        check(done and rc == 0, f"{name}: every job completed"
              + (f" ({s['jobs_completed']}/{s['jobs_submitted']})" if s else " (no summary)"))
    if during:
        check(during["lost_reports"] == 0, f"during: no task reported lost ({during['lost_reports']} lost reports)")
        check(during["duplicate_ok_reports"] == 0,
              f"during: no task done twice at the application level ({during['duplicate_ok_reports']} duplicate OKs)")
    seen = launches(out)
    twice = sorted(k for k, n in seen.items() if n > 1)
    check(not twice, f"no (request, task) launched twice: {len(seen)} launched, {len(twice)} more than once"
          + (f", e.g. {twice[:3]}" if twice else ""))

    # A submit cut off by a scheduler closing its connections is in doubt:
    # the driver resubmits it under a new id. Its first id must never
    # have launched, or the job would have run twice.
    doubt = in_doubt(out, "during")
    ran = sorted(r for r in doubt if any(k[0] == r for k in seen))
    check(not ran, f"{len(doubt)} submits in doubt at a failover, resubmitted; none of them launched under its first id"
          + (f" (launched: {ran})" if ran else ""))

    roll_start, roll_end = ev.get("roll.start"), ev.get("roll.end")
    check(roll_start is not None and roll_end is not None, "the roll ran to its end")
    if during and roll_end:
        check(ts(during["finished_at"]) >= ts(roll_end),
              "the driver ran through the whole roll (it finished after the last member was back)")

    members = []
    for svc, kind in [(f"nm{i}", "nm") for i in range(1, 5)] + \
                     [(f"scheduler{i}", "scheduler") for i in range(1, 4)] + [("coord-a", "coordinator")]:
        stop, stopped, ready = ev.get(svc + ".stop"), ev.get(svc + ".stopped"), ev.get(svc + ".ready")
        row = {"member": svc, "stop_s": None, "back_s": None, "drain": ""}
        if stop and stopped:
            row["stop_s"] = round(ts(stopped) - ts(stop), 2)
        if stop and ready:
            row["back_s"] = round(ts(ready) - ts(stop), 2)
        recs = [r for _, r in log_lines(out, svc)]
        drained = [r for r in recs if r.get("message") == "drained"]
        handed = [r.get("reservations_handed_back") for r in recs if "reservations_handed_back" in r]
        if kind == "nm":
            ok = len(drained) == 1 and drained[0].get("unfinished") == 0
            if drained:
                row["drain"] = f"handed back {handed[0] if handed else '?'} queued, " \
                               f"{drained[0].get('unfinished')} unfinished"
            check(ok, f"{svc}: drained once with every running task finished ({row['drain'] or 'no drain logged'})")
        elif kind == "scheduler":
            ok = len(drained) == 1 and drained[0].get("unlaunched") == 0 and drained[0].get("running") == 0
            if drained:
                row["drain"] = f"{drained[0].get('unlaunched')} unlaunched, {drained[0].get('running')} running"
            check(ok, f"{svc}: drained once with nothing unlaunched or running ({row['drain'] or 'no drain logged'})")
        members.append(row)

    gap = None
    if ev.get("coord-a.stop"):
        t0 = ts(ev["coord-a.stop"])
        took = [t for t, r in log_lines(out, "coord-b")
                if r.get("message") == "coordinator role changed" and r.get("active") is True and t >= t0]
        if took:
            gap = round(took[0] - t0, 2)
    check(gap is not None and gap < fallback,
          f"coord-b took over {gap} s after coord-a was sent SIGTERM, within the {fallback:g} s guidance fallback delay")
    members[-1]["drain"] = f"standby active after {gap} s"

    print("# Rolling upgrade under steady load\n")
    if during:
        print(f"Workload: {during['rate_jobs_per_s']:g} jobs/s of {during['tasks_per_job']} tasks x "
              f"{during['task_duration_ms']:g} ms; the same image restarted (the drain and restart path).\n")
    if roll_start and roll_end:
        roll_s = ts(roll_end) - ts(roll_start)
        span = f" of the second run's {during['elapsed_s']:.1f} s" if during else ""
        print(f"Roll: {roll_s:.1f} s{span}, for 4 node monitors, 3 schedulers, 1 coordinator.\n")
    print("| run | jobs | sched. delay p50 ms | p99 ms | response p50 ms | p99 ms | resubmitted tasks (by cause) | failovers (jobs in flight) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, s in (("before", before), ("during roll", during)):
        if not s:
            continue
        by = ", ".join(f"{k} {v}" for k, v in sorted((s.get("resubmitted_by") or {}).items()) if v) or "none"
        print(f"| {name} | {s['jobs_completed']}/{s['jobs_submitted']} | {s['sched_delay_ms']['p50']:.1f} | "
              f"{s['sched_delay_ms']['p99']:.1f} | {s['response_ms']['p50']:.1f} | {s['response_ms']['p99']:.1f} | "
              f"{s['resubmitted_tasks']} ({by}) | {len(s.get('failovers') or [])} "
              f"({sum(f.get('in_flight_jobs', 0) for f in s.get('failovers') or [])}) |")
    if before and during and before["sched_delay_ms"]["p50"] > 0 and before["sched_delay_ms"]["p99"] > 0:
        print(f"\nDuring / before: scheduling delay p50 x{during['sched_delay_ms']['p50'] / before['sched_delay_ms']['p50']:.2f}, "
              f"p99 x{during['sched_delay_ms']['p99'] / before['sched_delay_ms']['p99']:.2f}.")
    print("\n| member | SIGTERM to exit s | SIGTERM to ready again s | drain |")
    print("|---|---|---|---|")
    for r in members:
        print(f"| {r['member']} | {r['stop_s']} | {r['back_s']} | {r['drain']} |")
    print("\nChecks:\n")
    for c in checks:
        print(f"- {c}")
    json.dump({"checks": checks, "failed": failed, "before": before and before["sched_delay_ms"],
               "during": during and during["sched_delay_ms"], "members": members, "handover_s": gap},
              open(os.path.join(out, "result.json"), "w"), indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
