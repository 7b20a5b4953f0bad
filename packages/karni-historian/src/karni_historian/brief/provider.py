"""The ``historian`` history provider: briefs from the historian's store.

Karni calls this on the hot path of ``karni context --with-history``, so the
module imports nothing heavy: ``detect`` is one file check, and SQLite, the
store and the decay maths are imported inside the methods that read them.
Karni tells the provider how many characters its brief may use (``room``);
the briefs (:mod:`karni_historian.brief.briefs`) fit themselves into it
instead of being cut off, reading only what they can show. The project brief
is handed cache-safe (:mod:`karni_historian.brief.handover`): the same bytes
between ordinary turns, what was learnt since after them. The team's shared
history (``.karni/history/``) is read through the store's index: one listing
of that folder tells whether it changed since the index was refreshed, and
only then is the store opened for writing and the index brought up to date
(:mod:`karni_historian.ingest.shared`) before the brief reads it.
``karni-historian brief [PATH]`` prints the same briefs in a larger room
(``--all``: everything, every episode at full detail).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni_historian.store.briefing import BriefTables

__all__ = ["HistorianProvider"]

_DB = os.path.join(".karni", "local", "historian.db")
_SHARED = os.path.join(".karni", "history")
_MAX_TITLES = 30
_BRIEF_BUSY_MS = 1000
"""How long a brief waits for another writer before serving the shared index as it is."""


def _room(room: int | None) -> int:
    """The characters a brief body may use: Karni's ``room``, else the whole cap."""
    if room is not None:
        return max(0, room)
    # bench row "discover via importlib.metadata with 10 unrelated distributions" runs without it
    from karni.agent.history import CHARS_PER_TOKEN, HISTORY_TOKEN_CAP

    return HISTORY_TOKEN_CAP * CHARS_PER_TOKEN


class HistorianProvider:
    """Briefs an agent from ``.karni/local/historian.db``; never prints, never raises."""

    name = "historian"

    accepts_room = True
    """Karni passes ``room=N``, the characters the brief body may use."""

    store_markers = (_DB, _SHARED)
    """Karni's speed hint: without the database or shared history there is no store."""

    accepts_str_root = True
    """Every method takes the root as a ``str`` too, so Karni need not import ``pathlib``."""

    calls_in_process = True
    """Its calls never end the process, so Karni makes them in its own, without a child."""

    def detect(self, project_root: str | os.PathLike[str]) -> bool:
        """Whether the project has a historian store or shared history (two file checks)."""
        try:
            if os.path.isfile(os.path.join(project_root, _DB)):
                return True
            shared = os.path.join(project_root, _SHARED)
            return os.path.isdir(shared) and not os.path.islink(shared)
        except (TypeError, ValueError, OSError):
            return False

    def context(
        self, project_root: str | os.PathLike[str], path: str, room: int | None = None
    ) -> str | None:
        """What the historian knows about ``path``, fitted into ``room`` characters."""
        try:
            # bench row "karni doctor" runs without it
            from karni_historian.brief.briefs import file_brief

            store = _open_fresh(project_root)
            try:
                return file_brief(store, path, room_chars=_room(room))
            finally:
                store.close()
        except Exception:
            return None

    def project_context(
        self, project_root: str | os.PathLike[str], room: int | None = None
    ) -> str | None:
        """The project memory and the newest titles, the same bytes between ordinary turns."""
        try:
            # bench row "karni doctor" runs without it
            from karni_historian.brief.handover import handed_project_brief

            store = _open_fresh(project_root)
            try:
                return handed_project_brief(store, max_titles=_MAX_TITLES, room_chars=_room(room))
            finally:
                store.close()
        except Exception:
            return None

    def store_problem(self, project_root: str | os.PathLike[str]) -> str | None:
        """For ``karni doctor``: what keeps the store from being read, and the fix; else None."""
        try:
            return _store_problem(project_root) if self.detect(project_root) else None
        except Exception:
            return None

    def doctor_notes(self, project_root: str | os.PathLike[str]) -> str | None:
        """For ``karni doctor``: each skipped shared history file, and a recommendation to share."""
        try:
            return "\n".join(_shared_notes(os.fspath(project_root))) or None
        except Exception:
            return None

    def full_command(self, project_root: str | os.PathLike[str], path: str | None) -> str | None:
        """The command that prints the full, uncapped brief."""
        try:
            if path is None:
                return "karni-historian brief"
            # bench row "karni doctor" runs without it
            import shlex

            return f"karni-historian brief {shlex.quote(path)}"
        except Exception:
            return None


