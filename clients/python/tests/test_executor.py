"""Executor against a fake node monitor served in this process: registration
with and without the extensions, launches that wait for their tasks, batches
of launches, and the rule that each task's end is reported exactly once."""

import threading
import unittest

import sparrowfleet as sf
from sparrowfleet import _rpc, executor
from sparrowfleet._gen.sparrowrpc import ExtendedBackendService, NodeMonitorService
from sparrowfleet._gen.sparrowrpc.ttypes import TLaunchItem, TUserGroupInfo
from sparrowfleet.executor import FEATURES
from sparrowfleet.types import ref_to_wire
from thrift.Thrift import TApplicationException
from tests.fleet import wait_until

APP = "py-exec"


class FakeNodeMonitor:
    """A NodeMonitorService that accepts registrations and records every
    task end reported to it. original=True serves no
    registerBackendWithFeatures, as an original node monitor."""

    def __init__(self, original=False):
        self.lock = threading.Lock()
        self.registrations = []  # (method, features)
        self.done = []  # (task id, status, message), from taskDone
        processor = NodeMonitorService.Processor(self)
        if original:
            del processor._processMap["registerBackendWithFeatures"]
        self.server = _rpc.Server(processor, "127.0.0.1:0", "127.0.0.1", "fake-node-monitor")
        self.address = self.server.address

    def registerBackend(self, app, listenSocket):
        with self.lock:
            self.registrations.append(("registerBackend", 0))
        return True

    def registerBackendWithFeatures(self, app, listenSocket, features):
        with self.lock:
            self.registrations.append(("registerBackendWithFeatures", features))
        return True

    def taskDone(self, app, taskId, status, message):
        with self.lock:
            self.done.append((taskId.taskId, status, message))

    def tasksFinished(self, tasks):
        pass

    def sendFrontendMessage(self, app, taskId, status, message):
        pass

    def reported(self):
        with self.lock:
            return list(self.done)

    def close(self):
        self.server.close()


def wire_id(task_id, request="req-1"):
    return ref_to_wire(sf.TaskRef(task_id, request, APP, "127.0.0.1:20503"))


def item(task_id, message):
    return TLaunchItem(message=message, taskId=wire_id(task_id), user=TUserGroupInfo(user="u", group="g"))


