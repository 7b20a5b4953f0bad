"""Opening the store when others open it too, and when it is damaged: wait, or move it aside.

No message may advise deleting the store: a damaged one is renamed to
``historian.db.broken-<time>`` (with its companions), a new one is started,
and the line says where the old one is. Many processes creating or
upgrading the schema at once never trip over each other.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from karni_historian.cli import main
from karni_historian.store import MIGRATIONS, SCHEMA_VERSION, Store, StoreError, db_path
from karni_historian.store.database import failure_line
from karni_historian.store.recovery import identity, is_damaged, set_aside

DAMAGE = b"this is not a database, but it is the user's: keep it\n" * 40


@pytest.fixture
def root(tmp_path):
    (tmp_path / "manage.py").write_text("")
    return tmp_path


def _broken(root) -> list[str]:
    return sorted(p.name for p in (root / ".karni" / "local").iterdir() if ".broken-" in p.name)


def _damage(root) -> None:
    folder = root / ".karni" / "local"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "historian.db").write_bytes(DAMAGE)


def test_a_damaged_store_is_moved_aside_kept_and_a_new_one_started(root):
    _damage(root)
    with Store.open(root, create=True) as store:
        assert store.schema_version == SCHEMA_VERSION
        note = store.note
    (broken,) = _broken(root)
    aside = root / ".karni" / "local" / broken
    assert aside.read_bytes() == DAMAGE
    assert note == (
        f"the historian store {db_path(root)} was damaged (file is not a database): moved it "
        f"to {aside}, kept as it was, and started a new one; `karni-historian ingest` reads "
        f"the transcripts into the new one"
    )
    with Store.open(root) as store:  # the new store opens as any other
        assert store.note is None


def test_the_command_says_so_on_stderr_and_carries_on(root, capsys, monkeypatch):
    _damage(root)
    monkeypatch.chdir(root)
    assert main(["sessions"]) == 0
    note, rest = capsys.readouterr().err.split("\n", 1)
    assert note.startswith(f"karni-historian: the historian store {db_path(root)} was damaged")
    assert "remove" not in note and "delete" not in note
    assert rest == "no sessions yet; run `karni-historian ingest`\n"


def test_the_companions_move_with_the_store(root):
    Store.open(root, create=True).close()
    path = db_path(root)
    for suffix in ("-wal", "-shm", "-journal"):
        with open(path + suffix, "w") as handle:
            handle.write(suffix)
    aside = set_aside(path, identity(path))
    assert aside is not None and aside.startswith(path + ".broken-")
    assert sorted(_broken(root)) == sorted(
        os.path.basename(aside) + suffix for suffix in ("", "-wal", "-shm", "-journal")
    )
    assert not os.path.exists(path)
    assert Path(aside + "-shm").read_text() == "-shm"


def test_a_read_only_open_never_moves_a_damaged_store(root):
    _damage(root)
    with pytest.raises(StoreError) as error:
        Store.open(root, readonly=True)
    assert str(error.value) == (
        f"the historian store {db_path(root)} is damaged (file is not a database); run "
        f"`karni-historian ingest`: it moves the damaged file aside, keeping it, and starts "
        f"a new store"
    )
    assert _broken(root) == []


def test_damage_found_while_a_command_runs_moves_the_store_aside(root):
    Store.open(root, create=True).close()
    damaged = sqlite3.DatabaseError("database disk image is malformed")
    line = failure_line(root, damaged)
    (aside,) = [name for name in _broken(root) if not name.endswith(("-wal", "-shm"))]
    assert line.startswith(f"the historian store {db_path(root)} was damaged (database disk")
    assert line.endswith("reads the transcripts into the new one, then run this command again")
    assert aside in line
    with Store.open(root) as store:
        assert store.schema_version == SCHEMA_VERSION


def test_a_store_replaced_meanwhile_is_not_moved_aside(root):
    Store.open(root, create=True).close()
    path = db_path(root)
    found = identity(path)
    os.replace(path, path + ".other")
    Store.open(root, create=True).close()  # another process started a new store
    assert set_aside(path, found) is None
    assert _broken(root) == []


@pytest.mark.parametrize(
    ("error", "damaged"),
    [
        (sqlite3.DatabaseError("file is not a database"), True),
        (sqlite3.DatabaseError("database disk image is malformed"), True),
        (sqlite3.OperationalError("database is locked"), False),
        (sqlite3.OperationalError("disk I/O error"), False),
    ],
)
def test_only_a_damaged_file_counts_as_damaged(error, damaged):
    assert is_damaged(error) is damaged


def test_no_failure_line_advises_removing_the_store(root):
    errors = [
        sqlite3.OperationalError("database is locked"),
        sqlite3.OperationalError("database or disk is full"),
        sqlite3.OperationalError("attempt to write a readonly database"),
        sqlite3.OperationalError("no such table: sessions"),
        sqlite3.DatabaseError("file is not a database"),
        OSError(28, "No space left on device"),
    ]
    from karni_historian.store.failures import describe_failure

    for error in errors:
        line = describe_failure(db_path(root), error)
        assert "remove" not in line and "delete" not in line, line


def test_a_newer_store_with_tables_of_its_own_asks_for_an_upgrade(root):
    Store.open(root, create=True).close()
    connection = sqlite3.connect(db_path(root))
    connection.execute("CREATE TABLE from_the_future (x)")
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    with pytest.raises(StoreError, match=r"upgrade karni-historian$"):
        Store.open(root)


def test_a_foreign_object_is_named_with_its_fix(root):
    Store.open(root, create=True).close()
    connection = sqlite3.connect(db_path(root))
    connection.execute("CREATE VIEW planted AS SELECT 1")
    connection.close()
    with pytest.raises(StoreError) as error:
        Store.open(root)
    assert "holds a view `planted` karni-historian did not create" in str(error.value)
    assert "DROP VIEW" in str(error.value) and "move it aside" in str(error.value)
    assert "remove" not in str(error.value)


OPEN_AND_CLOSE = """
import sys
from pathlib import Path
from karni_historian.store import Store, StoreError
try:
    with Store.open(sys.argv[1], create=True) as store:
        print(store.schema_version)
