"""Frontend against fake schedulers served in this process: refusal codes,
draining, failover and in-doubt submits, the heartbeat, message tracking."""

import threading
import unittest

import sparrowfleet as sf
from sparrowfleet import _rpc
from sparrowfleet._gen.sparrowrpc import FrontendService, SchedulerService, constants
from sparrowfleet._gen.sparrowrpc.ttypes import IncompleteRequestException, TFullTaskId
from tests.fleet import wait_until


class FakeScheduler:
    """A SchedulerService that accepts registrations and answers submitJob
    with refuse(req): None accepts, an exception is raised to the caller.
    Every non-empty request is recorded."""

    def __init__(self, refuse=None):
        self.refuse = refuse
        self.requests = []
        self.registered = []
        self.hold = None  # an Event submitJob waits on (at most 5 s), when set
        self.server = _rpc.Server(SchedulerService.Processor(self), "127.0.0.1:0", "127.0.0.1", "fake-scheduler")
        self.address = self.server.address

    def registerFrontend(self, app, socketAddress):
        self.registered.append((app, socketAddress))
        return True

    def submitJob(self, req):
        if not req.tasks:
            return
        self.requests.append(req)
        if self.hold is not None:
            self.hold.wait(5)
        if self.refuse is not None:
            err = self.refuse(req)
            if err is not None:
                raise err

    def sendFrontendMessage(self, app, taskId, status, message):
        pass

    def taskDone(self, app, taskId, status, message, nodeMonitorAddress):
        pass

    def close(self):
        self.server.close()


def one_task_job(request_id=""):
    return sf.Job(tasks=[sf.Task("0", b"x")], request_id=request_id)


