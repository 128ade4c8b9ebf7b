"""dp_test.py - the Python tests' harness, as tests/dp_test.h is the C
tests': check() counts a pass or prints "FAIL file:line: msg", skip()
counts a skip and prints its reason, done() prints the closing line
"N passed, N failed, N skipped" and returns the exit status (1 when
anything failed). A test imports it from its own directory."""
import os
import sys

counts = {"passed": 0, "failed": 0, "skipped": 0}


def check(cond, msg):
    if cond:
        counts["passed"] += 1
    else:
        counts["failed"] += 1
        caller = sys._getframe(1)
        print("FAIL %s:%d: %s" % (os.path.basename(caller.f_code.co_filename), caller.f_lineno, msg), flush=True)
    return cond


def skip(msg):
    counts["skipped"] += 1
    print("SKIP: " + msg, flush=True)


def done():
    print("%(passed)d passed, %(failed)d failed, %(skipped)d skipped" % counts, flush=True)
    return 1 if counts["failed"] else 0
