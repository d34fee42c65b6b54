#!/usr/bin/python3
"""CPU per task of the Python client's executor, with and without the
launch extensions (launchTaskAndWait, launchTasksAndWait).

A loopback fleet of one scheduler and one node monitor (the sparrow binary),
one no-op Python executor in a process of its own, and a Python frontend
that submits JOBS jobs of TASKS tasks, one every GAP seconds. Each round
runs the executor once as it registers by default (the extensions) and
once registered with the original registerBackend (only launchTask), and
once with no jobs, whose CPU (start-up, imports, registration) is taken
off the other two. Prints one JSON object per run (messages counts every
task message the frontend got, tasks the distinct ones) and, last, the
ratios.

    SPARROW_BIN=bin/sparrow /usr/bin/python3 scripts/bench/python-executor.py --rounds 2
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "..", "..", "clients", "python")
sys.path.insert(0, PACKAGE)

import sparrowfleet as sf  # noqa: E402
from tests.fleet import Fleet  # noqa: E402

APP = "pyexec-bench"


def serve_executor(node_monitor, original):
    """The executor process: runs no-op tasks until SIGTERM, then prints its
    CPU seconds and launch calls."""
    ex = sf.Executor(APP, lambda t: b"", node_monitor=node_monitor, register_timeout=30, workers=8)
    if original:
        ex.features = 0
        ex.register()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print("ready", flush=True)
    stop.wait()
    t = os.times()
    print(json.dumps({"cpu_seconds": t.user + t.system, "launch_calls": ex.launch_calls,
                      "features": ex.features}), flush=True)
    os._exit(0)


def run(mode, jobs, tasks, gap):
    """One run: the executor's CPU seconds and launch calls, and the tasks."""
    fleet = Fleet()
    try:
        sched = fleet.scheduler()
        nm = fleet.nodemonitor("nm", slots=8)
        ex = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve-executor", nm.service]
                              + (["--original"] if mode == "original" else []),
                              stdout=subprocess.PIPE, text=True)
        if ex.stdout.readline().strip() != "ready":
            raise RuntimeError("the executor did not start")
        lock, all_done, done = threading.Lock(), threading.Event(), set()
        want = tasks * (jobs + 1)
        messages = [0]

        def on_message(m):
            with lock:
                messages[0] += 1
                done.add((m.task.request_id, m.task.task_id))
                if len(done) >= want:
                    all_done.set()

        fe = sf.Frontend(APP, [sched.service], on_message, timeout=2.0)

        def job():
            return sf.Job(tasks=[sf.Task(str(i), b"x") for i in range(tasks)])

        deadline = time.monotonic() + 30
        while True:  # the first job waits for gossip to name the app's node
            try:
                fe.submit(job())
                break
            except sf.UnknownAppError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        for _ in range(jobs):
            fe.submit(job())
            time.sleep(gap)
        if not all_done.wait(120):
            raise RuntimeError("%d of %d tasks reported" % (len(done), want))
        ex.send_signal(signal.SIGTERM)
        out = json.loads(ex.stdout.readline())
        ex.wait(10)
        fe.close()
        with lock:
            out.update(mode=mode, tasks=want, messages=messages[0])
        return out
    finally:
        fleet.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2, help="rounds of the three runs")
    ap.add_argument("--jobs", type=int, default=1000, help="jobs per run")
    ap.add_argument("--tasks", type=int, default=4, help="tasks per job")
    ap.add_argument("--gap", type=float, default=0.004, help="seconds between submissions")
    ap.add_argument("--serve-executor", metavar="NODE_MONITOR", help=argparse.SUPPRESS)
    ap.add_argument("--original", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.serve_executor:
        serve_executor(a.serve_executor, a.original)
    ratios = []
    for _ in range(a.rounds):
        base = run("extensions", 0, a.tasks, a.gap)
        print(json.dumps(base), flush=True)
        per_task = {}
        for mode in ("extensions", "original"):
            r = run(mode, a.jobs, a.tasks, a.gap)
            r["cpu_us_per_task"] = (r["cpu_seconds"] - base["cpu_seconds"]) / r["tasks"] * 1e6
            per_task[mode] = r["cpu_us_per_task"]
            print(json.dumps(r), flush=True)
        ratios.append(per_task["extensions"] / per_task["original"])
    print(json.dumps({"extensions_over_original": ratios}))


if __name__ == "__main__":
    main()
