"""The Python Frontend and Executor against live loopback fleets of the
project's binary (sparrow scheduler, sparrow nodemonitor)."""

import collections
import threading
import time
import unittest

import sparrowfleet as sf
from tests.fleet import Fleet, wait_until

APP = "pyapp"


def submit_when_known(fe, job, timeout=30):
    """Submits job, again while the scheduler has not yet heard through
    gossip that a node monitor hosts the app."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return fe.submit(job)
        except sf.UnknownAppError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


class Recorder:
    """Counts launches (executor side) and messages (frontend side) per task."""

    def __init__(self):
        self.lock = threading.Lock()
        self.launches = collections.Counter()
        self.messages = collections.Counter()
        self.bodies = {}
        self.failovers = []

    def on_message(self, m):
        with self.lock:
            key = (m.task.request_id, m.task.task_id)
            self.messages[key] += 1
            self.bodies[key] = (m.status, m.body)

    def on_failover(self, ev):
        with self.lock:
            self.failovers.append(ev)

    def launched(self, task):
        with self.lock:
            self.launches[(task.ref.request_id, task.ref.task_id)] += 1

    def got(self, keys):
        with self.lock:
            return all(self.messages[k] > 0 for k in keys)


def job_of(n, prefix):
    return sf.Job(tasks=[sf.Task(str(i), ("%s-%d" % (prefix, i)).encode()) for i in range(n)])


def keys_of(rid, job):
    return [(rid, t.id) for t in job.tasks]


class LiveFleetTest(unittest.TestCase):
    def setUp(self):
        self.fleet = Fleet()
        self.closers = []
        self.rec = Recorder()

    def tearDown(self):
        for close in reversed(self.closers):
            close()
        if self._outcome_failed():
            print(self.fleet.logs())
        self.fleet.close()

    def _outcome_failed(self):
        result = getattr(self._outcome, "result", None)
        errors = getattr(result, "errors", []) + getattr(result, "failures", [])
        return any(test is self for test, _ in errors)

    def executor(self, nm, run, **kw):
        def traced(task):
            self.rec.launched(task)
            return run(task)
        ex = sf.Executor(APP, traced, node_monitor=nm.service, register_timeout=30, **kw)
        self.closers.append(ex.close)
        return ex

    def frontend(self, scheds, **kw):
        kw.setdefault("timeout", 1.0)
        fe = sf.Frontend(APP, [s.service for s in scheds], self.rec.on_message,
                         on_failover=self.rec.on_failover, **kw)
        self.closers.append(fe.close)
        return fe

    def test_jobs_complete_exactly_once(self):
        sched = self.fleet.scheduler()
        nms = [self.fleet.nodemonitor("nm%d" % i, slots=3) for i in range(2)]
        executors = [self.executor(nm, lambda t: b"ran:" + t.message) for nm in nms]
        fe = self.frontend([sched])
        want = {}
        for j in range(15):
            job = job_of(4, "job%d" % j)
            rid = submit_when_known(fe, job)
            for t in job.tasks:
                want[(rid, t.id)] = b"ran:" + t.message
        wait_until(lambda: self.rec.got(want), 60, "every task's message")
        # One more job through the same path, so that a duplicate of an
        # earlier task would have had its time to arrive.
        last = job_of(1, "last")
        rid = fe.submit(last)
        wait_until(lambda: self.rec.got(keys_of(rid, last)), 30, "the last job's message")
        with self.rec.lock:
            for key, body in want.items():
                self.assertEqual(self.rec.launches[key], 1, key)
                self.assertEqual(self.rec.messages[key], 1, key)
                self.assertEqual(self.rec.bodies[key], (sf.STATUS_OK, body), key)
            self.assertEqual(set(self.rec.messages), set(want) | {(rid, "0")})
        self.assertEqual(fe.in_flight(), [])
        self.assertEqual(self.rec.failovers, [])
        # The node monitors launched through the extensions the executors
        # registered with, whose replies carry the tasks' ends.
        for ex in executors:
            self.assertEqual(ex.features, sf.executor.FEATURES)
            self.assertEqual(ex.launch_calls["launchTask"], 0, ex.launch_calls)
        self.assertGreater(sum(ex.launch_calls["launchTaskAndWait"] + ex.launch_calls["launchTasksAndWait"]
                               for ex in executors), 0)

    def test_scheduler_killed_midway_is_failed_over(self):
        first, second = self.fleet.scheduler("sched1"), self.fleet.scheduler("sched2")
        nm = self.fleet.nodemonitor("nm", slots=4)
        release = threading.Event()
        self.closers.append(release.set)

        def held(task):
            if task.message.startswith(b"held"):
                release.wait(30)
            return b"ran:" + task.message

        self.executor(nm, held)
        fe = self.frontend([first, second], heartbeat=0.1)
        held_jobs = {}
        for j in range(3):
            job = job_of(2, "held%d" % j)
            held_jobs[submit_when_known(fe, job)] = job
        self.assertEqual(fe.scheduler, first.service)
        wait_until(lambda: sum(self.rec.launches.values()) >= 4, 30, "four held tasks to run")
        first.kill()
        wait_until(lambda: self.rec.failovers, 15, "the frontend to fail over")
        ev = self.rec.failovers[0]
        self.assertEqual((ev.from_, ev.to), (first.service, second.service))
        self.assertEqual(fe.scheduler, second.service)
        release.set()
        # Every job submitted through the dead scheduler either completed or
        # was reported in flight; the reported ones are resubmitted as new
        # jobs and complete through the second scheduler.
        reported = {j.request_id for e in self.rec.failovers for j in e.in_flight}
        for rid, job in held_jobs.items():
            done = self.rec.got(keys_of(rid, job))
            self.assertTrue(done or rid in reported, "job %s neither completed nor reported" % rid)
        resubmitted = []
        for rid in reported:
            job = held_jobs[rid]
            again = sf.Job(tasks=job.tasks)
            resubmitted.append((submit_when_known(fe, again), again))
        fresh = job_of(3, "after")
        resubmitted.append((submit_when_known(fe, fresh), fresh))
        for rid, job in resubmitted:
            wait_until(lambda: self.rec.got(keys_of(rid, job)), 60, "job %s through the second scheduler" % rid)
            for key in keys_of(rid, job):
                self.assertEqual(self.rec.messages[key], 1, key)
                self.assertEqual(self.rec.bodies[key][0], sf.STATUS_OK, key)

    def test_node_monitor_restart_is_rejoined(self):
        sched = self.fleet.scheduler()
        nm = self.fleet.nodemonitor("nm-a", slots=2)
        ex = self.executor(nm, lambda t: b"ran:" + t.message, watch=0.1)
        fe = self.frontend([sched])
        before = job_of(2, "before")
        rid = submit_when_known(fe, before)
        wait_until(lambda: self.rec.got(keys_of(rid, before)), 30, "a job before the restart")
        self.assertEqual(ex.registrations, 1)

        nm.kill()
        wait_until(lambda: not ex.node_monitor_reachable, 10, "the executor to see its node monitor gone")
        self.fleet.restart(nm, "nm-b")
        wait_until(lambda: ex.registrations == 2 and ex.node_monitor_reachable, 15,
                   "the executor to register with the restarted node monitor")

        after = job_of(3, "after")
        rid = submit_when_known(fe, after)
        wait_until(lambda: self.rec.got(keys_of(rid, after)), 30, "a job after the restart")
        for key in keys_of(rid, after):
            self.assertEqual(self.rec.launches[key], 1, key)
            self.assertEqual(self.rec.bodies[key], (sf.STATUS_OK, b"ran:" + after.tasks[int(key[1])].message))

    def test_drain_lets_running_tasks_finish_and_takes_no_more(self):
        sched = self.fleet.scheduler()
        nm = self.fleet.nodemonitor("nm", slots=2)
        release = threading.Event()
        self.closers.append(release.set)
        ex = self.executor(nm, lambda t: (release.wait(30), b"ran:" + t.message)[1])
        fe = self.frontend([sched])
        job = job_of(1, "draining")
        rid = submit_when_known(fe, job)
        wait_until(lambda: ex.running == 1, 30, "the task to run")
        drained = []
        drainer = threading.Thread(target=lambda: drained.append(ex.drain(30)))
        drainer.start()
        self.closers.append(drainer.join)
        wait_until(lambda: ex.draining, 5, "the drain to start")
        self.assertEqual(drained, [], "drain returned while a task ran")

        refused = job_of(1, "refused")
        refused_id = fe.submit(refused)
        wait_until(lambda: self.rec.got(keys_of(refused_id, refused)), 30, "the refused launch's report")
        self.assertEqual(self.rec.bodies[(refused_id, "0")][0], sf.STATUS_FAILED)
        self.assertEqual(self.rec.launches[(refused_id, "0")], 0)

        release.set()
        drainer.join(30)
        self.assertEqual(drained, [True])
        wait_until(lambda: self.rec.got(keys_of(rid, job)), 30, "the drained task's message")
        self.assertEqual(self.rec.bodies[(rid, "0")], (sf.STATUS_OK, b"ran:draining-0"))


if __name__ == "__main__":
    unittest.main()
