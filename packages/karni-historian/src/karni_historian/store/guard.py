"""Opening a ``historian.db`` that came with a cloned repository without trusting it.

A repository can ship its own ``.karni/local/historian.db``, or links in its
place. Before a connection is used:

- the database and its ``-wal``, ``-shm`` and ``-journal`` companions, and
  every folder from the project root down to them, must not be symbolic
  links, so SQLite never writes through one;
- ``PRAGMA trusted_schema = OFF`` stops functions in the schema from running;
- the schema may hold only the tables and indexes karni-historian's
  migrations create (SQLite's own ``sqlite_*`` objects aside): a view or a
  trigger is refused; the one virtual table, the full-text index, must be
  declared exactly as its migration declares it (no other module, no other
  options), and the tables FTS5 keeps it in are known by name;
- a read-only connection (the brief's) gets a time limit, enforced by a
  progress handler, so no query can hang the brief.

See ``docs/security.md``.
"""

from __future__ import annotations

import os
import time

from karni.agent.common.sanitize import clean_field

from karni_historian.store.schema import MIGRATIONS
from karni_historian.store.search_sql import SEARCH_SHADOW_TABLES

__all__ = ["READ_TIME_LIMIT", "check_paths", "guard_connection"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

READ_TIME_LIMIT = 5.0
"""Seconds a read-only connection may spend in queries before they are interrupted."""

_COMPANIONS = ("", "-wal", "-shm", "-journal")
_PROGRESS_STEPS = 10_000


def check_paths(root: str | os.PathLike[str], path: str) -> None:
    """Refuse a database reached through a link, or with a link among its companion files.

    Raises:
        StoreError: One line naming the link.
    """
    base = os.path.abspath(os.fspath(root))
    relative = os.path.relpath(os.path.abspath(path), base)
    current = base
    for part in relative.split(os.sep):
        current = os.path.join(current, part)
        _refuse_link(current)
    for suffix in _COMPANIONS[1:]:
        _refuse_link(path + suffix)


def _refuse_link(path: str) -> None:
    if os.path.islink(path):
        # bench row "karni context … (historian store, 1,000 compartments)" runs without it
        from karni_historian.errors import StoreError

        raise StoreError(
            f"{path} is a symlink; karni-historian never opens its store through a "
            f"link: put the file or folder it points to in its place and run the command again"
        )


def _created_name(statement: str) -> str | None:
    """The table or index a ``CREATE [UNIQUE] TABLE|INDEX [IF NOT EXISTS] name`` creates."""
    words = statement.replace("(", " ( ").split()
    if len(words) < 3 or words[0].upper() != "CREATE":
        return None
    words = words[2:] if words[1].upper() in ("UNIQUE", "VIRTUAL") else words[1:]
    if words[0].upper() not in ("TABLE", "INDEX"):
        return None
    if [word.upper() for word in words[1:4]] == ["IF", "NOT", "EXISTS"]:
        words = words[3:]
    return words[1] if len(words) > 1 else None


def _expected_objects() -> frozenset[str]:
    names = (_created_name(statement) for statements in MIGRATIONS for statement in statements)
    return frozenset([*(name for name in names if name), *SEARCH_SHADOW_TABLES])


def _virtual_tables() -> dict[str, str]:
    """Each virtual table the migrations create, by name: the statement that declares it."""
    return {
        str(_created_name(statement)): statement
        for statements in MIGRATIONS
        for statement in statements
        if statement.upper().startswith("CREATE VIRTUAL TABLE")
    }


def _foreign_object(connection: sqlite3.Connection) -> tuple[str, str] | None:
    """``(type, name)`` of a schema object karni-historian did not create, or None."""
    expected = _expected_objects()
    rows = connection.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
    virtual = None
    for kind, name, sql in rows:
        if str(name).startswith("sqlite_"):
            continue
        if kind not in ("table", "index") or name not in expected:
            return str(kind), str(name)
        if str(sql or "").upper().startswith("CREATE VIRTUAL TABLE"):
            virtual = virtual if virtual is not None else _virtual_tables()
            if virtual.get(name) != sql:
                return "virtual table", str(name)
    return None


def _limit_time(connection: sqlite3.Connection, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    connection.set_progress_handler(lambda: int(time.monotonic() > deadline), _PROGRESS_STEPS)


def guard_connection(connection: sqlite3.Connection, path: str, *, readonly: bool) -> None:
    """Apply the rules above to a freshly opened connection.

    Raises:
        StoreError: The schema holds an object karni-historian did not create.
    """
    connection.execute("PRAGMA trusted_schema = OFF")
    if readonly:
        _limit_time(connection, READ_TIME_LIMIT)
    from karni_historian.store.schema import SCHEMA_VERSION

    if connection.execute("PRAGMA user_version").fetchone()[0] > SCHEMA_VERSION:
        return  # a newer karni-historian's schema: opening refuses it, asking for an upgrade
    foreign = _foreign_object(connection)
    if foreign is not None:
        connection.close()

        # bench row "karni context … (historian store, 1,000 compartments)" runs without it
        from karni_historian.errors import StoreError

        kind, name = map(clean_field, foreign)
        raise StoreError(
            f"the historian store {path} holds a {kind} `{name}` karni-historian did not "
            f"create, so it is not opened: if you added it, drop it (sqlite3's DROP "
            f"{kind.upper()}); if not, the file came from elsewhere: move it aside and run "
            f"`karni-historian ingest` to start a new store"
        )
