"""Checks of the Docker Swarm test (scripts/e2e/swarm.sh).

    swarm_report.py ready SCHEDULERS NODE_MONITORS APP < status.json
        exit 0 if `sparrow status --json` shows SCHEDULERS ready schedulers,
        each seeing NODE_MONITORS node monitors, and NODE_MONITORS ready
        node monitors offering APP.
    swarm_report.py report OUT TASK_DURATION
        (TASK_DURATION: the drain run's) reads the drivers' summaries (OUT/{roll,balanced,drain}.json), the
        executors' launch records (OUT/ex*.launches), nm3's log and
        OUT/events.env; prints a JSON report and exits 1 if a check failed.
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2elib import read_env  # noqa: E402
from rolling_report import in_doubt, log_lines, summary, ts  # noqa: E402

RUNS = ("roll", "balanced", "drain")


def ready(want_schedulers, want_nms, app):
    try:
        st = json.load(sys.stdin)
    except ValueError:
        return 1
    members = [m for m in st.get("members") or [] if m.get("health") == "ready"]
    scheds = [m for m in members if m.get("role") == "scheduler"
              and (m.get("scheduler") or {}).get("node_monitors") == want_nms]
    nms = [m for m in members if m.get("role") == "nodemonitor" and app in (m.get("apps") or [])]
    return 0 if len(scheds) == want_schedulers and len(nms) == want_nms else 1


def launch_records(out):
    """Every executor's launch records: (executor, request, task, at)."""
    recs = []
    for p in sorted(glob.glob(os.path.join(out, "ex*.launches"))):
        ex = os.path.basename(p).split(".")[0]
        for line in open(p):
            try:
                l = json.loads(line)["launch"]
            except (ValueError, KeyError):
                continue
            recs.append((ex, l["request"], l["task"], ts(l["at"])))
    return recs


def job_of(request):
    """The driver's job of a request id RUN-jN.ATTEMPT: a resubmission is
    a new request of the same job."""
    return re.sub(r"\.\d+$", "", request)


def duration_s(d):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s)", d)
    if not m:
        raise SystemExit(f"task duration {d!r}: want e.g. 200ms or 1s")
    return float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)


def delivered(s, rc):
    """Tasks whose messages reached the driver, of those it submitted."""
    if not s:
        return {"tasks_submitted": None, "tasks_delivered": None, "all": False}
    return {"jobs": f"{s['jobs_completed']}/{s['jobs_submitted']}", "tasks_submitted": s["tasks_submitted"],
            "tasks_delivered": s["tasks_completed"],
            "all": bool(rc == 0 and s["ok"] and s["tasks_completed"] == s["tasks_submitted"])}


def report(out, task_duration):
    ev = read_env(os.path.join(out, "events.env"))
    checks, failed = [], False

    def check(ok, what):
        nonlocal failed
        checks.append(("ok   " if ok else "FAIL ") + what)
        failed = failed or not ok

    runs = {n: summary(out, n) for n in RUNS}
    recs = launch_records(out)

    # Messages through the balancer's one address, run by run.
    through = {n: delivered(*runs[n]) for n in RUNS}
    for n in RUNS:
        d = through[n]
        check(d["all"], f"{n}: every task's messages reached the driver through the balancer "
                        f"({d['tasks_delivered']}/{d['tasks_submitted']})")

    # The roll: tasks lost (reported lost, or never completed) and tasks run
    # twice (one job's task launched more than once, under any request id).
    roll, _ = runs["roll"]
    per_task = {}
    for _, req, task, _ in recs:
        k = (job_of(req), task)
        per_task[k] = per_task.get(k, 0) + 1
    roll_twice = sorted(k for k, n in per_task.items() if n > 1 and k[0].startswith("roll-"))
    doubt = in_doubt(out, "roll")
    lost = None
    if roll:
        lost = roll["lost_reports"] + roll["failed_reports"] + (roll["tasks_submitted"] - roll["tasks_completed"])
    twice = len(roll_twice) + (roll["duplicate_ok_reports"] if roll else 0)
    rolled = "roll.end" in ev
    check(rolled, "every service was updated to the current build under load "
                  "(node monitors, executors, then the schedulers)")
    check(lost == 0, f"roll: {lost} tasks lost")
    check(twice == 0, f"roll: {twice} tasks run twice" + (f", e.g. {roll_twice[:3]}" if roll_twice else ""))
    if roll and rolled:
        check(ts(roll["finished_at"]) >= ts(ev["roll.end"]), "roll: the driver ran through the whole roll")

    # The drained node monitor: the tasks running on its node when it began
    # draining (launched less than a task's duration before), whether it
    # finished them, and whether each reached the driver.
    dur = duration_s(task_duration)
    nm3 = [(t, r) for t, r in log_lines(out, "nm3")]
    t_drain = ev.get("nm3.drain")
    began = [t for t, r in nm3 if t_drain and t >= ts(t_drain) and str(r.get("message", "")).startswith("draining")]
    done = [r for t, r in nm3 if t_drain and t >= ts(t_drain) and r.get("message") == "drained"]
    drain_s, drc = runs["drain"]
    running, unreported = [], []
    if began:
        running = sorted((req, task) for ex, req, task, at in recs
                         if ex == "ex3" and began[0] - dur < at <= began[0])
        incomplete = {i.split(":")[0] for i in (drain_s or {}).get("incomplete_tasks") or []}
        unreported = [k for k in running if f"{k[0]}/{k[1]}" in incomplete]
    unfinished = done[0].get("unfinished") if done else None
    check(bool(began) and bool(done), "nm3 drained once when scaled to 0")
    check(len(running) > 0, f"nm3 ran {len(running)} tasks when it began draining")
    check(unfinished == 0, f"nm3: {unfinished} of its running tasks unfinished when it left")
    reported = bool(drain_s and drc == 0 and drain_s["ok"] and drain_s["lost_reports"] == 0
                    and drain_s["failed_reports"] == 0 and not unreported)
    check(reported, f"nm3: the {len(running)} tasks running when it began draining were reported to the driver"
                    f" ({len(running) - len(unreported)} of {len(running)})")

    res = {
        "versions": open(os.path.join(out, "versions")).read().strip() if os.path.exists(
            os.path.join(out, "versions")) else None,
        "messages_through_balancer": through,
        "rolling_update": {"tasks_lost": lost, "tasks_run_twice": twice,
                           "submits_in_doubt_resubmitted": len(doubt),
                           "failovers": len(roll.get("failovers") or []) if roll else None,
                           "roll_s": round(ts(ev["roll.end"]) - ts(ev["roll.start"]), 1) if rolled else None},
        "drained_node_monitor": {"service": "nm3", "running_at_drain": len(running),
                                 "unfinished": unfinished,
                                 "reported": len(running) - len(unreported),
                                 "drain_s": round(ts(ev["nm3.drained"]) - ts(t_drain), 1)
                                 if t_drain and ev.get("nm3.drained") else None,
                                 "all": unfinished == 0 and reported},
        "total_s": int(ev["total_s"]) if ev.get("total_s") else None,
        "checks": checks,
        "failed": failed,
    }
    print(json.dumps(res, indent=1))
    return 1 if failed else 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "ready":
        return ready(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    if len(sys.argv) == 4 and sys.argv[1] == "report":
        return report(sys.argv[2], sys.argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
