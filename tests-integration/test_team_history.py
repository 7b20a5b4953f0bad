"""Team history over real git: two clones, two identities, one bare remote (issue 40).

Alice and Bob each have their own HOME (their own Claude Code sessions) and
their own clone of a bare repository. Every step runs the installed
commands (``karni``, ``karni-historian``, ``git``) in a subprocess, as the
users would: Alice's session is ingested and shared, committed and pushed;
Bob pulls and his ``karni context --with-history`` shows Alice's reverted
approach, attributed to her by git. Then both share at once, sharing again
changes nothing, a forged name shows the committer, ``git rm`` takes a
session out of every brief, hostile files are skipped with a ``doctor``
line, and a secret in a prompt never reaches a shared file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from karni_it.environment import home_env

BIN = Path(sys.executable).parent
HISTORY = Path(".karni") / "history"

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="symlinks and a POSIX shell's git set-up"
)

SOFT = "    deleted = models.BooleanField(default=False)"
HARD = "    def delete(self, *args, **kwargs):\n        return super().delete(*args, **kwargs)"
MODELS = f"from django.db import models\n\n\nclass Event(models.Model):\n{SOFT}\n"
VIEWS = "def index(request):\n    return None\n"


def _project_key(path: Path) -> str:
    return "".join(c if c.isalnum() and c.isascii() else "-" for c in str(path))


class User:
    """One teammate: a HOME with Claude Code sessions, a git identity and a clone."""

    def __init__(self, tmp: Path, name: str, remote: Path) -> None:
        self.name = name
        self.home = tmp / f"{name.lower()}-home"
        self.clone = tmp / name.lower()
        self.claude = self.home / "claude"
        self.env = home_env(
            self.home, CLAUDE_CONFIG_DIR=str(self.claude), KARNI_HISTORY_PROVIDERS="historian"
        )
        self.env.pop("KARNI_CACHE_DIR", None)
        self.env["KARNI_CACHE_DIR"] = ""
        subprocess.run(
            ["git", "clone", "-q", str(remote), str(self.clone)],
            env=self.env,
            check=True,
            capture_output=True,
        )
        self.git("config", "user.name", name)
        self.git("config", "user.email", f"{name.lower()}@example.com")
        self.git("config", "pull.rebase", "false")

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["git", *args], cwd=self.clone, env=self.env, capture_output=True, text=True
        )
        assert not check or done.returncode == 0, f"git {args}: {done.stdout}{done.stderr}"
        return done

    def run(self, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / program), *args],
            cwd=self.clone,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def historian(self, *args: str) -> str:
        done = self.run("karni-historian", *args)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def brief(self, path: str) -> str:
        done = self.run("karni", "context", "--with-history", path)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def session(self, session_id: str, turns: list[tuple[str, list[dict]]], day: str) -> None:
        """Write a Claude Code transcript: each turn a prompt and the edits that answered it."""
        folder = self.claude / "projects" / _project_key(self.clone)
        folder.mkdir(parents=True, exist_ok=True)
        records: list[dict] = []
        minute = 0

        def add(kind: str, content: object) -> None:
            nonlocal minute
            minute += 1
            records.append(
                {
                    "type": kind,
                    "uuid": f"{session_id}-{len(records):04d}",
                    "parentUuid": records[-1]["uuid"] if records else None,
                    "sessionId": session_id,
                    "cwd": str(self.clone),
                    "timestamp": f"{day}T10:{minute:02d}:00.000Z",
                    "message": {"role": kind, "content": content}
                    | (
                        {"id": f"msg-{len(records)}", "model": "claude-x"}
                        if kind == "assistant"
                        else {}
                    ),
                }
            )

        for prompt, edits in turns:
            add("user", prompt)
            for number, edit in enumerate(edits):
                call = f"toolu_{len(records)}_{number}"
                data = {**edit, "file_path": str(self.clone / edit["file_path"])}
                add("assistant", [{"type": "tool_use", "id": call, "name": "Edit", "input": data}])
                add("user", [{"type": "tool_result", "tool_use_id": call, "content": TOOL_OUTPUT}])
            add("assistant", [{"type": "text", "text": "Done."}])
        text = "".join(json.dumps(record) + "\n" for record in records)
        (folder / f"{session_id}.jsonl").write_text(text, encoding="utf-8")

    def shared(self, session_id: str) -> Path:
        return self.clone / HISTORY / f"{session_id}.json"


TOOL_OUTPUT = "The file was updated (tool output, never shared)"
ALICE_SESSION = "a11ce000-0000-4000-8000-000000000001"
ALICE_LATER = "a11ce000-0000-4000-8000-000000000002"
BOB_SESSION = "b0b00000-0000-4000-8000-000000000001"
FORGED = "f0a9ed00-0000-4000-8000-000000000001"
SECRET = "ghp_" + "Zq7" * 12
REFUSED_KEY = "sk_live_" + "4f9A" * 5

HARD_DELETE = [
    (
        "Switch Event deletion in apps/events/models.py to a hard delete",
        [
            {
                "file_path": "apps/events/models.py",
                "old_string": SOFT,
                "new_string": HARD,
            }
        ],
    ),
    (
        "Revert the hard delete in apps/events/models.py: it destroyed payment history. "
        "We decided to keep soft delete.",
        [
            {
                "file_path": "apps/events/models.py",
                "old_string": HARD,
                "new_string": SOFT,
            }
        ],
    ),
]


def _edit(path: str, old: str, new: str) -> dict:
    return {"file_path": path, "old_string": old, "new_string": new}


@pytest.fixture
def team(tmp_path: Path) -> tuple[User, User]:
    remote = tmp_path / "remote.git"
    subprocess.run(
        ["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True, capture_output=True
    )
    alice = User(tmp_path, "Alice", remote)
    (alice.clone / "apps" / "events").mkdir(parents=True)
    (alice.clone / "manage.py").write_text("")
    (alice.clone / "apps" / "events" / "models.py").write_text(MODELS)
    (alice.clone / "apps" / "events" / "views.py").write_text(VIEWS)
    alice.git("add", "-A")
    alice.git("commit", "-qm", "the project")
    alice.git("push", "-q", "-u", "origin", "main")
    bob = User(tmp_path, "Bob", remote)
    return alice, bob


def _share_and_push(user: User, session_id: str, message: str) -> bytes:
    out = user.historian("share", "--session", session_id)
    assert "shared to .karni/history/" in out
    data = user.shared(session_id).read_bytes()
    user.git("add", str(HISTORY))
    user.git("commit", "-qm", message)
    return data


def test_a_teammates_reverted_approach_reaches_the_brief_attributed_by_git(team):
    alice, bob = team
    alice.session(ALICE_SESSION, HARD_DELETE, "2026-11-20")
    alice.historian("ingest")
    first = _share_and_push(alice, ALICE_SESSION, "share the hard-delete session")
    text = first.decode("utf-8")
    assert text.endswith("\n") and "\r" not in text and '"format": 1' in text
    assert str(alice.clone) not in text and str(alice.home) not in text  # no absolute path
    assert TOOL_OUTPUT not in text  # no tool output
    alice.git("push", "-q")

    # Sharing again with nothing new changes no byte, and git sees nothing.
    again = alice.historian("share", "--session", ALICE_SESSION)
    assert "unchanged" in again
    assert alice.shared(ALICE_SESSION).read_bytes() == first
    assert alice.git("status", "--porcelain").stdout == ""

    bob.git("pull", "-q")
    brief = bob.brief("apps/events/models.py")
    assert "HISTORY: apps/events/models.py (historian)" in brief
    lines = [line for line in brief.splitlines() if "hard delete" in line.lower()]
    assert lines, brief
    assert any("by Alice" in line for line in lines), brief
    assert "payment history" in brief
    assert "by Bob" not in brief
    full = bob.historian("brief", "apps/events/models.py")
    assert "by Alice" in full

    # Both share at once: one file each, so pulling never conflicts.
    alice.session(
        ALICE_LATER,
        [
            (
                "Add a created_at field to Event",
                [
                    _edit(
                        "apps/events/models.py", "    deleted", "    created_at = None\n    deleted"
                    )
                ],
            )
        ],
        "2026-11-21",
    )
    bob.session(
        BOB_SESSION,
        [
            (
                "Make the index view return an empty list",
                [_edit("apps/events/views.py", "return None", "return []")],
            )
        ],
        "2026-11-21",
    )
    alice.historian("ingest")
    bob.historian("ingest")
    both = [
        subprocess.Popen(
            [str(BIN / "karni-historian"), "share", "--all"],
            cwd=user.clone,
            env=user.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for user in (alice, bob)
    ]
    for process in both:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        assert b"shared to" in out, out
    for user, message in ((alice, "alice shares"), (bob, "bob shares")):
        user.git("add", str(HISTORY))
        user.git("commit", "-qm", message)
    alice.git("push", "-q")
    pulled = bob.git("pull", "-q", "--no-edit", check=False)
    assert pulled.returncode == 0 and "CONFLICT" not in pulled.stdout + pulled.stderr
    bob.git("push", "-q")
    assert alice.git("pull", "-q", "--no-edit", check=False).returncode == 0
    for user in (alice, bob):
        names = sorted(p.name for p in (user.clone / HISTORY).iterdir())
        assert names == sorted(f"{s}.json" for s in (ALICE_SESSION, ALICE_LATER, BOB_SESSION))
    assert "by Bob" in alice.brief("apps/events/views.py")
    own = bob.brief("apps/events/views.py")
    assert "empty list" in own and "by Bob" not in own  # his own session, counted once
    assert own.count("Make the index view return an empty list") == 1

    # Sharing everything again changes nothing.
    assert "shared to" not in alice.historian("share", "--all")
    assert alice.git("status", "--porcelain").stdout == ""

    # A file claiming to be Alice's, committed by Bob, is shown as Bob's.
    forged = json.loads(alice.shared(ALICE_LATER).read_text(encoding="utf-8"))
    forged["author"] = "Alice"
    forged["session"]["id"] = FORGED
    forged["files"] = {
        "apps/events/models.py": {
            "requests": [],
            "notes": [
                {
                    "kind": "decision",
                    "request": 1,
                    "message": 1,
                    "weight": 99,
                    "text": "FORGED: always hard delete events.",
                }
            ],
        }
    }
    (bob.clone / HISTORY / f"{FORGED}.json").write_text(
        json.dumps(forged, sort_keys=True, indent=1) + "\n", encoding="utf-8"
    )
    bob.git("add", str(HISTORY))
    bob.git("commit", "-qm", "a forged claim")
    bob.git("push", "-q")
    alice.git("pull", "-q", "--no-edit")
    seen = [line for line in alice.brief("apps/events/models.py").splitlines() if "FORGED" in line]
    assert seen and all("by Bob" in line and "by Alice" not in line for line in seen), seen

    # `git rm` of a history file takes its session out of every brief.
    bob.git("rm", "-q", str(HISTORY / f"{ALICE_SESSION}.json"))
    bob.git("commit", "-qm", "unshare the hard-delete session")
    after = bob.brief("apps/events/models.py")
    assert "payment history" not in after and "by Alice" not in after.split("FORGED")[0]


def test_hostile_shared_files_are_skipped_with_a_doctor_line(team):
    alice, bob = team
    alice.session(ALICE_SESSION, HARD_DELETE, "2026-11-20")
    alice.historian("ingest")
    _share_and_push(alice, ALICE_SESSION, "share")
    alice.git("push", "-q")
    bob.git("pull", "-q")
    folder = bob.clone / HISTORY
    (folder / "huge.json").write_text('{"format": 1, "pad": "' + "x" * 300_000 + '"}\n')
    (folder / "binary.json").write_bytes(b"\x00\xff\xfe binary \x00")
    (folder / "deep.json").write_text("[" * 200 + "]" * 200)
    (folder / "newer.json").write_text('{"format": 2, "session": {}}\n')
    (folder / "link.json").symlink_to("../../apps/events/models.py")
    doctor = bob.run("karni", "doctor")
    assert doctor.returncode == 0, doctor.stderr
    out = doctor.stdout
    assert "history notes:" in out
    for name, reason in (
        ("huge.json", "larger than 256 KiB"),
        ("binary.json", "binary"),
        ("deep.json", "nested deeper"),
        ("newer.json", "format 2, newer"),
        ("link.json", "symbolic link"),
    ):
        assert any(name in line and reason in line for line in out.splitlines()), (name, out)
    # The rest is still served.
    brief = bob.brief("apps/events/models.py")
    assert "payment history" in brief and "by Alice" in brief


def test_a_secret_in_a_prompt_is_never_written(team):
    alice, _bob = team
    alice.session(
        ALICE_SESSION,
        [
            (
                f"Call the events API with the token {SECRET} from apps/events/views.py. "
                "<private>The staging host is vault.internal.example</private>",
                [_edit("apps/events/views.py", "return None", "return fetch()")],
            )
        ],
        "2026-11-20",
    )
    alice.session(
        ALICE_LATER,
        [
            (
                "Store the payment key file",
                [
                    {
                        "file_path": f"apps/{REFUSED_KEY}.py",
                        "old_string": "",
                        "new_string": "KEY = 1",
                    }
                ],
            )
        ],
        "2026-11-21",
    )
    alice.historian("ingest")
    alice.historian("share", "--session", ALICE_SESSION)
    text = alice.shared(ALICE_SESSION).read_text(encoding="utf-8")
    assert SECRET not in text and "[REDACTED]" in text
    assert "vault.internal.example" not in text
    refused = alice.run("karni-historian", "share", "--session", ALICE_LATER)
    assert refused.returncode == 1
    assert f"session {ALICE_LATER} refused" in refused.stderr and "Stripe" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert not alice.shared(ALICE_LATER).exists()
    for path in (alice.clone / HISTORY).iterdir():
        assert REFUSED_KEY not in path.read_text(encoding="utf-8")


def test_sharing_needs_the_users_own_consent(team):
    alice, _bob = team
    alice.session(ALICE_SESSION, HARD_DELETE, "2026-11-20")
    alice.historian("ingest")
    config = alice.clone / ".karni" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text("[historian]\nshare_recommended = true\n")
    auto = alice.run("karni-historian", "share", "--auto")
    assert auto.returncode == 0 and "sharing is off" in auto.stderr
    assert not (alice.clone / HISTORY).exists()
    assert "recommends sharing" in alice.run("karni", "doctor").stdout
    user_config = alice.home / "config" / "karni" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text(f"[historian]\nshare = [{json.dumps(str(alice.clone))}]\n")
    assert "shared to" in alice.historian("share", "--auto")
    assert alice.shared(ALICE_SESSION).exists()
    assert "recommends sharing" not in alice.run("karni", "doctor").stdout
    assert os.path.isfile(alice.shared(ALICE_SESSION))


LISTED = (
    "def index(request):\n"
    "    events = Event.objects.filter(deleted=False).order_by('-starts_at')\n"
    "    return [event.title for event in events]"
)


def test_blame_and_search_find_a_teammates_shared_session(team):
    alice, bob = team
    alice.session(
        ALICE_LATER,
        [
            (
                "List the events that are not deleted, newest first, in the index view",
                [_edit("apps/events/views.py", VIEWS.rstrip("\n"), LISTED)],
            )
        ],
        "2026-11-22",
    )
    (alice.clone / "apps" / "events" / "views.py").write_text(LISTED + "\n")  # the agent's edit
    alice.git("commit", "-qam", "index lists events")
    alice.historian("ingest")
    alice.historian("wrapup", "1")  # condensed, so its episode is shared too
    _share_and_push(alice, ALICE_LATER, "share the listing session")
    alice.git("push", "-q")
    bob.git("pull", "-q")
    bob.historian("ingest")  # reads the shared history into Bob's store

    blamed = json.loads(bob.historian("blame", "apps/events/views.py", "--json"))
    listed = [r for r in blamed["ranges"] if r["session"]]
    assert listed, blamed
    assert {r["session"]["id"] for r in listed} == {ALICE_LATER}
    assert all("newest first" in r["request"]["text"] for r in listed)
    assert all(r["commit"]["author"] == "Alice" for r in listed)

    found = json.loads(bob.historian("search", "deleted", "newest", "--author", "Alice", "--json"))
    assert {hit["session"] for hit in found["hits"]} == {ALICE_LATER}, found
    assert json.loads(bob.historian("search", "newest", "--author", "Bob", "--json"))["hits"] == []

    page = bob.clone.parent / "bob-timeline.html"
    bob.historian("timeline", "--html", str(page))
    text = page.read_text(encoding="utf-8")
    block = text.split('<script type="application/json" id="timeline-data">', 1)[1]
    data = json.loads(block.split("</script>", 1)[0])
    (shared,) = [s for s in data["sessions"] if s["id"] == ALICE_LATER]
    assert (shared["author"], shared["local"]) == ("Alice", False)