class FrontendTest(unittest.TestCase):
    def setUp(self):
        self.closers = []
        self.messages = []
        self.failovers = []

    def tearDown(self):
        for close in reversed(self.closers):
            close()

    def fake(self, refuse=None):
        s = FakeScheduler(refuse)
        self.closers.append(s.close)
        return s

    def frontend(self, schedulers, **kw):
        kw.setdefault("heartbeat", 0)
        kw.setdefault("timeout", 1.0)
        fe = sf.Frontend("app", [s.address for s in schedulers], self.messages.append,
                         on_failover=self.failovers.append, **kw)
        self.closers.append(fe.close)
        return fe

    def test_refusals_by_code(self):
        cases = [
            ("saturated", constants.REFUSAL_SATURATED, 1500, sf.SaturatedError),
            ("unknown app", constants.REFUSAL_UNKNOWN_APP, None, sf.UnknownAppError),
            ("unplaceable", constants.REFUSAL_UNPLACEABLE, None, sf.UnplaceableError),
            ("invalid", constants.REFUSAL_INVALID, None, sf.InvalidRequestError),
        ]
        for name, code, after, cls in cases:
            with self.subTest(name):
                s = self.fake(lambda req, code=code, after=after: IncompleteRequestException(
                    message="refused", code=code, retryAfterMs=after))
                fe = self.frontend([s])
                with self.assertRaises(cls) as cm:
                    fe.submit(one_task_job())
                self.assertEqual(cm.exception.scheduler, s.address)
                if after is not None:
                    self.assertAlmostEqual(cm.exception.retry_after, after / 1000)
                self.assertEqual(fe.in_flight(), [], "a refused job is not in flight")

    def test_sends_frontend_address_and_request_id(self):
        s = self.fake()
        fe = self.frontend([s])
        rid = fe.submit(one_task_job())
        self.assertEqual(s.registered, [("app", fe.address)])
        self.assertEqual(len(s.requests), 1)
        self.assertEqual(s.requests[0].frontendAddress, fe.address)
        self.assertEqual(s.requests[0].requestId, rid)
        self.assertEqual(fe.in_flight(), [rid])
        with self.assertRaises(sf.InvalidRequestError):
            fe.submit(one_task_job(rid))
        with self.assertRaises(sf.InvalidRequestError):
            fe.submit(sf.Job(tasks=[]))

    def test_draining_scheduler_moves_on_without_failover(self):
        draining = self.fake(lambda req: IncompleteRequestException(
            message="fleet saturated: this scheduler is shutting down and accepts no new jobs; retry after 1s"))
        other = self.fake()
        fe = self.frontend([draining, other])
        rid = fe.submit(one_task_job())
        self.assertEqual(fe.scheduler, other.address)
        self.assertEqual([r.requestId for r in other.requests], [rid])
        self.assertEqual(self.failovers, [])

    def test_draining_with_no_other_scheduler_raises_saturated(self):
        draining = self.fake(lambda req: IncompleteRequestException(message="going", code=constants.REFUSAL_DRAINING))
        fe = self.frontend([draining])
        with self.assertRaises(sf.SaturatedError) as cm:
            fe.submit(one_task_job())
        self.assertTrue(cm.exception.scheduler_draining)

    def test_unreachable_scheduler_fails_over_before_sending(self):
        gone, other = self.fake(), self.fake()
        fe = self.frontend([gone, other])
        self.assertEqual(fe.scheduler, gone.address)
        gone.close()
        rid = fe.submit(one_task_job())
        self.assertEqual(fe.scheduler, other.address)
        self.assertEqual([r.requestId for r in other.requests], [rid])
        self.assertEqual(len(self.failovers), 1)
        self.assertEqual((self.failovers[0].from_, self.failovers[0].to), (gone.address, other.address))

    def test_no_scheduler_answers(self):
        gone = self.fake()
        fe = self.frontend([gone])
        gone.close()
        with self.assertRaises(sf.UnreachableError) as cm:
            fe.submit(one_task_job("job-1"))
        self.assertEqual(cm.exception.request_id, "job-1")

    def test_in_doubt_submit_is_reported_with_the_failover(self):
        slow, other = self.fake(), self.fake()
        slow.hold = threading.Event()
        self.closers.append(slow.hold.set)
        fe = self.frontend([slow, other], submit_timeout=0.3)
        with self.assertRaises(sf.InDoubtError) as cm:
            fe.submit(one_task_job("doubtful"))
        self.assertEqual(cm.exception.request_id, "doubtful")
        self.assertEqual(fe.scheduler, other.address)
        self.assertEqual(len(self.failovers), 1)
        self.assertEqual([j.request_id for j in self.failovers[0].in_flight], ["doubtful"])

    def test_heartbeat_detects_a_dead_scheduler_and_reports_in_flight_jobs(self):
        dying, other = self.fake(), self.fake()
        fe = self.frontend([dying, other], heartbeat=0.05)
        rid = fe.submit(one_task_job())
        dying.close()
        wait_until(lambda: self.failovers, 10, "the heartbeat to fail over")
        ev = self.failovers[0]
        self.assertEqual((ev.from_, ev.to), (dying.address, other.address))
        self.assertEqual([j.request_id for j in ev.in_flight], [rid])
        self.assertLessEqual(ev.detected_at, ev.reconnected)
        self.assertEqual(fe.in_flight(), [])

    def test_messages_end_a_job(self):
        s = self.fake()
        fe = self.frontend([s])
        rid = fe.submit(sf.Job(tasks=[sf.Task("a"), sf.Task("b")]))
        pool = _rpc.Pool(FrontendService, 1.0, 1.0)
        self.closers.append(pool.close)
        for task, status in (("a", sf.STATUS_OK), ("b", sf.STATUS_LOST)):
            tid = TFullTaskId(taskId=task, requestId=rid, appId="app")
            pool.call(fe.address, lambda c, tid=tid, status=status: c.frontendMessage(tid, status, b"body-" + task.encode()))
            if task == "a":
                self.assertEqual(fe.in_flight(), [rid], "one task still pending")
        self.assertEqual(fe.in_flight(), [])
        self.assertEqual([(m.task.task_id, m.status, m.body) for m in self.messages],
                         [("a", sf.STATUS_OK, b"body-a"), ("b", sf.STATUS_LOST, b"body-b")])


if __name__ == "__main__":
    unittest.main()
