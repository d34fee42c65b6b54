"""A live loopback fleet of the project's binary, for the tests.

Schedulers and node monitors run as `sparrow scheduler` and `sparrow
nodemonitor` processes on free 127.0.0.1 ports, joined by gossip with the
local (fast) profile. Every process is killed by close().
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def sparrow_binary():
    """The sparrow binary: $SPARROW_BIN, else bin/sparrow of the repository
    (make test-python builds it)."""
    path = os.environ.get("SPARROW_BIN") or os.path.join(REPO, "bin", "sparrow")
    if not os.access(path, os.X_OK):
        raise RuntimeError("no sparrow binary at %s: run `make build` or set SPARROW_BIN" % path)
    return path


def free_port(host="127.0.0.1"):
    """A port free for both TCP and UDP on host (gossip binds both)."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t:
            t.bind((host, 0))
            port = t.getsockname()[1]
            try:
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                    u.bind((host, port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port on %s" % host)


def addr(host="127.0.0.1"):
    return "%s:%d" % (host, free_port(host))


def wait_until(cond, timeout, what, interval=0.05):
    """Waits for cond() to be true, polling, for at most timeout seconds;
    raises AssertionError naming what otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        if cond():
            return
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %gs waiting for %s" % (timeout, what))
        time.sleep(interval)


def accepts(address):
    host, port = address.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=0.5).close()
        return True
    except OSError:
        return False


class Process:
    """One daemon of the fleet."""

    def __init__(self, fleet, name, args, service):
        self.name = name
        self.args = args
        self.service = service
        self.log_path = os.path.join(fleet.dir, name + ".log")
        self._fleet = fleet
        self.popen = None
        self.start()

    def start(self):
        log = open(self.log_path, "ab")
        self.popen = subprocess.Popen([self._fleet.binary] + self.args, stdout=log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL)
        log.close()
        wait_until(lambda: accepts(self.service) or self.popen.poll() is not None, 20,
                   "%s to serve %s" % (self.name, self.service))
        if self.popen.poll() is not None:
            raise RuntimeError("%s exited with %s:\n%s" % (self.name, self.popen.returncode, self.log()))

    def kill(self, sig=signal.SIGKILL):
        """Sends sig and waits for the process to exit."""
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
            self.popen.wait(timeout=30)

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")[-4000:]


class Fleet:
    """Starts daemons on loopback; close() kills them all."""

    def __init__(self):
        self.binary = sparrow_binary()
        self.dir = tempfile.mkdtemp(prefix="sparrowfleet-py-")
        self.procs = []
        self.gossips = []

    def _gossip_args(self, name):
        gossip = addr()
        args = ["--gossip", gossip, "--gossip-profile", "local", "--name", name, "--log-level", "info"]
        if self.gossips:
            args += ["--join", ",".join(self.gossips)]
        self.gossips.append(gossip)
        return args

    def scheduler(self, name="sched", extra=()):
        service = addr()
        args = ["scheduler", "--listen", service, "--gettask-listen", addr()] + self._gossip_args(name) + list(extra)
        p = Process(self, name, args, service)
        self.procs.append(p)
        return p

    def nodemonitor(self, name="nm", slots=4, extra=()):
        service = addr()
        args = (["nodemonitor", "--listen", service, "--internal-listen", addr(), "--slots", str(slots)]
                + self._gossip_args(name) + list(extra))
        p = Process(self, name, args, service)
        self.procs.append(p)
        return p

    def restart(self, proc, name):
        """Starts proc's command again on the same Thrift addresses, under a
        new gossip member name and address, after it was killed."""
        args = list(proc.args)
        gossip = addr()
        args[args.index("--gossip") + 1] = gossip
        args[args.index("--name") + 1] = name
        self.gossips.append(gossip)
        p = Process(self, name, args, proc.service)
        self.procs.append(p)
        return p

    def logs(self):
        return "\n".join("--- %s\n%s" % (p.name, p.log()) for p in self.procs)

    def close(self):
        for p in self.procs:
            p.kill()
        shutil.rmtree(self.dir, ignore_errors=True)
