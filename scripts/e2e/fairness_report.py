#!/usr/bin/env python3
"""Checks and tabulates the fairness coordinator's fault scenarios
(used by scripts/e2e/fairness.sh).

  fairness_report.py check OUT NAME    check scenario NAME, write
                                       OUT/NAME/result.json; exit 1 if a
                                       check failed
  fairness_report.py table OUT NAME... markdown table of the results
  fairness_report.py ready OUT fleet COORD [STANDBY]
  fairness_report.py ready OUT share SINCE
                                       exit 0 when the fleet is ready, or
                                       the constrained user at its share
                                       (fairness.sh's waits; see ready)

OUT holds the run's shared files: timeline.jsonl (fairness_poll.py's
samples of every coordinator's last guidance and the node monitors' per-user
counts), exN.launches (each executor's launch lines) and nmN.log (`docker
logs -t` of each node monitor). OUT/NAME holds the scenario's fault.env
(host times in seconds since the epoch, written by fairness.sh) and each
driver's summary and exit status (USER.json, USER.rc).

The share check reads what the fleet does: the constrained user's running
tasks summed over the node monitors (sampled four times a second) and
averaged per coordinator period. After the coordinator's return (or, for
a kill, the standby's first guidance) that mean must be within TOL slots
of the user's CMMF target (from the coordinators' guidance) for K
consecutive periods starting within WITHIN seconds, and then within it for
at least HOLD of the OBSERVE seconds watched. The coordinators' own view
(their published running counts) is reported beside it.
"""
import collections
import json
import os
import statistics
import sys

import e2elib

CONSTRAINED = os.environ.get("FAIR_CONSTRAINED", "spark")
TOL = float(os.environ.get("FAIR_TOL", "1"))
K = int(os.environ.get("FAIR_K", "3"))
WITHIN = float(os.environ.get("FAIR_RECOVER_WITHIN_S", "10"))
OBSERVE = float(os.environ.get("FAIR_OBSERVE_S", "15"))
HOLD = float(os.environ.get("FAIR_HOLD", "0.8"))
PERIOD = float(os.environ.get("FAIR_PERIOD_S", "1"))
NODES = int(os.environ.get("FAIR_NODES", "8"))
EXECUTORS = [f"ex{i}" for i in range(1, NODES + 1)]


