"""OpenCode sessions: where they are, and importing them incrementally.

OpenCode keeps every project's sessions in one data folder,
``$XDG_DATA_HOME/opencode`` or ``~/.local/share/opencode`` on every system:
since version 1.2 in the SQLite database ``opencode.db`` (or
``opencode-<channel>.db``, or the file ``$OPENCODE_DB`` names), before that as
JSON files under ``storage/`` (``docs/historian/harnesses.md``). A session
belongs to the project when the folder it was started in (``directory``) is
the project root or inside it.

A session is imported message by message in the order OpenCode created them;
a message is taken only once it is final (an answer step has completed or
failed), so the import stops at a step still running and resumes there on the
next run. A cursor per session (its message count and newest change) skips an
unchanged session without reading it. A session read from the database is not
read again from the older JSON files, and stored message ids keep every
message single.

A ``task`` call's child session (a subagent) is not a session of its own: its
messages are stored in the parent session right after the call, its calls
marked with the call's id, and its prompt (written by the parent model) is not
kept. Reverted messages that OpenCode later deletes stay in the history.
"""

from __future__ import annotations

import os

from karni.agent.common.paths import project_relative

from karni_historian.ingest.sink import iso_from_millis
from karni_historian.store import CursorState

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni_historian.ingest.opencode_storage import DatabaseStore, FileStore, SessionRow
    from karni_historian.ingest.report import FileReport
    from karni_historian.ingest.sink import SessionWriter, Sink

__all__ = ["KIND", "data_dirs", "find_sources", "ingest_source", "is_source"]

KIND = "opencode"

_PLACEHOLDER_TITLES = ("New session - ", "Child session - ")
_CHILD_DEPTH = 8


def data_dirs() -> list[str]:
    """The folders OpenCode keeps its data in."""
    xdg = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local/share")
    return [os.path.join(xdg, "opencode")]


def is_source(path: str) -> bool:
    """Whether ``path`` is an OpenCode database or ``storage`` folder."""
    if os.path.isdir(path):
        return os.path.isdir(os.path.join(path, "session")) and os.path.isdir(
            os.path.join(path, "message")
        )
    return os.path.basename(path).startswith("opencode") and path.endswith(".db")


def find_sources(extra: str | None = None) -> list[str]:
    """The databases (first, so their copy of a session wins) and ``storage`` folders."""
    databases: list[str] = []
    folders: list[str] = []
    configured = extra if extra is not None else os.environ.get("OPENCODE_DB")
    for folder in data_dirs():
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            names = []
        databases += [os.path.join(folder, n) for n in names if is_source(os.path.join(folder, n))]
        if is_source(os.path.join(folder, "storage")):
            folders.append(os.path.join(folder, "storage"))
        if configured and configured != ":memory:":
            path = os.path.join(folder, os.path.expanduser(configured))
            if os.path.isfile(path) and path not in databases:
                databases.append(path)
    return databases + folders


def _in_project(root: str, directory: str | None) -> bool:
    return bool(directory) and project_relative(root, directory or "") is not None


def ingest_source(sink: Sink, path: str, report: FileReport) -> None:
    """Import the project's sessions from the store at ``path`` into ``report``'s run.

    A store that cannot be read is named in ``report.problem``; a later
    OpenCode's event tables, which this reader does not read, likewise.
    """
    # bench row "karni-historian ingest" runs without it
    from karni_historian.ingest.opencode_storage import StoreProblem, open_store

    try:
        store = open_store(path)
    except StoreProblem as error:
        report.problem = str(error)
        return
    try:
        if getattr(store, "newer_rows", False):
            report.problem = (
                "it holds OpenCode 2 sessions (table session_message), which this "
                "karni-historian does not read yet"
            )
        sessions = store.sessions()
        known = {session.id for session in sessions}
        children: dict[str, list[str]] = {}
        for session in sessions:
            if session.parent in known:
                children.setdefault(session.parent or "", []).append(session.id)
        for session in sessions:
            if session.parent not in known and _in_project(sink.root, session.directory):
                _import_session(sink, store, path, session, children, report)
    finally:
        store.close()


def _fingerprint(
    store: FileStore | DatabaseStore,
    session_id: str,
    children: dict[str, list[str]],
    depth: int = 0,
) -> tuple[int, int]:
    count, newest = store.fingerprint(session_id)
    for child in children.get(session_id, ()) if depth < _CHILD_DEPTH else ():
        more, latest = _fingerprint(store, child, children, depth + 1)
        count, newest = count + more, max(newest, latest)
    return count, newest


