"""Many agents at once: every command on one project, while its transcript grows.

Each case starts the same crowd of workers (``docs/reliability.md``):
``karni-historian ingest --from``, ``ingest`` then ``run``, ``ingest`` then
``wrapup``, ``karni context --with-history`` (a file's brief and the
project's) and Claude Code's end-of-session hook, which starts the
historian in the background. They begin together on a project with no store,
or with the store of an older karni-historian, while a writer adds turns to
the transcript. When all of them (and the hooks' background runs) are done,
the case checks that:

- every message of the transcript is in the store exactly once, as a single
  ``ingest`` into a new store gives them;
- no command failed or printed a line on stderr, and the hooks' log holds no
  failure;
- no temporary file, journal or moved-aside store is left, and no lock is held;
- no process started for the project is still running.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time

import pytest
from karni_it.crowd import FILE, Crowd, Worker, Writer, count

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="processes are counted through /proc"
)

TURNS = 16
"""Turns the writer adds (four messages each)."""

PAUSE = 0.15
"""Seconds between two turns."""

MOST_ROUNDS = 8
"""The most rounds a worker runs while the transcript grows (then one more)."""

CASE_SECONDS = 240
"""How long a case may take, its background runs included."""


def _workers(crowd: Crowd) -> list[Worker]:
    ingest = (["karni-historian", "-q", "ingest", "--from", str(crowd.transcripts)], b"")
    run = (["karni-historian", "-q", "run"], b"")
    wrapup = (["karni-historian", "-q", "wrapup"], b"")
    brief = (["karni", "context", "--with-history", FILE], b"")
    project_brief = (["karni", "context", "--with-history"], b"")
    hook = (["karni", "hook", "claude-code", "Stop"], crowd.stop_event())
    plan = [
        ("ingest", [ingest], 3),
        ("ingest, run", [ingest, run], 2),
        ("ingest, wrapup", [ingest, wrapup], 2),
        ("context", [brief, project_brief], 3),
        ("end-of-session hook", [hook], 2),
    ]
    workers = []
    for name, commands, how_many in plan:
        for number in range(how_many):
            most = 3 if name == "end-of-session hook" else MOST_ROUNDS
            workers.append(Worker(f"{name} {number + 1}", commands, crowd, most))
    return workers


def _stored(database: object) -> list[tuple[str, int, str, str]]:
    connection = sqlite3.connect(database)  # type: ignore[arg-type]
    try:
        rows = connection.execute(
            "SELECT session_id, ordinal, role, message_id FROM raw_messages"
            " ORDER BY session_id, ordinal"
        ).fetchall()
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        connection.close()
    return [tuple(row) for row in rows]


def _reference(crowd: Crowd, tmp_path: object) -> list[tuple[str, int, str, str]]:
    """The messages one ``ingest`` of the final transcript stores in a new project."""
    alone = Crowd(tmp_path / "alone")  # type: ignore[operator]
    alone.transcript.write_bytes(crowd.transcript.read_bytes())
    # The transcript records the crowd's project, so this project takes it only when told to.
    command = ["karni-historian", "-q", "ingest", "--from", str(alone.transcripts)]
    result = alone.run([*command, "--accept-other-project"])
    assert result.problems() == []
    return _stored(alone.database)


def _prompts_once(crowd: Crowd) -> list[int]:
    """The turns whose prompt is not stored exactly once."""
    connection = sqlite3.connect(crowd.database)
    try:
        wrong = []
        for number in range(1, TURNS + 1):
            (found,) = connection.execute(
                "SELECT count(*) FROM raw_messages WHERE role = 'user' AND instr(parts_json, ?)",
                (f"Step {number}: ",),
            ).fetchone()
            if found != 1:
                wrong.append(number)
    finally:
        connection.close()
    return wrong


def _condensed_twice(crowd: Crowd) -> list[tuple[int, int, int]]:
    """Compartments (sequence, start, end) that cover a message an earlier one covers."""
    connection = sqlite3.connect(crowd.database)
    try:
        rows = connection.execute(
            "SELECT sequence, start_message, end_message FROM compartments ORDER BY sequence"
        ).fetchall()
    finally:
        connection.close()
    covered = 0
    twice = []
    for sequence, first, last in rows:
        if first <= covered:
            twice.append((sequence, first, last))
        covered = max(covered, last)
    return twice


def _run_together(crowd: Crowd) -> tuple[list[Worker], list[str]]:
    """Start the workers and the writer together; the workers and the processes left."""
    workers = _workers(crowd)
    writer = Writer(crowd, TURNS, PAUSE)
    started = time.monotonic()
    for worker in workers:
        worker.start(writer.done)
    writer.start()
    for worker in workers:
        assert worker.thread is not None
        worker.thread.join(max(1.0, CASE_SECONDS - (time.monotonic() - started)))
    assert not any(worker.thread and worker.thread.is_alive() for worker in workers)
    left = crowd.wait_for_processes(max(10.0, CASE_SECONDS - (time.monotonic() - started)))
    return workers, left


@pytest.mark.parametrize("start", [None, 1, 4], ids=["no store", "schema 1", "schema 4"])
def test_many_processes_on_one_project(crowd, tmp_path, start):
    if start is not None:
        crowd.old_store(start)
    workers, left = _run_together(crowd)
    runs = [run for worker in workers for run in worker.runs]
    errors = [problem for run in runs for problem in run.problems()]
    errors += crowd.hook_log_problems()
    reference = _reference(crowd, tmp_path)
    count(
        processes=len(workers),
        runs=len(runs) + crowd.hook_log_runs(),
        messages=len(reference),
        errors=len(errors),
    )

    assert errors == []
    assert left == []
    assert crowd.leftovers() == []
    assert _stored(crowd.database) == reference
    assert _prompts_once(crowd) == []
    assert _condensed_twice(crowd) == []
    briefs = [run for run in runs if run.argv[:2] == ["karni", "context"]]
    assert briefs and all(run.stdout.startswith(b"APPS: ") for run in briefs)


def test_guard_each_check_can_fail(crowd, tmp_path):
    """A message stored twice, a failing command, a leftover file, a held lock, a live process."""
    for command in (["ingest", "--from", str(crowd.transcripts)], ["wrapup", "1"]):
        assert crowd.run(["karni-historian", "-q", *command]).problems() == []
    connection = sqlite3.connect(crowd.database, isolation_level=None)
    connection.execute(
        "INSERT INTO raw_messages (session_id, ordinal, message_id, role, parts_json)"
        " SELECT session_id, ordinal + 1000, message_id, role, parts_json FROM raw_messages"
        " WHERE ordinal = 1"
    )
    # The first compartment again, after the last (whatever columns this schema has).
    connection.execute("CREATE TEMP TABLE again AS SELECT * FROM compartments WHERE sequence = 0")
    connection.execute(
        "UPDATE temp.again SET id = NULL, sequence = (SELECT max(sequence) + 1 FROM compartments)"
    )
    (last,) = connection.execute("SELECT sequence FROM temp.again").fetchone()
    connection.execute("INSERT INTO compartments SELECT * FROM temp.again")
    connection.close()
    assert _stored(crowd.database) != _reference(crowd, tmp_path)
    assert [sequence for sequence, _, _ in _condensed_twice(crowd)] == [last]
    failing = crowd.run(["karni-historian", "-q", "wrapup", "--session", "nope"])
    assert failing.problems()
    (crowd.local / ".historian-handover.json.1.abcd.tmp").write_text("")
    import fcntl  # POSIX only, as the suite is

    lock = crowd.local / "hooks-historian.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert sorted(crowd.leftovers()) == [
            ".karni/local/.historian-handover.json.1.abcd.tmp",
            ".karni/local/hooks-historian.lock (held)",
        ]
    finally:
        os.close(fd)
    sleeping = [sys.executable, "-c", "import time; time.sleep(60)", str(crowd.project)]
    with subprocess.Popen(sleeping) as sleeper:
        try:
            for _ in range(500):  # until it runs `sleep`
                if crowd.processes_left():
                    break
                time.sleep(0.01)
            assert crowd.processes_left() == [" ".join(sleeping) + " "]
        finally:
            sleeper.kill()
