"""Opening the historian's database: file modes, pragmas, migrations, transactions.

:class:`Database` owns the connection. The table groups of the store
(:mod:`karni_historian.store.sessions`, ``messages``, ``ingest_state``,
``compartments``, ``memory``, ``runs``) subclass it, and
:class:`~karni_historian.store.Store` puts them together. Every write happens
inside :meth:`Database.transaction`, so an exception or Ctrl-C leaves the
previous state.
"""

from __future__ import annotations

import os
import time

from karni_historian.store.guard import check_paths, guard_connection
from karni_historian.store.schema import (
    MIGRATIONS,
    READABLE_FROM,
    RESTAGED_VERSION,
    SCHEMA_VERSION,
    db_path,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Self
else:
    from karni_historian.store.sqlite_module import load

    sqlite3 = load()  # the C module, loaded cheaply: see that module

__all__ = ["PAGE_SIZE", "Database", "ScratchTable", "Transaction", "failure_line", "utc_now"]

PAGE_SIZE = 8192
"""The page size of a store this version creates; an existing store keeps its own."""


def _store_error(message: str) -> Exception:
    """A :class:`~karni_historian.errors.StoreError`; the errors module loads only to raise one."""
    # bench row "karni context … (historian store, 1,000 compartments)" runs without it
    from karni_historian.errors import StoreError

    return StoreError(message)


_opened: dict[str, tuple[int, int] | None] = {}
"""The file (device, inode) each store path this process opened for writing was, when opened."""


def failure_line(root: str | os.PathLike[str], error: BaseException) -> str:
    """The line a command prints when the store or the disk failed under it.

    A store SQLite found damaged while the command used it is moved aside
    and a new one started, as :meth:`Database.open` does, when the file is
    still the one this process opened; the line says where it went.
    """
    from karni_historian.store.recovery import is_damaged

    path = db_path(root)
    if not (isinstance(error, sqlite3.Error) and is_damaged(error)) or path not in _opened:
        return _describe(path, error)
    try:
        store = Database._replace_damaged(root, path, _opened[path], error)
    except Exception as failure:  # a StoreError, or a failure of the new store
        return str(failure)
    store.close()
    note = store.note or _describe(path, error)
    return f"{note}, then run this command again"


def _describe(path: str, error: BaseException) -> str:
    """The one line :func:`~karni_historian.store.failures.describe_failure` gives."""
    from karni_historian.store.failures import describe_failure

    return describe_failure(path, error)


def utc_now() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``, the store's timestamp format."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _create_database(root: str | os.PathLike[str], path: str) -> None:
    """Create ``.karni/local`` owner-only with its ``.gitignore``, then an empty 0600 database.

    No folder on the way may be a symlink: the store is written inside the
    project, never wherever a link in a cloned repository points.
    """
    # bench row "karni context … (historian store, 1,000 compartments)" runs without it
    from karni.agent.common.files import make_folders, write_atomic

    folder = os.path.dirname(path)
    try:
        make_folders(folder, within=os.fspath(root), mode=0o700)
        os.chmod(folder, 0o700)  # make_folders has refused a link on the way: no chmod through one
        ignore = os.path.join(folder, ".gitignore")
        if not os.path.exists(ignore):
            write_atomic(ignore, "*\n", within=folder, durable=False)
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW, 0o600))
    except OSError as error:
        raise _store_error(
            f"cannot create the historian store in {folder}: {error}; "
            f"make the folder writable (and not a symlink) and run the command again"
        ) from None


_URI_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-._~")


def readonly_uri(path: str) -> str:
    """``file:///…`` for the resolved ``path``, every other byte percent-encoded.

    What ``pathlib.Path.resolve().as_uri()`` gives, without importing
    :mod:`pathlib` (and :mod:`re`, :mod:`urllib`) on the brief's path.
    """
    raw = os.fsencode(os.path.realpath(path))
    return "file://" + "".join(chr(b) if b in _URI_SAFE else f"%{b:02X}" for b in raw)


