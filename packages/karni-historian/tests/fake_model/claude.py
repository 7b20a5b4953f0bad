"""A fake ``claude`` program: records its call, then plays the next scripted step.

The steps are a JSON list in the file ``$FAKE_CLAUDE_SCRIPT``; each is
``{"stdout": ..., "stderr": ..., "code": N, "sleep": SECONDS}``. Every call
appends ``{"argv": [...], "stdin": ..., "cwd": ...}`` to ``$FAKE_CLAUDE_CALLS``.
"""

import json
import os
import sys
import time


def main():
    calls_path = os.environ["FAKE_CLAUDE_CALLS"]
    calls = []
    if os.path.exists(calls_path):
        with open(calls_path) as handle:
            calls = json.load(handle)
    calls.append({"argv": sys.argv[1:], "stdin": sys.stdin.read(), "cwd": os.getcwd()})
    with open(calls_path, "w") as handle:
        json.dump(calls, handle)
    with open(os.environ["FAKE_CLAUDE_SCRIPT"]) as handle:
        steps = json.load(handle)
    step = steps[len(calls) - 1] if len(calls) <= len(steps) else {"code": 3}
    time.sleep(step.get("sleep", 0))
    sys.stdout.write(step.get("stdout", ""))
    sys.stderr.write(step.get("stderr", ""))
    return step.get("code", 0)


if __name__ == "__main__":
    sys.exit(main())