def _shared_notes(root: str) -> list[str]:
    """One line per shared history file that is skipped, then the project's recommendation."""
    # bench row "karni doctor" runs without it
    from karni_historian.consent import consented, recommended
    from karni_historian.ingest.shared import check_shared_file
    from karni_historian.shared_folder import listing

    notes = []
    for name, size, _mtime, kind in listing(root):
        if name.startswith("."):
            continue
        problem = check_shared_file(root, name, kind, size)[1]
        if problem is not None:
            shown = "".join(char if char.isprintable() else "?" for char in name)
            notes.append(f".karni/history/{shown} is skipped: it {problem}")
    if recommended(root) and not consented(root):
        notes.append(
            "this project recommends sharing your condensed history (historian.share_recommended): "
            "run `karni-historian share`, or set historian.share in your user configuration"
        )
    return notes


def _store_problem(project_root: str | os.PathLike[str]) -> str | None:
    """What keeps the store from being read, with the fix; None when it can be read."""
    shown = _DB.replace(os.sep, "/")
    try:
        store = _open(project_root)
    except Exception as error:
        from karni_historian.store.sqlite_module import load

        if not isinstance(error.__cause__, load().Error):
            return str(error)  # the store's own one-line error: a link, a newer schema, …
        cause = error.__cause__
    else:
        try:
            row = store.connection.execute("PRAGMA quick_check(1)").fetchone()
            cause = None if row and row[0] == "ok" else (row[0] if row else "no answer")
        except Exception as error:
            cause = error
        finally:
            store.close()
        if cause is None:
            return None
    return (
        f"{shown} cannot be read ({cause}): move it aside with `mv {shown} {shown}.broken` "
        f"(it keeps what it holds, for sqlite3's .recover) and run `karni-historian ingest` "
        f"to start a new store"
    )


def _open_fresh(project_root: str | os.PathLike[str]) -> BriefTables:
    """The store read-only, its shared history index refreshed first when the folder changed."""
    root = os.fspath(project_root)
    store = _open_if_fresh(root)
    if store is None:
        try:
            refresh_shared_history(root, busy_ms=_BRIEF_BUSY_MS)
        except Exception:
            pass  # a busy or read-only store: the brief serves the index as it is
        store = _open(root)
    return store


def _open_if_fresh(root: str) -> BriefTables | None:
    """The store read-only when its shared history index is up to date, else None.

    Without a store and without shared history this raises, as :func:`_open` does.
    """
    # bench row "karni doctor" runs without it (every brief loads it: the folder's stamp)
    from karni_historian.shared_folder import fingerprint, folder_stamp

    if not os.path.isfile(os.path.join(root, _DB)):
        return _open(root) if not fingerprint(root) else None
    store = _open(root)
    stamp = folder_stamp(root)
    if stamp and store.shared_fingerprint("stamp") == stamp:
        return store  # the folder itself is as the last refresh left it
    current = fingerprint(root)
    known = store.shared_fingerprint()
    if known == current or (known is None and not current):
        if stamp and known is not None:
            _remember_stamp(root, known)
        return store
    store.close()
    return None


def _remember_stamp(root: str, known: str) -> None:
    """Keep the folder's stamp once it has settled, so the next brief skips the per-file look.

    Once after the folder changed: a short write, given up at once if another
    process holds the store (the next brief tries again).
    """
    # bench row "karni context … (historian store, 1,000 compartments)" runs without it
    import time

    from karni_historian.shared_folder import settled_stamp
    from karni_historian.store import Store

    stamp = settled_stamp(root, time.time_ns())
    if stamp is None:
        return
    try:
        with Store.open(root) as store:
            store.connection.execute("PRAGMA busy_timeout = 0")
            with store.transaction():
                if store.shared_fingerprint() == known:
                    store.set_shared_stamp(stamp)
    except Exception:
        pass  # busy, read-only or gone: the brief is served all the same


def refresh_shared_history(project_root: str | os.PathLike[str], busy_ms: int | None = None) -> int:
    """Bring the store's index of ``.karni/history/`` up to date (creating the store if need be).

    ``busy_ms`` bounds the wait for another writer (a brief waits little, then
    serves the index it has).
    """
    # bench row "karni context … (historian store, 1,000 compartments)" runs without it
    from karni_historian.ingest.shared import refresh_shared
    from karni_historian.store import Store

    root = os.fspath(project_root)
    with Store.open(root, create=True) as store:
        if busy_ms is not None:
            store.connection.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
        return refresh_shared(store, root)


def _open(project_root: str | os.PathLike[str]) -> BriefTables:
    """The store's brief reads, read-only (a missing or unusable store raises; callers catch)."""
    # bench row "karni doctor" runs without it
    from karni_historian.store.briefing import BriefTables

    return BriefTables.open(project_root, readonly=True)
