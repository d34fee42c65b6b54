"""The Python code of docs/client.md's Python section and of
docs/tutorial-python.md, run as written against live loopback fleets.

Code blocks to run are marked `<!-- file: NAME -->` on the line before
their ```python fence. The examples read the fleet's addresses from
SPARROW_SCHEDULERS and SPARROW_NODE_MONITOR (defaulting to the daemons'
default ports), which the tests point at the fleet they start.
"""

import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import unittest

from tests.fleet import REPO, Fleet, Process, addr, wait_until

BLOCK = re.compile(r"<!-- file: (\S+) -->\n```python\n(.*?)```", re.S)


def read_doc(name):
    with open(os.path.join(REPO, "docs", name), encoding="utf-8") as f:
        return f.read()


def section(text, heading):
    """The text of the level-2 section called heading."""
    start = text.index("\n## %s\n" % heading)
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def files_of(text):
    return dict(BLOCK.findall(text))


class DocExamples(unittest.TestCase):
    def setUp(self):
        self.fleet = Fleet()
        self.dir = tempfile.mkdtemp(prefix="sparrowfleet-docs-")
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        if any(test is self for test, _ in self._outcome.result.errors + self._outcome.result.failures):
            print(self.fleet.logs())
            for name in sorted(os.listdir(self.dir)):
                if name.endswith(".out"):
                    with open(os.path.join(self.dir, name), errors="replace") as f:
                        print("--- %s\n%s" % (name, f.read()[-4000:]))
        self.fleet.close()

    def write(self, files):
        for name, code in files.items():
            with open(os.path.join(self.dir, name), "w", encoding="utf-8") as f:
                f.write(code)

    def env(self, schedulers, node_monitor):
        env = dict(os.environ)
        env["SPARROW_SCHEDULERS"] = schedulers
        env["SPARROW_NODE_MONITOR"] = node_monitor
        env["PYTHONPATH"] = os.path.join(REPO, "clients", "python")
        return env

    def start(self, script, env):
        """Starts script in the background, its output in script.out."""
        out = open(os.path.join(self.dir, script + ".out"), "wb")
        p = subprocess.Popen([sys.executable, script], cwd=self.dir, env=env, stdout=out,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        out.close()
        self.procs.append(p)
        return p

    def output(self, script):
        with open(os.path.join(self.dir, script + ".out"), encoding="utf-8", errors="replace") as f:
            return f.read()

    def run_script(self, args, env, timeout=90):
        return subprocess.run([sys.executable] + args, cwd=self.dir, env=env, capture_output=True, text=True,
                              timeout=timeout)

    def stop(self, proc):
        """SIGTERM: the executor drains and exits 0."""
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(timeout=40), 0)

    def test_client_md_python_section(self):
        files = files_of(section(read_doc("client.md"), "Python"))
        self.assertEqual(sorted(files), ["executor.py", "frontend.py"])
        for name, code in files.items():
            self.assertLessEqual(len(code.splitlines()), 40, "%s is no longer short" % name)
        self.write(files)
        sched = self.fleet.scheduler()
        nm = self.fleet.nodemonitor()
        env = self.env(sched.service, nm.service)
        executor = self.start("executor.py", env)
        wait_until(lambda: "registered with node monitor" in self.output("executor.py") or executor.poll() is not None,
                   30, "the example executor to register")
        self.assertIsNone(executor.poll(), self.output("executor.py"))
        res = self.run_script(["frontend.py"], env)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertRegex(res.stdout, r"submitted echo-\S+-1\n")
        self.assertTrue(res.stdout.endswith("0 0 HELLO 0\n1 0 HELLO 1\n2 0 HELLO 2\n"), res.stdout)
        self.stop(executor)

    def tutorial_fleet(self, text):
        """Starts the daemons of the tutorial's `bin/sparrow scheduler` and
        `bin/sparrow nodemonitor` lines as written, except that each
        127.0.0.1 address becomes a free one (the same for every mention).
        Returns the mapping."""
        mapping = {}

        def free(m):
            return mapping.setdefault(m.group(0), addr())

        lines = [ln for ln in text.splitlines() if re.match(r"bin/sparrow (scheduler|nodemonitor) ", ln)]
        self.assertEqual([ln.split()[1] for ln in lines], ["scheduler", "nodemonitor"])
        for ln in lines:
            args = shlex.split(re.sub(r"127\.0\.0\.1:\d+", free, ln))[1:]
            service = args[args.index("--listen") + 1]
            self.fleet.procs.append(Process(self.fleet, args[0], args, service))
        return mapping

    def test_tutorial(self):
        text = read_doc("tutorial-python.md")
        files = files_of(text)
        self.assertEqual(sorted(files), ["wordcount.py", "wordcount_executor.py"])
        self.write(files)
        mapping = self.tutorial_fleet(text)
        env = self.env(mapping["127.0.0.1:20503"], mapping["127.0.0.1:20501"])
        executor = self.start("wordcount_executor.py", env)
        wait_until(lambda: "executor ready at" in self.output("wordcount_executor.py") or executor.poll() is not None,
                   30, "the tutorial's executor to register")
        self.assertIsNone(executor.poll(), self.output("wordcount_executor.py"))

        inputs = {"a.txt": "The cat, the hat.\n", "b.txt": "one two three\n" * 10}
        for name, content in inputs.items():
            with open(os.path.join(self.dir, name), "w") as f:
                f.write(content)
        res = self.run_script(["wordcount.py", "a.txt", "b.txt"], env)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        lines = res.stdout.splitlines()
        self.assertRegex(lines[0], r"^\s+4\s+1\s+the\s+\S*/a\.txt$")
        self.assertRegex(lines[1], r"^\s+30\s+10\s+one\s+\S*/b\.txt$")
        self.assertEqual(lines[-1], "34 words in 2 files")

        res = self.run_script(["wordcount.py", "a.txt", "missing.txt"], env)
        self.assertEqual(res.returncode, 1, res.stdout + res.stderr)
        self.assertRegex(res.stdout, r"failed: \S*/missing\.txt: .*No such file")
        self.assertTrue(res.stdout.endswith("4 words in 1 files\n"), res.stdout)
        self.stop(executor)


if __name__ == "__main__":
    unittest.main()
