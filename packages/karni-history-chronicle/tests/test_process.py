"""How chronicle is run: a deadline that kills the whole group, stdin closed, no shell."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from karni.agent.history import compose
from karni.agent.history_chronicle import ChronicleProvider
from karni_provider_testkit.fake_chronicle import pid_alive

FILE = "src/session/store.ts"


def _wait_until_gone(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.02)
    return not pid_alive(pid)


@pytest.mark.parametrize("through_compose", [False, True])
def test_a_run_past_the_timeout_is_killed_with_everything_it_started(
    example, fake_chronicle, through_compose
):
    fake_chronicle.configure(delay=60, grandchild=True)
    provider = ChronicleProvider(timeout=1.0)

    if through_compose:
        result = compose(example.root, FILE, providers=[provider])
    else:
        result = provider.context(example.root, FILE)

    assert result is None  # a run left to finish would have answered after 60 s
    (call,) = fake_chronicle.calls()
    assert call.grandchild is not None
    assert _wait_until_gone(call.pid), f"the double (pid {call.pid}) is still running"
    assert _wait_until_gone(call.grandchild), f"its child (pid {call.grandchild}) still runs"


def test_a_run_inside_the_timeout_is_briefed(example, fake_chronicle):
    prompt = ChronicleProvider(timeout=5.0).context(example.root, FILE)
    fake_chronicle.configure(delay=0.3)
    slow = ChronicleProvider(timeout=5.0).context(example.root, FILE)
    assert slow == prompt  # waiting changes nothing in the brief
    assert slow is not None and slow.startswith(
        "## Why this file looks the way it does (Project Memory)\n**Active decisions**\n"
        "- No, keep session state in PostgreSQL.\n"
    )
    assert [call.argv[:2] for call in fake_chronicle.calls()] == [["context", FILE]] * 2


def test_the_project_brief_has_the_same_deadline(example, fake_chronicle):
    fake_chronicle.configure(delay=60)
    assert ChronicleProvider(timeout=0.5).project_context(example.root) is None
    (call,) = fake_chronicle.calls()
    assert _wait_until_gone(call.pid)


@pytest.fixture
def stdin_with_input():
    """This process's fd 0 holds unread input for the test, so an inherited stdin would show.

    pytest itself points fd 0 at /dev/null, which would make an inherited stdin
    look exactly like the provider's own /dev/null.
    """
    read_end, write_end = os.pipe()
    os.write(write_end, b"typed by the user\n")
    saved = os.dup(0)
    os.dup2(read_end, 0)
    os.close(read_end)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(write_end)


def test_stdin_is_closed(example, fake_chronicle, stdin_with_input):
    # "Closed" is /dev/null: the child reads end-of-file at once, so it can never wait for
    # input nor read the user's terminal, and fd 0 cannot be taken by a file the child opens.
    subprocess.run(["chronicle", "--version"], capture_output=True, check=True, timeout=30)
    assert fake_chronicle.calls()[0].stdin == "data"  # what inheriting fd 0 would give
    fake_chronicle.reset()

    ChronicleProvider().context(example.root, FILE)
    ChronicleProvider().project_context(example.root)

    assert [call.stdin for call in fake_chronicle.calls()] == ["eof", "eof"]


def test_no_shell_is_used(example, fake_chronicle, tmp_path, monkeypatch):
    seen: list[dict] = []
    real_spawn = os.posix_spawn

    def spy_spawn(program, argv, env, **kwargs):
        seen.append({"program": program, "argv": argv, "cwd": os.getcwd(), **kwargs})
        return real_spawn(program, argv, env, **kwargs)

    monkeypatch.setattr(os, "posix_spawn", spy_spawn)
    path = "src/$(touch pwned) `touch pwned2`; echo hi > x | cat &.ts"
    store = fake_chronicle.create_store(tmp_path / "shell")
    store.add_session()
    store.add_prompt("Escape nothing", {path: (1, 1)})
    here = os.getcwd()

    brief = ChronicleProvider().context(store.root, path)

    assert brief == '## What shaped this file\n1. 2026-07-20 09:01 +1 −1 — "Escape nothing"'
    (spawned,) = seen
    assert os.path.basename(spawned["program"]) == "chronicle"
    assert spawned["argv"][1:] == ["context", path, "--json", "--limit", "5"]
    assert spawned["cwd"] == str(store.root)  # run from the folder holding .chronicle/
    assert os.getcwd() == here  # and Karni's own working folder is back at once
    assert spawned["setsid"] is True
    opened = {
        action[1]: action[2]
        for action in spawned["file_actions"]
        if action[0] == os.POSIX_SPAWN_OPEN
    }
    assert opened == {0: os.devnull, 2: os.devnull}  # stdin closed, stderr discarded
    assert fake_chronicle.calls()[0].argv == ["context", path, "--json", "--limit", "5"]
    assert not (store.root / "pwned").exists()
    assert not (store.root / "pwned2").exists()


def test_without_posix_spawn_the_run_goes_through_subprocess(example, fake_chronicle, monkeypatch):
    from karni.agent.common import processes

    seen: list[dict] = []
    real_popen = subprocess.Popen

    class SpyPopen(real_popen):
        def __init__(self, args, *rest, **kwargs):
            seen.append({"args": args, **kwargs})
            super().__init__(args, *rest, **kwargs)

    monkeypatch.setattr(processes, "_SPAWN", False)
    monkeypatch.setattr(subprocess, "Popen", SpyPopen)
    expected = ChronicleProvider().context(example.root, FILE)
    assert expected is not None
    (spawned,) = seen
    assert spawned.get("shell", False) is False
    assert spawned["args"][1:] == ["context", FILE, "--json", "--limit", "5"]
    assert spawned["stdin"] == spawned["stderr"] == subprocess.DEVNULL
    assert spawned["start_new_session"] is True


def test_the_project_brief_command(example, fake_chronicle, snapshot_text):
    brief = ChronicleProvider().project_context(example.root)
    assert brief == snapshot_text
    (call,) = fake_chronicle.calls()
    assert call.argv == ["knowledge", "--type", "decision", "--json"]
    assert call.cwd == str(example.root)


def test_the_project_brief_through_compose(example, snapshot_text):
    assert compose(example.root, providers=[ChronicleProvider()]) == snapshot_text


def test_decisions_are_sorted_newest_first_whatever_the_store_order(fake_chronicle, tmp_path):
    store = fake_chronicle.create_store(tmp_path)
    late = store.add_session(ts="2026-07-01T08:00:00.000Z")
    early = store.add_session(ts="2026-07-02T08:00:00.000Z")
    for kind, text, session, event_id, ts in [
        ("decision", "We decided to ship on Fridays", late, "evt_C", "2026-07-03T10:00:00.000Z"),
        (
            "decision",
            "Going with trunk-based development",
            early,
            "evt_A",
            "2026-07-02T09:00:00.000Z",
        ),
        ("decision", "Let's use ruff for linting", early, "evt_B", "2026-07-02T09:00:00.000Z"),
        ("todo", "TODO: write the release notes", early, "evt_D", "2026-07-04T09:00:00.000Z"),
    ]:
        store.add_knowledge(kind, text, session=session, event_id=event_id, ts=ts)
    brief = ChronicleProvider().project_context(tmp_path)
    assert brief == "\n".join(
        [
            "## Decisions, newest first",
            "- We decided to ship on Fridays _(agent, 2026-07-03 10:00)_",
            "- Let's use ruff for linting _(agent, 2026-07-02 09:00)_",
            "- Going with trunk-based development _(agent, 2026-07-02 09:00)_",
        ]
    )


def test_no_decisions_is_no_project_brief(fake_chronicle, tmp_path):
    fake_chronicle.create_store(tmp_path)
    assert ChronicleProvider().project_context(tmp_path) is None
    assert compose(tmp_path, providers=[ChronicleProvider()]) is None


def test_a_longer_timeout_is_not_cut_short_by_karni(example, fake_chronicle):
    # The documented replacement, ChronicleProvider(timeout=15.0): a reply after 10.5 s (past
    # Karni's default 10 s deadline) still reaches the brief, because Karni waits for the
    # provider's own timeout plus a second.
    fake_chronicle.configure(delay=10.5)
    output = compose(example.root, FILE, providers=[ChronicleProvider(timeout=15.0)])
    assert output is not None
    assert output.startswith(f"HISTORY: {FILE} (gigai-chronicle)\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's")
@pytest.mark.parametrize("delay", [0, 60])
def test_a_child_in_its_own_session_does_not_outlive_the_call(example, fake_chronicle, delay):
    fake_chronicle.configure(delay=delay, grandchild="own-session")
    ChronicleProvider(timeout=1.0).context(example.root, FILE)
    (call,) = fake_chronicle.calls()
    assert call.grandchild is not None
    assert _wait_until_gone(call.grandchild), f"its child (pid {call.grandchild}) still runs"


def test_chronicle_is_never_taken_from_the_working_folder(
    example, fake_chronicle, tmp_path, monkeypatch
):
    planted = tmp_path / "planted"
    planted.mkdir()
    program = planted / "chronicle"
    program.write_text(f"#!/bin/sh\ntouch {tmp_path / 'pwned'}\n", encoding="utf-8")
    program.chmod(0o755)
    monkeypatch.chdir(planted)
    monkeypatch.setenv("PATH", os.pathsep.join(["", ".", "planted", os.environ["PATH"]]))
    monkeypatch.chdir(tmp_path)
    assert ChronicleProvider().context(example.root, FILE) is not None
    assert ChronicleProvider(executable="planted/chronicle").context(example.root, FILE) is None
    assert not (tmp_path / "pwned").exists()


def test_a_brief_imports_none_of_subprocess_json_re_or_pathlib(example, fake_chronicle):
    """What the Chronicle row of docs/performance.md pays around the run: none of these."""
    probe = (
        "import sys\n"
        "from karni.agent.history import compose\n"
        "from karni.agent.history_chronicle import ChronicleProvider\n"
        f"print(compose(sys.argv[1], {FILE!r}, providers=[ChronicleProvider()]) is not None)\n"
        "heavy = {'subprocess', 'json', 're', 'pathlib', 'selectors', 'signal', 'threading',\n"
        "         'locale', 'typing', 'importlib'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    assert _run_probe(probe, example.root) == "True\n[]\n"
    assert [call.argv[:2] for call in fake_chronicle.calls()] == [["context", FILE]]


def test_the_reply_is_read_with_modules_loaded_while_chronicle_ran(example, fake_chronicle):
    """Reading and briefing the reply loads nothing after the run: it all loads during it."""
    probe = (
        "import sys\n"
        "from karni.agent.common import processes\n"
        "from karni.agent.history_chronicle import ChronicleProvider\n"
        "real = processes.run_program\n"
        "seen = {}\n"
        "def watched(*args, **kwargs):\n"
        "    stdout = real(*args, **kwargs)\n"
        "    seen['after run'] = set(sys.modules)\n"
        "    return stdout\n"
        "processes.run_program = watched\n"
        f"brief = ChronicleProvider().context(sys.argv[1], {FILE!r})\n"
        "from karni.agent.common import jsontext\n"
        "print(brief is not None, bool(jsontext._scanner))\n"
        "print(sorted(set(sys.modules) - seen['after run']))\n"
    )
    assert _run_probe(probe, example.root) == "True True\n[]\n"


def _run_probe(probe: str, root: object) -> str:
    """What a fresh interpreter running ``probe`` with ``root`` as its argument prints."""
    done = subprocess.run([sys.executable, "-c", probe, str(root)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout
