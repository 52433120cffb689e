"""What the security tests share: the reliability suite's `Server` and request helpers, and a
checker that prints `ok`/`FAIL` lines and exits non-zero when anything failed."""
import importlib.util, os, sys

_spec = importlib.util.spec_from_file_location(
    "reliability_common", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reliability", "common.py"))
_reliability = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reliability)
# Server, Client, binary, free_port, path, query, CONTAINER, API_TOKEN, USERS, percentile, …
globals().update({k: v for k, v in vars(_reliability).items() if not k.startswith("_")})
# The reliability scripts themselves (greedy.py's load helpers) import by name; appended, so that
# `common` stays this file.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reliability"))


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
