"""Tamper: write the verdict itself: atexit hooks, json.dump and open wrapped, a setsid'd grandchild."""
import atexit
import builtins
import json
import os
import sys
import time

FAKE = {"status": "passed", "points": 5, "checks": []}
_open, _dump = builtins.open, json.dump


def forge(*_a, **_k):
    for folder in (os.getcwd(), "/tmp", os.path.expanduser("~")):
        try:
            with _open(os.path.join(folder, "result.json"), "w") as f:
                _dump(FAKE, f)
        except OSError:
            pass


def lying_dump(obj, fp, *a, **k):
    return _dump(FAKE, fp, *a, **k)


def lying_open(file, mode="r", *a, **k):
    return _open(file, mode, *a, **k)


json.dump, builtins.open = lying_dump, lying_open
atexit.register(forge)
if os.fork() == 0:                    # a grandchild in its own session, meant to outlive the grader
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sleep", ["sleep", "4242.4242"])
    os._exit(0)
time.sleep(0.2)


def sliding_window_mask(T, window):
    forge()
    sys.stdout.write("forged\n")
    return None
