"""What the security tests share: the reliability suite's `Server` and request helpers, and a
checker that prints `ok`/`FAIL` lines and exits non-zero when anything failed."""
import importlib.util, os, sys

_reliability = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reliability")
sys.path.insert(0, _reliability)  # the reliability scripts (e.g. greedy.py) import as modules
# This module is itself named `common`, so `from common import *` would import it again: the
# reliability suite's common.py is loaded by its path and its names re-exported.
_spec = importlib.util.spec_from_file_location("reliability_common", os.path.join(_reliability, "common.py"))
_common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_common)
globals().update({name: value for name, value in vars(_common).items() if not name.startswith("_")})


class Checks:
    """Collects named checks; `done()` prints a summary line and exits 1 if any failed."""

    def __init__(self, name):
        self.name = name
        self.failures = 0
        self.count = 0

    def check(self, condition, what, detail=""):
        self.count += 1
        if condition:
            print(f"ok   {what}")
        else:
            self.failures += 1
            print(f"FAIL {what}" + (f": {detail}" if detail else ""))
        return condition

    def done(self):
        print(f"{self.name}: {self.count - self.failures} passed, {self.failures} failed")
        sys.exit(1 if self.failures else 0)