class Database:
    """An open historian database connection.

    Use :meth:`open`; close it with :meth:`close` or a ``with`` block.
    """

    def __init__(self, connection: sqlite3.Connection, path: str, readonly: bool) -> None:
        """Wrap an open connection (use :meth:`open` instead)."""
        self.connection = connection
        self.path = path
        self.readonly = readonly
        self.note: str | None = None
        """What opening the store did that its user should hear of (a damaged store moved aside)."""
        self._depth = 0

    @classmethod
    def open(
        cls, root: str | os.PathLike[str], *, create: bool = False, readonly: bool = False
    ) -> Self:
        """Open the project's store.

        A writable open of a damaged store (SQLite finds it is not a database,
        or a page is malformed) moves it aside as ``historian.db.broken-<time>``
        (:mod:`karni_historian.store.recovery`), starts a new one and says so
        in :attr:`note`; it never deletes it.

        Args:
            root: The project root.
            create: Create the folder and database when missing (owner-only).
            readonly: Open without ever writing (the provider's mode).

        Raises:
            StoreError: The database is missing (and ``create`` is false), cannot
                be opened, or was written by a newer version of karni-historian.
        """
        path = db_path(root)
        check_paths(root, path)
        if not os.path.isfile(path):
            if not create or readonly:
                raise _store_error(
                    f"no historian store at {path}; run `karni-historian ingest` first"
                )
            _create_database(root, path)
        if readonly:  # the brief's path: it never moves a store, and loads nothing for that
            try:
                return cls._connect(path, readonly)
            except sqlite3.Error as error:
                raise _store_error(_describe(path, error)) from error
        from karni_historian.store.recovery import identity, is_damaged

        found = identity(path)
        try:
            store = cls._connect(path, readonly)
        except sqlite3.Error as error:
            if not is_damaged(error):
                raise _store_error(_describe(path, error)) from error
            store = cls._replace_damaged(root, path, found, error)
            found = identity(path)
        _opened[path] = found
        return store

    @classmethod
    def _connect(cls, path: str, readonly: bool) -> Self:
        """A guarded, configured (and, writable, migrated) connection to the file at ``path``."""
        if readonly:
            connection = sqlite3.connect(
                f"{readonly_uri(path)}?mode=ro", uri=True, isolation_level=None, timeout=1.0
            )
        else:
            from karni_historian.store.failures import busy_timeout

            connection = sqlite3.connect(path, isolation_level=None, timeout=busy_timeout())
        try:
            guard_connection(connection, path, readonly=readonly)
            store = cls(connection, path, readonly)
            store._configure()
        except BaseException:
            connection.close()
            raise
        return store

    @classmethod
    def _replace_damaged(
        cls,
        root: str | os.PathLike[str],
        path: str,
        found: tuple[int, int] | None,
        error: sqlite3.Error,
    ) -> Self:
        """Move the damaged store aside, start a new one and open it; :attr:`note` says where."""
        from karni_historian.store.failures import describe_set_aside
        from karni_historian.store.recovery import set_aside

        try:
            aside = set_aside(path, found)
        except OSError as failure:
            raise _store_error(_describe(path, failure)) from error
        if not os.path.isfile(path):  # else another process has started the new one
            _create_database(root, path)
        try:
            store = cls._connect(path, readonly=False)
        except sqlite3.Error as again:
            raise _store_error(_describe(path, again)) from again
        if aside is not None:
            store.note = describe_set_aside(path, aside, error)
        return store

    def _configure(self) -> None:
        if not self.readonly:  # a read-only connection changes no row to check
            self.connection.execute("PRAGMA foreign_keys = ON")
        version = self.connection.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            self.connection.close()
            raise _store_error(
                f"the historian store {self.path} has schema version {version}, newer than this "
                f"karni-historian understands ({SCHEMA_VERSION}); upgrade karni-historian"
            )
        if self.readonly:
            if version < READABLE_FROM:
                self.connection.close()
                raise _store_error(
                    f"the historian store {self.path} needs an upgrade; "
                    f"run `karni-historian ingest` once"
                )
            return
        if self.connection.execute("PRAGMA page_count").fetchone()[0] == 0:
            # A new store: 8 KiB pages hold its ~2 KiB message rows with less
            # slack than 4 KiB ones (a smaller file, a faster ingest). Only
            # before the first write, and before WAL, can the size be chosen.
            self.connection.execute(f"PRAGMA page_size = {PAGE_SIZE}")
        self._use_wal()
        self.connection.execute("PRAGMA synchronous = NORMAL")
        if version < SCHEMA_VERSION:
            self.migrate(version)

    def _use_wal(self) -> None:
        """Switch the file to WAL, waiting (up to the busy timeout) while others hold it.

        SQLite answers a journal-mode change that meets another connection's
        lock with "database is locked" at once, without its busy handler: the
        first processes to open a new store at the same moment would fail.
        """
        from karni_historian.store.failures import busy_timeout

        deadline = time.monotonic() + busy_timeout()
        pause = 0.005
        while True:
            try:
                self.connection.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.1)

    def migrate(self, version: int) -> None:
        """Apply the migrations after ``version``, each in its own transaction.

        Any number of processes may open an old (or a new, empty) store at
        once. Each migration reads the version again once its transaction
        holds the write lock, so a version another process applied meanwhile
        is skipped, never applied twice: one process creates or upgrades
        the schema, the others wait for the lock (up to the busy timeout)
        and then find it done. Version 5's ends in Python
        (:data:`~karni_historian.store.schema.RESTAGED_VERSION`).
        """
        while version < SCHEMA_VERSION:
            with self.transaction():
                version = self.schema_version
                if version >= SCHEMA_VERSION:
                    return
                number = version + 1
                for statement in MIGRATIONS[number - 1]:
                    self.connection.execute(statement)
                # bench row "karni context … (historian store, 1,000 compartments)" runs without it
                if number == RESTAGED_VERSION:
                    from karni_historian.store.staged_rows import restage_json_rows

                    restage_json_rows(self.connection)
                self.connection.execute(f"PRAGMA user_version = {number}")
            version = number

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def transaction(self) -> Transaction:
        """A ``with`` block that commits on success and rolls back on any exception.

        Nested blocks join the outer transaction.
        """
        return Transaction(self)

    @property
    def root(self) -> str:
        """The project root the store belongs to."""
        return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(self.path))))

    @property
    def schema_version(self) -> int:
        """The schema version of the open database."""
        return int(self.connection.execute("PRAGMA user_version").fetchone()[0])


