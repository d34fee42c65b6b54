"""pip installs the package, generated module included, without network."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from tests.fleet import REPO


def pip_available():
    return subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode == 0


class PackageInstall(unittest.TestCase):
    @unittest.skipUnless(pip_available(), "%s has no pip (Debian: python3-pip)" % sys.executable)
    def test_pip_install_offline(self):
        work = tempfile.mkdtemp(prefix="sparrowfleet-pip-")
        self.addCleanup(shutil.rmtree, work, True)
        # From a copy: pip builds in the source folder and would leave
        # build/ and the egg-info there.
        src = os.path.join(work, "src")
        shutil.copytree(os.path.join(REPO, "clients", "python"), src,
                        ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__"))
        target = os.path.join(work, "site")
        res = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-build-isolation",
                              "--no-deps", "--target", target, src], capture_output=True, text=True, timeout=300)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        probe = ("import sparrowfleet, sparrowfleet._gen.sparrowrpc.SchedulerService as s, "
                 "sparrowfleet._gen.sparrowrpc.constants as c; "
                 "print(sparrowfleet.__file__); print(c.REFUSAL_UNPLACEABLE); print(s.Client.__name__)")
        env = dict(os.environ, PYTHONPATH=target, PYTHONDONTWRITEBYTECODE="1")
        res = subprocess.run([sys.executable, "-c", probe], cwd="/", env=env, capture_output=True, text=True,
                             timeout=60)
        self.assertEqual(res.returncode, 0, res.stderr)
        path, code, client = res.stdout.split()
        self.assertTrue(path.startswith(target), path)
        self.assertEqual((code, client), ("5", "Client"))


if __name__ == "__main__":
    unittest.main()
