"""Reading OpenCode's two stores: the JSON files of 2025 and the SQLite database since 1.2.

Both answer the same few questions, so the importer in
:mod:`karni_historian.ingest.opencode` does not care which one it reads:

- :class:`FileStore`: ``storage/session/<project>/<session>.json``,
  ``storage/message/<session>/<message>.json`` and
  ``storage/part/<message>/<part>.json``, each a whole JSON object rewritten
  on every change;
- :class:`DatabaseStore`: ``opencode*.db`` with tables ``session``,
  ``message`` and ``part`` whose ``data`` column holds the same objects
  without their ids. It is opened read-only (recent writes in its write-ahead
  log included) and every query reads one session's message list or one
  message's parts, so memory stays bounded.

Message and part ids sort in creation order, so both list them by id.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from karni_historian.ingest.reader import read_json_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

__all__ = ["DatabaseStore", "FileStore", "SessionRow", "StoreProblem", "open_store"]

_BUSY_SECONDS = 2.0


class StoreProblem(Exception):
    """An OpenCode store that cannot be read (the message says why)."""


class SessionRow:
    """One OpenCode session as its store lists it."""

    __slots__ = ("directory", "id", "parent", "title")

    def __init__(self, id: str, parent: str | None, directory: str | None, title: str | None):
        """Describe the session ``id``."""
        self.id = id
        self.parent = parent
        self.directory = directory
        self.title = title


def _listdir(folder: str, suffix: str = ".json") -> list[str]:
    try:
        return sorted(name for name in os.listdir(folder) if name.endswith(suffix))
    except OSError:
        return []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class FileStore:
    """The file-per-message store under ``storage/``."""

    def __init__(self, folder: str) -> None:
        """Read the store at ``folder`` (the ``storage`` directory)."""
        self.folder = folder

    def close(self) -> None:
        """Nothing to release."""

    def sessions(self) -> list[SessionRow]:
        """Every session of every project; the id comes from the file name."""
        rows: list[SessionRow] = []
        root = os.path.join(self.folder, "session")
        try:
            projects = sorted(os.listdir(root))
        except OSError:
            return rows
        for project in projects:
            for name in _listdir(os.path.join(root, project)):
                data = read_json_object(os.path.join(root, project, name)) or {}
                rows.append(
                    SessionRow(
                        name[: -len(".json")],
                        _text(data.get("parentID")),
                        _text(data.get("directory")),
                        _text(data.get("title")),
                    )
                )
        return rows

    def _message_files(self, session_id: str) -> list[str]:
        return _listdir(os.path.join(self.folder, "message", session_id))

    def fingerprint(self, session_id: str) -> tuple[int, int]:
        """``(message count, newest change in ns)``: equal means nothing changed."""
        folder = os.path.join(self.folder, "message", session_id)
        names = self._message_files(session_id)
        newest = 0
        for name in names:
            try:
                newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime_ns)
            except OSError:
                continue
        return len(names), newest

    def message_ids(self, session_id: str) -> list[str]:
        """The session's message ids in creation order."""
        return [name[: -len(".json")] for name in self._message_files(session_id)]

    def message(self, session_id: str, message_id: str) -> dict[str, Any] | None:
        """One message's info object."""
        return read_json_object(
            os.path.join(self.folder, "message", session_id, f"{message_id}.json")
        )

    def parts(self, session_id: str, message_id: str) -> list[dict[str, Any]]:
        """One message's parts in order."""
        folder = os.path.join(self.folder, "part", message_id)
        found = (read_json_object(os.path.join(folder, name)) for name in _listdir(folder))
        return [part for part in found if part is not None]


def _connect(path: str) -> sqlite3.Connection:
    """Open ``path`` read-only; an unwritable folder falls back to the main file alone."""
    base = Path(path).resolve().as_uri()
    for query in ("?mode=ro", "?mode=ro&immutable=1"):
        try:
            connection = sqlite3.connect(
                base + query, uri=True, timeout=_BUSY_SECONDS, isolation_level=None
            )
            connection.execute("PRAGMA query_only = ON")
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return connection
        except sqlite3.DatabaseError as error:
            last = error
    raise StoreProblem(f"cannot open it read-only ({last})")


