"""Real git repositories worked on by recorded Claude Code sessions, for the blame tests.

A :class:`Project` is a git repository with a ``manage.py`` (a Karni
project) and a clock. A :class:`Recorder` is one agent session in it: its
edits change the files for real and are recorded as Claude Code's ``Edit``
and ``Write`` calls, its ``git`` commands run for real and are recorded with
their real output (``[main 1a2b3c4] subject``). Git runs with the project's
clock as author and committer date, so the session's times and the
commits' agree as they do on a machine. The transcripts are written in
Claude Code's JSON Lines format for ``karni-historian ingest --from``.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

START = datetime(2026, 10, 1, 9, 0, tzinfo=UTC)


class Project:
    """A git repository that is a Karni project, with a clock shared by its sessions."""

    def __init__(self, root: Path, name: str = "Ann", mail: str = "ann@example.com") -> None:
        self.root = root
        self.now = START
        self.identity = (name, mail)
        self.recorders: list[Recorder] = []
        root.mkdir(parents=True, exist_ok=True)
        (root / "manage.py").write_text("")
        (root / ".gitignore").write_text(".karni/\n")
        self.git("init", "-q", "-b", "main")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "Start the project")

    def tick(self, seconds: int = 30) -> str:
        """Move the clock on; the new time as ISO 8601."""
        self.now += timedelta(seconds=seconds)
        return self.now.strftime("%Y-%m-%dT%H:%M:%SZ")

    def env(self) -> dict[str, str]:
        stamp = self.now.strftime("%Y-%m-%dT%H:%M:%S+0000")
        name, mail = self.identity
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_AUTHOR_NAME=name,
            GIT_AUTHOR_EMAIL=mail,
            GIT_COMMITTER_NAME=name,
            GIT_COMMITTER_EMAIL=mail,
            GIT_AUTHOR_DATE=stamp,
            GIT_COMMITTER_DATE=stamp,
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
        )
        return env

    def git(self, *args: str) -> str:
        """Run git in the project (as a person, not a session); its output."""
        done = subprocess.run(
            ["git", *args], cwd=self.root, env=self.env(), capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout + done.stderr

    def write(self, path: str, text: str) -> None:
        """A person's edit: the file's new text."""
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def commit(self, message: str) -> str:
        """A person's commit of everything; its full hash."""
        self.tick()
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD").strip()

    def session(self, session_id: str) -> Recorder:
        """A new session working here (kept in :attr:`recorders`)."""
        recorder = Recorder(self, session_id)
        self.recorders.append(recorder)
        return recorder


class Recorder:
    """One Claude Code session working in a :class:`Project`, recorded as it goes."""

    def __init__(self, project: Project, session_id: str) -> None:
        self.project = project
        self.session_id = session_id
        self.records: list[dict] = []
        self.prompts: dict[str, int] = {}

    def _record(self, kind: str, message: dict) -> None:
        parent = self.records[-1]["uuid"] if self.records else None
        self.records.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": str(self.project.root),
                "sessionId": self.session_id,
                "version": "2.1.81",
                "type": kind,
                "uuid": str(uuid.uuid4()),
                "timestamp": self.project.tick(),
                "message": message,
            }
        )

    def prompt(self, text: str) -> None:
        """The user asks."""
        self._record("user", {"role": "user", "content": text})

    def say(self, text: str) -> None:
        self._record(
            "assistant",
            {
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": text}],
            },
        )

    def _tool(self, name: str, data: dict, output: str) -> None:
        call = f"toolu_{uuid.uuid4().hex[:12]}"
        self._record(
            "assistant",
            {
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "tool_use", "id": call, "name": name, "input": data}],
            },
        )
        self._record(
            "user",
            {
                "role": "user",
                "content": [{"tool_use_id": call, "type": "tool_result", "content": output}],
            },
        )

    def edit(self, path: str, old: str, new: str) -> None:
        """An ``Edit`` call: replaces ``old`` by ``new`` in the file, for real."""
        target = self.project.root / path
        text = target.read_text()
        assert text.count(old) == 1, (path, old)
        target.write_text(text.replace(old, new))
        data = {"file_path": str(target), "old_string": old, "new_string": new}
        self._tool("Edit", data, f"The file {target} has been updated.")

    def write(self, path: str, content: str) -> None:
        """A ``Write`` call: the file's whole text, for real."""
        target = self.project.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        self._tool(
            "Write", {"file_path": str(target), "content": content}, f"File created at {target}"
        )

    def bash(self, *words: str) -> str:
        """A shell call running ``words`` (git, mostly) for real; its output, as recorded."""
        self.project.tick()
        done = subprocess.run(
            list(words),
            cwd=self.project.root,
            env=self.project.env(),
            capture_output=True,
            text=True,
        )
        output = (done.stdout + done.stderr).strip()
        command = " ".join(f'"{w}"' if " " in w else w for w in words)
        self._tool("Bash", {"command": command, "description": "run it"}, output)
        return output

    def save(self, folder: Path) -> Path:
        """Write the transcript as ``<folder>/<session id>.jsonl``; its path."""
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.session_id}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records))
        return path
