"""``store_problem``: what ``karni doctor`` says about a store the briefs cannot read."""

import os
import subprocess
import sys

from karni_historian.brief.provider import HistorianProvider
from karni_historian.store import SCHEMA_VERSION, Store, db_path

DB = ".karni/local/historian.db"


def test_a_sound_store_has_no_problem(root):
    Store.open(root, create=True).close()
    assert HistorianProvider().store_problem(root) is None
    assert HistorianProvider().store_problem(str(root)) is None


def test_no_store_is_no_problem(root):
    assert HistorianProvider().store_problem(root) is None


def test_a_file_that_is_no_database_is_named_with_a_fix_that_keeps_it(root):
    os.makedirs(os.path.dirname(db_path(root)))
    with open(db_path(root), "wb") as handle:
        handle.write(b"this is not SQLite at all\n" * 200)
    problem = HistorianProvider().store_problem(root)
    assert problem == (
        f"{DB} cannot be read (file is not a database): move it aside with "
        f"`mv {DB} {DB}.broken` (it keeps what it holds, for sqlite3's .recover) and run "
        f"`karni-historian ingest` to start a new store"
    )
    for word in ("remove", "delete", "rm "):
        assert word not in problem


def test_a_damaged_page_is_found_by_the_quick_check(root):
    with Store.open(root, create=True) as store, store.transaction():
        for number in range(400):
            store.ensure_session(f"session-{number}", "generic")
    path = db_path(root)
    for suffix in ("-wal", "-shm"):
        assert not os.path.exists(path + suffix)
    size = os.path.getsize(path)
    with open(path, "r+b") as handle:  # scribble over everything after the first page
        handle.seek(8192)
        handle.write(b"\xff" * (size - 8192))
    problem = HistorianProvider().store_problem(root)
    assert problem is not None and problem.startswith(f"{DB} cannot be read (")
    assert "run `karni-historian ingest` to start a new store" in problem


def test_a_store_from_a_newer_historian_says_to_upgrade(root):
    Store.open(root, create=True).close()
    import sqlite3

    connection = sqlite3.connect(db_path(root))
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    problem = HistorianProvider().store_problem(root)
    assert problem is not None and problem.endswith("; upgrade karni-historian")


def test_karni_doctor_names_the_problem_and_context_stays_silent(root):
    os.makedirs(os.path.dirname(db_path(root)))
    with open(db_path(root), "wb") as handle:
        handle.write(b"garbage" * 1000)
    env = {**os.environ, "KARNI_HISTORY_PROVIDERS": "historian", "KARNI_CACHE_DIR": ""}
    run = {"cwd": root, "env": env, "capture_output": True, "text": True, "timeout": 60}
    doctor = subprocess.run([sys.executable, "-m", "karni.cli", "doctor", "-q"], **run)
    assert doctor.returncode == 0
    lines = doctor.stdout.splitlines()
    assert any(line.endswith("store detected, cannot be read (below)") for line in lines)
    assert lines[-2:] == [
        "history stores that cannot be read:",
        f"  historian: {HistorianProvider().store_problem(root)}",
    ]
    for argv in (["context"], ["context", "--with-history", "a.py"]):
        context = subprocess.run([sys.executable, "-m", "karni.cli", *argv], **run)
        assert (context.returncode, context.stderr) == (0, "")
        assert "HISTORY" not in context.stdout and "historian" not in context.stdout
