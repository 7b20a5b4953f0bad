"""Many of Karni's commands at once on one project, while its agent's transcript grows.

:class:`Crowd` copies the example project (without any store), points HOME,
the caches and the configuration at a temporary folder, and writes a Claude
Code transcript that a :class:`Writer` thread keeps extending, a turn at a
time and each line in two writes (so readers meet torn lines). Workers are
threads, each starting one real command after another in a subprocess (the
console scripts of this environment) until the writer is done, then once
more; every run is recorded with its exit status and its output.
:func:`totals` adds up the figures of every case for the suite's last line.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from karni_it.environment import home_env

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "eventsite"
BASE = ROOT / "packages" / "karni-historian" / "tests" / "fixtures" / "claude_code_session.jsonl"
BIN = Path(sys.executable).parent
SESSION = "7d3e2a10-5c4b-4f1e-9a2d-3b8c6e1f0a42"
FILE = "apps/events/models.py"

_figures = {"cases": 0, "processes": 0, "runs": 0, "messages": 0, "errors": 0}
_figures_lock = threading.Lock()


def totals() -> dict[str, int]:
    """The figures of every case so far."""
    with _figures_lock:
        return dict(_figures)


def count(**figures: int) -> None:
    """Add one case's figures to the totals."""
    with _figures_lock:
        _figures["cases"] += 1
        for name, value in figures.items():
            _figures[name] += value


@dataclass
class Run:
    """One command a worker ran."""

    argv: list[str]
    returncode: int
    stdout: bytes
    stderr: bytes

    def problems(self) -> list[str]:
        """What a user would have seen go wrong: a failing status, any line on stderr."""
        shown = " ".join(self.argv)
        found = [f"{shown}: {line}" for line in self.stderr.decode("utf-8", "replace").splitlines()]
        if self.returncode != 0:
            found.append(f"{shown}: exit status {self.returncode}")
        return found


@dataclass
class Worker:
    """A thread that runs ``commands`` in turn, over and over, until the writer is done."""

    name: str
    commands: list[tuple[list[str], bytes]]
    crowd: Crowd
    most: int
    runs: list[Run] = field(default_factory=list)
    thread: threading.Thread | None = None

    def start(self, done: threading.Event) -> None:
        self.thread = threading.Thread(target=self._loop, args=(done,), name=self.name)
        self.thread.start()

    def _loop(self, done: threading.Event) -> None:
        rounds = 0
        while not done.is_set() and rounds < self.most:
            self._round()
            rounds += 1
        done.wait()
        self._round()  # once more with the whole transcript

    def _round(self) -> None:
        for argv, stdin in self.commands:
            self.runs.append(self.crowd.run(argv, stdin))