class ExecutorExtensionsTest(unittest.TestCase):
    def setUp(self):
        self.closers = []
        self.release = threading.Event()
        self.closers.append(self.release.set)
        # A quick task must end within its launch's wait even on a loaded
        # machine: the tests ask long waits, which the executor would cap.
        saved = executor.MAX_LAUNCH_WAIT
        executor.MAX_LAUNCH_WAIT = 10.0
        self.closers.append(lambda: setattr(executor, "MAX_LAUNCH_WAIT", saved))

    def tearDown(self):
        for close in reversed(self.closers):
            close()

    def start(self, original=False):
        nm = FakeNodeMonitor(original=original)
        self.closers.append(nm.close)

        def run(task):
            # "slow" tasks run until released; "fail" tasks raise.
            if task.message.startswith(b"slow"):
                self.release.wait(30)
            if task.message.startswith(b"fail"):
                raise RuntimeError("failed: " + task.message.decode())
            return b"ran:" + task.message

        ex = sf.Executor(APP, run, node_monitor=nm.address, register_timeout=10, watch=0, drain=5)
        self.closers.append(ex.close)
        pool = _rpc.Pool(ExtendedBackendService, 5.0, 5.0)
        self.closers.append(pool.close)
        return nm, ex, lambda fn: pool.call(ex.address, fn)

    def test_registers_with_its_features(self):
        nm, ex, _ = self.start()
        self.assertEqual(nm.registrations, [("registerBackendWithFeatures", FEATURES)])
        self.assertEqual(ex.features, FEATURES)

    def test_original_node_monitor_gets_register_backend(self):
        nm, ex, _ = self.start(original=True)
        self.assertEqual(nm.registrations, [("registerBackend", 0)])
        self.assertEqual(ex.features, 0)
        ex.register()
        self.assertEqual(nm.registrations, [("registerBackend", 0)] * 2, "a fallback is remembered")

    def test_launch_and_wait(self):
        cases = [
            # message, wait (us), want done, want status, want body
            ("quick task ends within the wait", b"quick", 5_000_000, True, sf.STATUS_OK, b"ran:quick"),
            ("failing task ends within the wait", b"fail", 5_000_000, True, sf.STATUS_FAILED, b"failed: fail"),
            ("slow task outlives the wait", b"slow", 20_000, False, sf.STATUS_OK, b"ran:slow"),
            ("no wait asked", b"nowait", 0, False, sf.STATUS_OK, b"ran:nowait"),
        ]
        for name, message, wait, want_done, want_status, want_body in cases:
            with self.subTest(name):
                self.release.clear()
                nm, ex, call = self.start()
                reply = call(lambda c: c.launchTaskAndWait(message, wire_id("0"), TUserGroupInfo(user="u"), wait))
                self.assertEqual(reply.done, want_done)
                if want_done:
                    self.assertEqual((reply.status, reply.message), (want_status, want_body))
                self.release.set()
                wait_until(lambda: ex.running == 0, 10, "the task to end")
                # The end goes to the node monitor only when the reply did
                # not carry it: exactly once either way.
                want_reported = [] if want_done else [("0", want_status, want_body)]
                self.assertEqual(nm.reported(), want_reported)
                self.assertEqual(ex.launch_calls["launchTaskAndWait"], 1)

    def test_launch_batch(self):
        nm, ex, call = self.start()
        items = [item("0", b"quick-a"), item("1", b"slow-b"), item("2", b"fail-c"), item("3", b"quick-d")]
        replies = call(lambda c: c.launchTasksAndWait(items, 1_000_000))
        self.assertEqual([r.done for r in replies], [True, False, True, True])
        self.assertEqual((replies[0].status, replies[0].message), (sf.STATUS_OK, b"ran:quick-a"))
        self.assertEqual((replies[2].status, replies[2].message), (sf.STATUS_FAILED, b"failed: fail-c"))
        self.assertEqual((replies[3].status, replies[3].message), (sf.STATUS_OK, b"ran:quick-d"))
        self.release.set()
        wait_until(lambda: ex.running == 0, 10, "every task to end")
        self.assertEqual(nm.reported(), [("1", sf.STATUS_OK, b"ran:slow-b")])
        self.assertEqual(ex.launch_calls, {"launchTask": 0, "launchTaskAndWait": 0, "launchTasksAndWait": 1})

    def test_failed_launch_leaves_running_tasks_to_report(self):
        nm, ex, call = self.start()

        def on_launch(task):
            if task.ref.task_id == "1":
                raise RuntimeError("on_launch refused task 1")
        ex._on_launch = on_launch
        items = [item("0", b"slow-a"), item("1", b"quick-b")]
        with self.assertRaises(TApplicationException):
            call(lambda c: c.launchTasksAndWait(items, 1_000_000))
        self.release.set()
        wait_until(lambda: ex.running == 0 and nm.reported(), 10, "task 0 to end and report")
        self.assertEqual(nm.reported(), [("0", sf.STATUS_OK, b"ran:slow-a")])

    def test_batch_launches_all_or_none(self):
        cases = [
            ("a task without an id", lambda ex: None, [item("0", b"quick"), TLaunchItem(message=b"x")]),
            ("a draining executor", lambda ex: ex.drain(0), [item("0", b"quick"), item("1", b"quick")]),
        ]
        for name, before, items in cases:
            with self.subTest(name):
                nm, ex, call = self.start()
                launched = []
                ex._on_launch = launched.append
                before(ex)
                with self.assertRaises(TApplicationException):
                    call(lambda c: c.launchTasksAndWait(items, 10_000))
                self.assertEqual(launched, [])
                self.assertEqual(ex.running, 0)
                self.assertEqual(nm.reported(), [])


if __name__ == "__main__":
    unittest.main()