def rfc3339(s):
    """RFC 3339 with nanoseconds, Z -> seconds since the epoch."""
    import calendar
    import re

    m = re.match(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?Z", s or "")
    if not m:
        return None
    y, mo, d, h, mi, se = (int(x) for x in m.groups()[:6])
    return calendar.timegm((y, mo, d, h, mi, se, 0, 0, 0)) + float("0." + (m.group(7) or "0"))


def guidances(samples):
    """Every distinct guidance version the poller saw, oldest first:
    (at, coordinator, reports, running, target) of the constrained user
    (running and target None when the guidance does not list it)."""
    seen = {}
    for s in samples:
        for name, c in (s.get("coord") or {}).items():
            if not c or not c.get("version") or (name, c["version"]) in seen:
                continue
            u = (c.get("users") or {}).get(CONSTRAINED)
            seen[(name, c["version"])] = {
                "at": rfc3339(c.get("at")), "coord": name, "reports": c.get("reports"),
                "running": u["running"] if u else None, "target": u["target"] if u else None,
                "users": c.get("users") or {}}
    return sorted((g for g in seen.values() if g["at"]), key=lambda g: g["at"])


def within(g):
    return g["running"] is not None and abs(g["running"] - g["target"]) <= TOL


def nm_mean(samples, a, b):
    xs = [s["nm"]["running"].get(CONSTRAINED, 0) for s in samples
          if a <= s["t"] < b and s["nm"]["ok"] == NODES]
    return (round(statistics.mean(xs), 2), len(xs)) if xs else (None, 0)


def windows(samples, a, b):
    """The constrained user's running tasks summed over the node monitors,
    averaged per PERIOD-long window from a to b: [(start, mean or None)].
    Only samples where every node monitor answered count."""
    out, t = [], a
    while t + PERIOD <= b + 1e-9:
        xs = [s["nm"]["running"].get(CONSTRAINED, 0) for s in samples
              if t <= s["t"] < t + PERIOD and s["nm"]["ok"] == NODES]
        out.append((t, statistics.mean(xs) if xs else None))
        t += PERIOD
    return out


def settled(ws, target):
    """The first window that starts K consecutive windows within TOL of
    target, or None."""
    ok = [m is not None and abs(m - target) <= TOL for _, m in ws]
    for i in range(len(ws) - K + 1):
        if all(ok[i:i + K]):
            return i
    return None


def log_events(out, what, a, b):
    """(node, host time) of node monitor log lines containing what in [a, b)."""
    ev = []
    for i in range(1, NODES + 1):
        p = os.path.join(out, f"nm{i}.log")
        if not os.path.exists(p):
            continue
        for raw in open(p, errors="replace"):
            t, _, rest = raw.partition(" ")
            if what in rest:
                ts = rfc3339(t)
                if ts and a <= ts < b:
                    ev.append((f"nm{i}", ts))
    return ev


def check(out, name):
    d = os.path.join(out, name)
    env = e2elib.read_env(os.path.join(d, "fault.env"))
    fault_at, back_at, end_at = e2elib.fnum(env, "fault_at"), e2elib.fnum(env, "back_at"), e2elib.fnum(env, "end_at")
    start_at = e2elib.fnum(env, "start_at")
    res = {"scenario": name, "checks": [], "failed": [], "tol": TOL, "k": K, "within_s": WITHIN,
           "coordinators": env.get("coordinators"), "fault": env.get("fault"),
           "scenario_s": int(float(env.get("scenario_s", "0") or 0)),
           "loadavg": f"{env.get('loadavg_start', '?')}→{env.get('loadavg_end', '?')}"}

    def ok(cond, what):
        res["checks"].append(("PASS " if cond else "FAIL ") + what)
        if not cond:
            res["failed"].append(what)

    # Drivers: every job completed.
    runs = {}
    for user in env.get("users", "").split():
        drv, rc = {}, "?"
        try:
            lines = [l for l in open(os.path.join(d, f"{user}.json")) if l.strip().startswith("{")]
            drv = json.loads(lines[-1])
        except (OSError, IndexError, ValueError):
            pass
        if os.path.exists(os.path.join(d, f"{user}.rc")):
            rc = open(os.path.join(d, f"{user}.rc")).read().strip()
        runs[user] = drv
        ok(rc == "0" and drv.get("ok") is True,
           f"{user}'s driver exit 0, every job completed (rc {rc}, {drv.get('jobs_completed')}/{drv.get('jobs_submitted')} jobs"
           + (f"; {drv['error']}" if drv.get("error") else "") + ")")
    res["drivers"] = {u: {k: r.get(k) for k in ("jobs_submitted", "jobs_completed", "tasks_completed",
                                                 "lost_reports", "failed_reports", "resubmitted_jobs",
                                                 "failovers", "response_ms", "elapsed_s")}
                      for u, r in runs.items()}

    # Exactly once: no (request, task) of this scenario's runs launched
    # twice across the executors (the fleet is shared by the scenarios,
    # so requests are told apart by their run id prefix).
    prefixes = tuple(f"{name}-{u}-" for u in runs)
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
            if l["request"].startswith(prefixes):
                launches[(l["request"], l["task"])] += 1
    dups = [k for k, n in launches.items() if n > 1]
    done = sum((r.get("tasks_completed") or 0) for r in runs.values())
    res["launches"], res["duplicate_launches"] = sum(launches.values()), len(dups)
    ok(not dups, f"no (request, task) launched twice across executors ({sum(launches.values())} launches"
       + (f"; duplicates: {dups[:5]}" if dups else "") + ")")
    ok(sum(launches.values()) >= done, f"every completed task was launched ({sum(launches.values())} launches, {done} tasks completed)")

    samples = [s for s in e2elib.timeline(out) if start_at and end_at and start_at <= s["t"] <= end_at]
    gs = [g for g in guidances(samples) if g["at"] >= (start_at or 0)]
    res["guidance_versions"] = len(gs)
    ok(fault_at is not None and back_at is not None, "fault injected and the coordinator back (or taken over)")
    if fault_at is None or back_at is None:
        return finish(d, res)

    # The target: the constrained user's CMMF allocation in the last
    # guidance before the fault.
    before = [g for g in gs if g["at"] < fault_at and g["target"] is not None]
    target = res["target"] = before[-1]["target"] if before else None
    res["targets_before"] = {u: round(v["target"], 2) for u, v in (before[-1]["users"] if before else {}).items()}
    ok(target is not None, f"a guidance before the fault gave {CONSTRAINED} a CMMF target (targets {res['targets_before']})")
    if target is None:
        return finish(d, res)

    # Before the fault: the coordinated fleet gave the constrained user its
    # share (else the test would show nothing): K consecutive periods
    # within TOL among the 3K before the fault. (Exactly the last K was too
    # strict: one period's dip as tasks end together, [4, 2.5, 4], failed
    # a run whose fleet was at its target.)
    pre = windows(samples, fault_at - 3 * K * PERIOD, fault_at)
    res["nm_before"] = [None if m is None else round(m, 2) for _, m in pre]
    ok(settled(pre, target) is not None,
       f"before the fault {CONSTRAINED} ran within {TOL:g} of its target {target:g} for {K} consecutive periods "
       f"of the {3 * K} before it (node monitors' sum, per-period means {res['nm_before']})")

    # A standby's takeover: its first guidance after the fault. When the
    # coordinator does not come back (a kill), the takeover is the return.
    takeover = next((g for g in gs if g["at"] >= fault_at and g["coord"] != env.get("active_before")), None)
    res["takeover_s"] = round(takeover["at"] - fault_at, 2) if takeover else None
    res["takeover_by"] = takeover["coord"] if takeover else None
    if env.get("back") == "takeover" and takeover:
        back_at = takeover["at"]
    res["back_after_fault_s"] = round(back_at - fault_at, 2)

    # During the outage: who published, did node monitors fall back, what
    # the constrained user got meanwhile.
    during = [g for g in gs if fault_at <= g["at"] < back_at]
    res["published_during"] = dict(collections.Counter(g["coord"] for g in during))
    stale = log_events(out, "coordinator guidance stale", fault_at, end_at)
    res["nm_fell_back"] = len({n for n, _ in stale})
    res["fallbacks"] = [(n, round(t - fault_at, 2)) for n, t in stale]
    res["first_fallback_s"] = round(min(t for _, t in stale) - fault_at, 2) if stale else None
    stale_s = float(env.get("stale_s", "3"))
    res["nm_outage"] = nm_mean(samples, fault_at + stale_s + PERIOD, back_at)[0]

    # After the return: the node monitors' count of the constrained user's
    # running tasks (what the fleet does, not what the coordinator
    # believes) settles within TOL of the target for K periods, within
    # WITHIN seconds, and then holds for most of the observation window.
    ws = windows(samples, back_at, back_at + OBSERVE)
    i = settled(ws, target)
    res["nm_after"] = [None if m is None else round(m, 2) for _, m in ws]
    res["recovery_s"] = round(i * PERIOD, 2) if i is not None else None
    rest = [m for _, m in ws[i:]] if i is not None else []
    res["hold"] = round(sum(1 for m in rest if m is not None and abs(m - target) <= TOL) / len(rest), 2) if rest else None
    obs = [x for x in samples if back_at <= x["t"] < back_at + OBSERVE and x["nm"]["ok"] == NODES]
    res["backlogged"] = round(sum(1 for x in obs if x["nm"]["queued"].get(CONSTRAINED, 0) > 0) / len(obs), 2) if obs else None
    res["nm_after_mean"] = round(statistics.mean(m for m in rest if m is not None), 2) if rest and any(m is not None for m in rest) else None
    since = "the standby's first guidance" if env.get("back") == "takeover" else "the return"
    ok(i is not None and i * PERIOD <= WITHIN and (res["hold"] or 0) >= HOLD,
       f"{CONSTRAINED} back within {TOL:g} of its target for {K} periods within {WITHIN:g} s of {since}, "
       f"then within it for at least {HOLD:.0%} of the {OBSERVE:g} s observed (took {res['recovery_s']} s, "
       f"held {res['hold']}; per-period means {res['nm_after']})")
    # The coordinator's own view, for comparison: K consecutive guidances.
    after = [g for g in gs if g["at"] >= back_at]
    grec = next((after[j] for j in range(len(after) - K + 1) if all(within(g) for g in after[j:j + K])), None)
    res["guidance_recovery_s"] = round(grec["at"] - back_at, 2) if grec else None
    res["recovered_by"] = grec["coord"] if grec else None
    res["guidance_after"] = [(g["coord"], g["reports"], g["running"]) for g in after[:16]]
    if env.get("expect_fallback") == "1":
        ok(res["nm_fell_back"] > 0, f"node monitors fell back to local weights ({res['nm_fell_back']} of {NODES})")
    if env.get("expect_takeover") == "1":
        ok(takeover is not None, f"the standby took over ({res['takeover_by']} after {res['takeover_s']} s)")
    return finish(d, res)


FINISH_KEYS = ("targets_before", "published_during", "nm_fell_back", "first_fallback_s", "takeover_by", "takeover_s",
            "back_after_fault_s", "recovery_s", "hold", "guidance_recovery_s", "recovered_by", "nm_outage",
            "nm_after_mean", "backlogged", "guidance_after", "guidance_versions")


def finish(d, res):
    return e2elib.finish(d, res, FINISH_KEYS)


fmt = e2elib.fmt


def table(out, names):
    print("| scenario | coordinators | fault | guidance published during the fault | node monitors fell back "
          "| standby took over | constrained user's running tasks: CMMF target; node monitors' sum before / during the outage / after "
          "| settled after the return (node monitors; coordinator's view) | held after settling "
          "| drivers: jobs completed, lost reports | exactly-once | result | time | host load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, r in e2elib.results(out, names):
        if r is None:
            print(f"| {n} | (no result) |" + " |" * 12)
            continue
        pub = ", ".join(f"{k} {v}" for k, v in sorted((r.get("published_during") or {}).items())) or "none"
        fb = f"{r.get('nm_fell_back')} of {NODES}" + (f", first {r['first_fallback_s']} s after the fault" if r.get("first_fallback_s") is not None else "")
        to = f"{r['takeover_by']}, {r['takeover_s']} s after the fault" if r.get("takeover_by") else "no"
        nb = [m for m in (r.get("nm_before") or []) if m is not None]
        shares = (f"{fmt(r.get('target'))}; {fmt(round(statistics.mean(nb), 2) if nb else None)} / "
                  f"{fmt(r.get('nm_outage'))} / {fmt(r.get('nm_after_mean'))}")
        rec = f"{fmt(r.get('recovery_s'), ' s')}; {fmt(r.get('guidance_recovery_s'), ' s')}"
        hold = "–" if r.get("hold") is None else f"{r['hold']:.0%} of periods"
        drv = ", ".join(f"{u} {x.get('jobs_completed')}/{x.get('jobs_submitted')}, {x.get('lost_reports') or 0} lost"
                        for u, x in (r.get("drivers") or {}).items())
        verdict = "PASS" if not r.get("failed") else "FAIL: " + "; ".join(r["failed"])
        xf = os.path.join(out, n, "xfail")
        if os.path.exists(xf):  # expected to fail (fairness.sh's FAIR_XFAIL)
            verdict = open(xf).read().strip() + " (expected to fail) " + verdict
        print(f"| {n} | {r.get('coordinators')} | {r.get('fault')} | {pub} | {fb} | {to} | {shares} | {rec} | {hold} | {drv} "
              f"| {r.get('duplicate_launches')} dup of {r.get('launches')} launches "
              f"| {verdict} | {r.get('scenario_s')} s | {r.get('loadavg')} |")


def ready(out, mode, since=None):
    """For fairness.sh's waits, on the poller's latest samples.
    "fleet COORD [STANDBY]": every node monitor answers, COORD publishes
    from all of their reports and STANDBY (if named) stands by. "share
    SINCE": the last K guidances computed after SINCE all had the
    constrained user within TOL of its target."""
    samples = e2elib.timeline(out)[-8:]
    if not samples:
        return False
    if mode[0] == "fleet":
        last = samples[-1]
        c = (last.get("coord") or {}).get(mode[1]) or {}
        if last["nm"]["ok"] != NODES or not c.get("active") or c.get("reports") != NODES:
            return False
        if len(mode) > 2:
            sb = (last.get("coord") or {}).get(mode[2])
            return bool(sb) and not sb.get("active")
        return True
    all_samples = e2elib.timeline(out)
    gs = [g for g in guidances(all_samples) if g["at"] >= float(since) and g["target"] is not None]
    if len(gs) < K or not all(within(g) for g in gs[-K:]):
        return False
    end = all_samples[-1]["t"]
    return settled(windows(all_samples, end - K * PERIOD, end), gs[-1]["target"]) == 0


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "ready":
        if sys.argv[3] == "share":
            sys.exit(0 if ready(sys.argv[2], ["share"], sys.argv[4]) else 1)
        sys.exit(0 if ready(sys.argv[2], sys.argv[3:]) else 1)
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    if len(sys.argv) >= 3 and sys.argv[1] == "table":
        table(sys.argv[2], sys.argv[3:])
        sys.exit(0)
    print(__doc__, file=sys.stderr)
    sys.exit(2)