class Transaction:
    """A ``with`` block over the connection; nested blocks join the outer one."""

    __slots__ = ("_store",)

    def __init__(self, store: Database) -> None:
        self._store = store

    def __enter__(self) -> Database:
        store = self._store
        if store._depth == 0:
            store.connection.execute("BEGIN IMMEDIATE")
        store._depth += 1
        return store

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        store = self._store
        store._depth -= 1
        if store._depth:
            return
        if kind is None:
            store.connection.execute("COMMIT")
        elif store.connection.in_transaction:
            # SQLite may already have rolled back on its own (a full disk, an
            # I/O error): rolling back again would hide the real error.
            try:
                store.connection.execute("ROLLBACK")
            except sqlite3.Error:
                pass


class ScratchTable:
    """``temp.NAME``, filled by one ``INSERT … SELECT``, for a ``with`` block; then dropped.

    What the store's renumberings work out once (each row's new number, each
    staged row's place) and then join against, instead of ranking rows anew
    for every row. The block's value is how many rows went in. A table left
    by a failed block (its transaction rolls back, and the drop is skipped)
    is replaced by the next one of that name.
    """

    __slots__ = ("_columns", "_connection", "_name", "_params", "_select")

    def __init__(
        self,
        connection: sqlite3.Connection,
        name: str,
        columns: str,
        select: str,
        params: tuple[object, ...] = (),
    ) -> None:
        """``columns`` is the table's definition, ``select`` the query that fills it, in order."""
        self._connection = connection
        self._name = name
        self._columns = columns
        self._select = select
        self._params = params

    def __enter__(self) -> int:
        execute = self._connection.execute
        execute(f"DROP TABLE IF EXISTS temp.{self._name}")
        execute(f"CREATE TEMP TABLE {self._name} ({self._columns})")
        return int(execute(f"INSERT INTO temp.{self._name} {self._select}", self._params).rowcount)

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        if kind is None:
            self._connection.execute(f"DROP TABLE temp.{self._name}")