except StoreError as error:
    print(error)
"""


@pytest.mark.parametrize("start", [None, 1, 4], ids=["new", "version 1", "version 4"])
def test_many_processes_create_or_upgrade_the_schema_at_once(root, start):
    if start is not None:
        folder = root / ".karni" / "local"
        folder.mkdir(parents=True, mode=0o700)
        connection = sqlite3.connect(db_path(root), isolation_level=None)
        for statements in MIGRATIONS[:start]:
            for statement in statements:
                connection.execute(statement)
        connection.execute(f"PRAGMA user_version = {start}")
        connection.close()
    command = [sys.executable, "-c", OPEN_AND_CLOSE, str(root)]
    processes = [subprocess.Popen(command, stdout=subprocess.PIPE) for _ in range(10)]
    answers = [process.communicate(timeout=120)[0].decode() for process in processes]
    assert answers == [f"{SCHEMA_VERSION}\n"] * 10


def test_a_migration_applied_meanwhile_is_skipped(root):
    """The version is read again under the write lock: another process's upgrade is not redone."""
    Store.open(root, create=True).close()
    store = Store.open(root)
    try:
        store.migrate(0)  # as if it had read version 0 before another process upgraded
        assert store.schema_version == SCHEMA_VERSION
    finally:
        store.close()


@contextlib.contextmanager
def _write_lock_held(path: str, seconds: float = 1.0) -> Iterator[None]:
    """Another process holds ``path``'s write lock (BEGIN IMMEDIATE) for ``seconds`` meanwhile."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('BEGIN IMMEDIATE'); print('held', flush=True)\n"
            "time.sleep(float(sys.argv[2])); c.execute('ROLLBACK')\n",
            path,
            str(seconds),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        yield
    finally:
        holder.wait(30)


def test_a_store_held_by_a_writer_is_waited_for(root):
    """A lock held for less than the busy timeout is a wait, not an error."""
    Store.open(root, create=True).close()
    with _write_lock_held(db_path(root)), Store.open(root) as store, store.transaction():
        store.connection.execute("PRAGMA user_version")


def test_a_new_store_held_by_another_is_waited_for_before_it_turns_to_wal(root):
    """SQLite refuses a journal-mode change under another's lock at once: opening waits instead."""
    folder = root / ".karni" / "local"
    folder.mkdir(parents=True, mode=0o700)
    sqlite3.connect(db_path(root)).close()  # a store another process has just created
    with _write_lock_held(db_path(root)), Store.open(root, create=True) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
