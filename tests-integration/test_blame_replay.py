"""The blame eval's replay of real sessions (``scripts/blame_replay.py``) owns each line rightly.

The eval's real cases (``scripts/blame_real.py``, ``eval/blame/*.toml``)
rebuild the files a public session edited from what it read and wrote, and
label each final line with the request whose edit wrote it. These tests write
small sessions in Pi's and Claude Code's formats themselves and check the
replay: the file as first read is nobody's, an edit's new lines are its
request's, a prompt that only says to go on continues the request before it,
a full read that shows other text is a person's change (committed as theirs),
and a file edited before any full read, or whose edit no longer applies, is
skipped with its reason. Without the public transcripts the eval skips the
real cases with one line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import blame_replay
from blame_replay import Replay, claude_steps, pi_steps, ranges, replay

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "packages" / "karni-historian" / "tests"))

from git_sessions import Project  # noqa: E402

HOME = "/home/ann/shop"
CART = "def empty():\n    return []\n"


def _pi(tmp_path: Path, records: list[dict]) -> Path:
    head = {"type": "session", "id": "p-1", "timestamp": "2025-11-20T10:00:00.000Z", "cwd": HOME}
    lines = [head]
    for n, record in enumerate(records):
        stamp = f"2025-11-20T10:{n:02d}:00.000Z"
        lines.append({"type": "message", "timestamp": stamp, "message": record})
    path = tmp_path / "pi.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _ask(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _call(ident: str, name: str, **arguments: str) -> dict:
    return {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": ident, "name": name, "arguments": arguments}],
    }


def _result(ident: str, text: str, error: bool = False) -> dict:
    return {
        "role": "toolResult",
        "toolCallId": ident,
        "content": [{"type": "text", "text": text}],
        "isError": error,
    }


def _pi_session(tmp_path: Path) -> Path:
    total = "def total(items):\n    return sum(items)\n"
    priced = "sum(i.price for i in items)"
    changed = CART.replace("empty", "new_cart") + "\n\n" + total.replace("sum(items)", priced)
    return _pi(
        tmp_path,
        [
            _ask("Add a total to the cart"),
            _call("r1", "read", path="shop/cart.py"),
            _result("r1", CART),
            _call("e1", "edit", path="shop/cart.py", oldText="]\n", newText="]\n\n\n" + total),
            _result("e1", "Successfully replaced text in shop/cart.py."),
            _ask("continue"),
            _call("e2", "edit", path=f"{HOME}/shop/cart.py", oldText="sum(items)", newText=priced),
            _result("e2", "Successfully replaced text in shop/cart.py."),
            _call("e3", "edit", path="shop/cart.py", oldText="return [", newText="return ("),
            _result("e3", "Could not find the text", error=True),
            _ask("I renamed empty myself; now make the discount"),
            _call("r2", "read", path="shop/cart.py"),
            _result("r2", changed),
            _call("w1", "write", path="shop/discount.py", content="RATE = 10\n"),
            _result("w1", "Wrote shop/discount.py"),
            _call("e4", "edit", path="shop/settings.py", oldText="A = 1", newText="A = 2"),
            _result("e4", "Successfully replaced text in shop/settings.py."),
        ],
    )


def test_a_pi_session_replayed_owns_each_line_by_request(tmp_path):
    done = Replay(pi_steps(_pi_session(tmp_path), HOME))
    for step in done.steps:
        done.step(step)
    # "continue" asked nothing new: two requests, not three
    assert [text[:12] for text in done.requests] == ["Add a total ", "I renamed em"]
    cart = done.files["shop/cart.py"]
    assert cart.text.startswith("def new_cart():")
    # the renamed line is a person's; the function the edits wrote is request 1's
    assert ranges(cart) == [(1, 2, None), (5, 6, 0)]
    assert ranges(done.files["shop/discount.py"]) == [(1, 1, 1)]
    # edited, never read: skipped with its reason
    assert done.files["shop/settings.py"].broken == "edited before the session read it whole"
    assert done.edited == {"shop/cart.py", "shop/discount.py"}


def test_the_replay_in_git_commits_each_request_and_the_persons_change(tmp_path):
    project = Project(tmp_path / "project")
    replay(project, pi_steps(_pi_session(tmp_path), HOME), squash=True)
    subjects = project.git("log", "--format=%s").split("\n")
    assert subjects[:2] == ["The session's work, squashed (#1)", "The files before the session"]
    project.git("checkout", "-q", "-b", "look", "HEAD@{2}")  # the branch's tip before the squash
    subjects = project.git("log", "--format=%s", "HEAD").split("\n")
    assert subjects[:3] == ["Request 2", "A person's change to shop/cart.py", "Request 1"]


SLASH = (
    "<command-message>orchestrator is running</command-message>\n"
    "<command-name>/orchestrator</command-name>\n<command-args>make a todo app</command-args>"
)


def _claude_record(kind: str, stamp: str, content: object, side: bool = False) -> dict:
    return {
        "type": kind,
        "sessionId": "c-1",
        "cwd": "/path/to/Demo",
        "isSidechain": side,
        "timestamp": stamp,
        "message": {"role": kind, "content": content},
    }


def _claude(tmp_path: Path) -> Path:
    todo = "/path/to/Demo/app/todo.ts"
    calls = [
        (
            "w1",
            "Write",
            {"file_path": todo, "content": "// in /path/to/Demo\nexport const todos = [];\n"},
        ),
        (
            "m1",
            "MultiEdit",
            {"file_path": todo, "edits": [{"old_string": "[]", "new_string": "[] as string[]"}]},
        ),
        ("x1", "Edit", {"file_path": todo, "old_string": "todos", "new_string": "items"}),
    ]
    refused = "<tool_use_error>File has not been read yet.</tool_use_error>"
    results = [
        {"type": "tool_result", "tool_use_id": "w1", "content": "File created"},
        {"type": "tool_result", "tool_use_id": "m1", "content": "Applied 1 edit"},
        {"type": "tool_result", "tool_use_id": "x1", "content": refused, "is_error": True},
    ]
    uses = [{"type": "tool_use", "id": i, "name": n, "input": data} for i, n, data in calls]
    records = [
        _claude_record("user", "2025-09-03T00:00:00Z", SLASH),
        _claude_record("assistant", "2025-09-03T00:01:00Z", uses, side=True),
        _claude_record("user", "2025-09-03T00:01:01Z", results, side=True),
    ]
    path = tmp_path / "c-1.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_a_claude_code_session_in_the_replays_folder(tmp_path):
    steps = blame_replay.moved(
        claude_steps(_claude(tmp_path), "/path/to/Demo"), "/path/to/Demo", "/tmp/p"
    )
    done = Replay(steps)
    for step in steps:
        done.step(step)
    # a subagent's edits belong to the main thread's request; a refused edit is not made
    assert done.requests == ["/orchestrator make a todo app"]
    assert done.files["app/todo.ts"].text == "// in /tmp/p\nexport const todos = [] as string[];\n"
    assert ranges(done.files["app/todo.ts"]) == [(1, 2, 0)]


def test_without_the_public_transcripts_the_real_cases_are_skipped_in_one_line(tmp_path):
    env = {**os.environ, "KARNI_EVAL_DATA": str(tmp_path / "none")}
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "blame_eval.py"), "--check", "-k", "formatter"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    skipped = [line for line in done.stdout.splitlines() if "skipped the real sessions" in line]
    assert len(skipped) == 1 and "pi-themes" in skipped[0]
    rows = [line.split()[0] for line in done.stdout.splitlines() if line.strip()]
    assert "formatter" in rows and "pi-themes" not in rows