class Writer(threading.Thread):
    """Appends ``turns`` turns to the transcript, each line in two writes."""

    def __init__(self, crowd: Crowd, turns: int, pause: float) -> None:
        super().__init__(name="transcript writer")
        self.crowd = crowd
        self.turns = turns
        self.pause = pause
        self.done = threading.Event()

    def run(self) -> None:
        try:
            for number in range(1, self.turns + 1):
                for line in self.crowd.turn(number):
                    data = (json.dumps(line) + "\n").encode()
                    with open(self.crowd.transcript, "ab") as handle:
                        handle.write(data[: len(data) // 2])
                        handle.flush()
                        time.sleep(self.pause / 8)
                        handle.write(data[len(data) // 2 :])
                time.sleep(self.pause)
        finally:
            self.done.set()


class Crowd:
    """A project without a store, a growing transcript, and the commands run on them."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.project = tmp_path / "eventsite"
        shutil.copytree(EXAMPLE, self.project, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.rmtree(self.project / ".karni", ignore_errors=True)
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.transcripts = tmp_path / "transcripts"
        self.transcripts.mkdir()
        self.transcript = self.transcripts / f"{SESSION}.jsonl"
        base = BASE.read_text(encoding="utf-8")
        base = base[: base.rindex("\n") + 1]  # without the fixture's torn last line
        self.transcript.write_text(base.replace("__PROJECT__", str(self.project)), encoding="utf-8")
        self.env = home_env(self.home, KARNI_HISTORY_PROVIDERS="historian")

    @property
    def local(self) -> Path:
        return self.project / ".karni" / "local"

    @property
    def database(self) -> Path:
        return self.local / "historian.db"

    def run(self, argv: list[str], stdin: bytes = b"") -> Run:
        """Run a console script of this environment in the project."""
        result = subprocess.run(
            [str(BIN / argv[0]), *argv[1:]],
            cwd=self.project,
            env=self.env,
            input=stdin,
            capture_output=True,
            timeout=300,
            check=False,
        )
        return Run(argv, result.returncode, result.stdout, result.stderr)

    def stop_event(self) -> bytes:
        """Claude Code's Stop event for the transcript, as its end-of-session hook reads it."""
        event = {
            "session_id": SESSION,
            "transcript_path": str(self.transcript),
            "cwd": str(self.project),
            "hook_event_name": "Stop",
            "stop_hook_active": False,
        }
        return json.dumps(event).encode()

    def turn(self, number: int) -> list[dict[str, object]]:
        """Turn ``number``: a prompt, an edit of :data:`FILE`, its result and a reply."""
        path = str(self.project / FILE)
        call = f"toolu_crowd_{number:04d}"
        ids = [f"c0ffee00-{number:04d}-4c3e-9b1a-00000000000{part}" for part in range(4)]
        stamp = f"2026-03-02T11:{number // 60:02d}:{number % 60:02d}.000Z"
        common = {"isSidechain": False, "userType": "external", "cwd": str(self.project)}
        common.update(sessionId=SESSION, version="2.1.81", timestamp=stamp)
        prompt = f"Step {number}: keep deleted events out of the API listing"
        edit = {"file_path": path, "old_string": "pass", "new_string": f"pass  # {number}"}
        contents: list[tuple[str, object, str]] = [
            ("user", prompt, ""),
            ("assistant", [{"type": "tool_use", "id": call, "name": "Edit", "input": edit}], "a"),
            ("user", [{"tool_use_id": call, "type": "tool_result", "content": "updated"}], ""),
            ("assistant", [{"type": "text", "text": f"Done with step {number}."}], "b"),
        ]
        lines: list[dict[str, object]] = []
        for index, (role, content, reply) in enumerate(contents):
            message: dict[str, object] = {"role": role, "content": content}
            if role == "assistant":
                message.update(id=f"msg_crowd_{number:04d}{reply}", type="message")
                message.update(model="claude-sonnet-4-5-20250929", stop_reason="end_turn")
            parent = ids[index - 1] if index else None
            line = {**common, "parentUuid": parent, "type": role, "message": message}
            lines.append({**line, "uuid": ids[index]})
        return lines

    def old_store(self, version: int) -> None:
        """A store an older karni-historian made: ``version``'s schema, built by its migrations."""
        from karni_historian.store.schema import MIGRATIONS

        self.local.mkdir(parents=True, mode=0o700)
        connection = sqlite3.connect(self.database, isolation_level=None)
        for statements in MIGRATIONS[:version]:
            for statement in statements:
                connection.execute(statement)
        connection.execute(f"PRAGMA user_version = {version}")
        connection.close()

    def hook_log_problems(self) -> list[str]:
        """Lines of ``.karni/local/hooks.log`` that report a failure."""
        log = self.local / "hooks.log"
        if not log.exists():
            return []
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        return [line for line in lines if _is_problem(line)]

    def hook_log_runs(self) -> int:
        """How many historian commands the hooks' background runs ran."""
        log = self.local / "hooks.log"
        if not log.exists():
            return 0
        text = log.read_text(encoding="utf-8", errors="replace")
        return text.count("historian: `")

    def processes_left(self) -> list[str]:
        """Command lines of live processes that name the project (Linux's /proc)."""
        mark = str(self.project).encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                command = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if mark in command and state != "Z":
                found.append(command.replace(b"\0", b" ").decode("utf-8", "replace"))
        return found

    def wait_for_processes(self, seconds: float) -> list[str]:
        """Wait until no process names the project; those still left after ``seconds``."""
        deadline = time.monotonic() + seconds
        while True:
            left = self.processes_left()
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.2)

    def leftovers(self) -> list[str]:
        """Temporary files, journals, moved-aside stores and held locks under the project."""
        found = []
        for path in self.project.rglob("*"):
            name = path.name
            if name.endswith((".tmp", "-journal")) or ".broken-" in name:
                found.append(str(path.relative_to(self.project)))
            elif name.endswith(".lock") and _held(path):
                found.append(f"{path.relative_to(self.project)} (held)")
        return found


def _is_problem(line: str) -> bool:
    if "historian: `" in line and " exited " in line:
        return not line.rstrip().endswith(" exited 0")
    lowered = line.lower()
    return (
        line.startswith(("karni-historian:", "karni:", "Traceback"))
        or "failed" in lowered
        or "error" in lowered
    )


def _held(path: Path) -> bool:
    import fcntl  # POSIX only, as the suite is

    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