def _import_session(
    sink: Sink,
    store: FileStore | DatabaseStore,
    path: str,
    session: SessionRow,
    children: dict[str, list[str]],
    report: FileReport,
) -> None:
    key = f"{path}#{session.id}"
    count, newest = _fingerprint(store, session.id, children)
    state = sink.store.cursor(key)
    if state is not None and (state.size, state.mtime_ns) == (count, newest):
        return
    importer = _SessionImport(sink, store, session, children)
    with sink.store.transaction():
        importer.run()
        sink.flush()
        sink.store.set_cursor(key, CursorState(KIND, importer.taken, count, newest, 0, 0, 0))
    report.lines += importer.examined


class _SessionImport:
    """Imports the new, final messages of one session and of its subagents."""

    def __init__(
        self,
        sink: Sink,
        store: FileStore | DatabaseStore,
        session: SessionRow,
        children: dict[str, list[str]],
    ) -> None:
        self.sink = sink
        self.store = store
        self.session = session
        self.children = children
        self.stored = sink.store.message_ids(session.id)
        self._writer: SessionWriter | None = None
        self._visited: set[str] = set()
        self.examined = 0
        self.taken = 0
        self.model: str | None = None
        """The newest model the session's own messages name, ``providerID/modelID``."""

    def writer(self) -> SessionWriter:
        if self._writer is None:
            session = self.session
            self._writer = self.sink.session(session.id, KIND, session.directory)
            title = session.title
            if title and not title.startswith(_PLACEHOLDER_TITLES):
                self.sink.store.set_title(session.id, title, 3)
        return self._writer

    def run(self) -> None:
        self._thread(self.session.id, None, 0)
        if self.model is not None and self._writer is not None:
            self.sink.store.set_model(self.session.id, self.model)

    def _thread(self, session_id: str, owner: str | None, depth: int) -> None:
        """Import one session's messages; ``owner`` is the task call of a subagent's."""
        if session_id in self._visited or depth > _CHILD_DEPTH:
            return
        self._visited.add(session_id)
        # bench row "karni-historian ingest" runs without it
        from karni_historian.ingest.opencode_parts import is_final

        for message_id in self.store.message_ids(session_id):
            if message_id in self.stored:
                continue
            info = self.store.message(session_id, message_id)
            if info is None:
                continue
            self.examined += 1
            if not is_final(info):
                return  # the rest waits for this step, and its subagents for their call
            self._message(session_id, message_id, info, owner, depth)
        for child in self.children.get(session_id, ()):
            self._thread(child, "", depth + 1)

    def _message(
        self, session_id: str, message_id: str, info: dict[str, Any], owner: str | None, depth: int
    ) -> None:
        # bench row "karni-historian ingest" runs without it
        from karni_historian.ingest.opencode_parts import convert

        converted = convert(info, self.store.parts(session_id, message_id), owner)
        self.stored.add(message_id)
        if owner is None:
            self.model = _model_of(info) or self.model
        if converted is None:
            return
        writer = self.writer()
        time = info.get("time")
        time = time if isinstance(time, dict) else {}
        created = time.get("created")
        stamp = iso_from_millis(created) if isinstance(created, (int, float)) else None
        ordinal = writer.append(converted.role, converted.parts, stamp, message_id)
        self.taken += 1
        for part in converted.parts:
            if part.get("call_id"):
                writer.record_call(part["call_id"], ordinal)
        for raw, action in converted.files:
            writer.add_file(ordinal, self.sink.relative(raw, self.session.directory), action)
        if converted.role == "user" and owner is None and not writer.titled:
            typed = [p["text"] for p in converted.parts if not p.get("ignored")]
            writer.title_with(typed[0] if typed else "")
        for call_id, child in converted.children:
            self._thread(child, call_id, depth + 1)


def _model_of(info: dict[str, Any]) -> str | None:
    """``providerID/modelID`` of a message: an answer's own, or the model a prompt asked for."""
    fields = info if info.get("role") == "assistant" else info.get("model")
    if not isinstance(fields, dict):
        return None
    provider, name = fields.get("providerID"), fields.get("modelID")
    if isinstance(provider, str) and isinstance(name, str) and provider and name:
        return f"{provider}/{name}"
    return None