class DatabaseStore:
    """The SQLite store ``opencode*.db``."""

    def __init__(self, path: str) -> None:
        """Open the database at ``path`` read-only.

        Raises:
            StoreProblem: It cannot be opened, or it is not an OpenCode 1.x store.
        """
        self.connection = _connect(path)
        try:
            self.columns = {
                table: {row[1] for row in self.connection.execute(f"PRAGMA table_info({table})")}
                for table in ("session", "message", "part", "session_message")
            }
            newer = (
                self.columns["session_message"]
                and self.connection.execute("SELECT 1 FROM session_message LIMIT 1").fetchone()
            )
        except sqlite3.DatabaseError as error:
            self.connection.close()
            raise StoreProblem(f"cannot read it ({error})") from error
        if not {"id", "data"} <= self.columns["message"] or not self.columns["part"]:
            self.connection.close()
            raise StoreProblem("it has no OpenCode message and part tables")
        self.newer_rows = bool(newer)

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()

    def _column(self, table: str, name: str) -> str:
        return name if name in self.columns[table] else "NULL"

    def sessions(self) -> list[SessionRow]:
        """Every session of the database."""
        column = self._column
        order = "time_created, id" if "time_created" in self.columns["session"] else "id"
        rows = self.connection.execute(
            f"SELECT id, {column('session', 'parent_id')}, {column('session', 'directory')},"
            f" {column('session', 'title')} FROM session ORDER BY {order}"
        ).fetchall()
        return [SessionRow(r[0], _text(r[1]), _text(r[2]), _text(r[3])) for r in rows]

    def fingerprint(self, session_id: str) -> tuple[int, int]:
        """``(message count, newest change in ms)`` over the session's messages and parts."""
        updated = self._column("message", "time_updated")
        count, newest = self.connection.execute(
            f"SELECT count(*), COALESCE(max({updated}), 0) FROM message WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        if "session_id" in self.columns["part"] and "time_updated" in self.columns["part"]:
            (parts,) = self.connection.execute(
                "SELECT COALESCE(max(time_updated), 0) FROM part WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            newest = max(int(newest or 0), int(parts or 0))
        return int(count), int(newest or 0)

    def message_ids(self, session_id: str) -> list[str]:
        """The session's message ids in creation order."""
        order = "time_created, id" if "time_created" in self.columns["message"] else "id"
        rows = self.connection.execute(
            f"SELECT id FROM message WHERE session_id = ? ORDER BY {order}", (session_id,)
        ).fetchall()
        return [row[0] for row in rows]

    def message(self, session_id: str, message_id: str) -> dict[str, Any] | None:
        """One message's info object (its ``data``)."""
        row = self.connection.execute(
            "SELECT data FROM message WHERE id = ?", (message_id,)
        ).fetchone()
        return _decode(row[0]) if row else None

    def parts(self, session_id: str, message_id: str) -> list[dict[str, Any]]:
        """One message's parts in order."""
        rows = self.connection.execute(
            "SELECT id, data FROM part WHERE message_id = ? ORDER BY id", (message_id,)
        ).fetchall()
        parts: list[dict[str, Any]] = []
        for part_id, data in rows:
            part = _decode(data)
            if part is not None:
                parts.append({**part, "id": part_id})
        return parts


def _decode(data: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(data) if isinstance(data, (str, bytes)) else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def open_store(path: str) -> FileStore | DatabaseStore:
    """The store at ``path``: a ``storage`` folder or a database file.

    Raises:
        StoreProblem: A database that cannot be read as an OpenCode store.
    """
    return FileStore(path) if os.path.isdir(path) else DatabaseStore(path)
