"""checks.py - counted checks for the Python tests: T.ok(cond, what) counts
one and prints a failed one, T.eq(got, want, what) names both values,
T.finish() prints the counts and exits 1 when any failed or none ran.

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    from checks import T
"""
import sys


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def ok(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL:", what, file=sys.stderr)
        return cond

    def eq(self, got, want, what):
        return self.ok(got == want, f"{what}: got {got!r}, want {want!r}")

    def finish(self):
        print(f"{self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed or not self.passed else 0)


T = Checks()
