"""Importing agent transcripts into the historian's store, incrementally.

:func:`ingest` reads the project's Claude Code, Codex CLI, Gemini CLI, Oh My
Pi, Pi, OpenCode and Aider sessions (found from the project path as each
harness stores them, see ``docs/historian/harnesses.md``), its Chronicle
session logs
(``.chronicle/sessions/``) and any file or folder given with ``--from``
(told apart by their first lines; :mod:`karni_historian.ingest.registry`
lists the readers). A file no reader recognises is named in the report's
warnings, never skipped in silence. Each file has a cursor in the
store: its byte offset, size, modification time and inode. A second run adds
nothing; a grown file is read from its cursor; a file that shrank or was
replaced is read again from the start (records are deduplicated by id).

Only complete lines are read; a torn last line is left for the next run.
Malformed lines are counted and reported, never fatal. Each file is read in
transactions of about :data:`BATCH_BYTES`, each committing its cursor with its
messages, so an interrupted run keeps everything up to the last commit and
nothing after it.
"""

from __future__ import annotations

import json
import os
from stat import S_ISDIR, S_ISREG

from karni.agent.common.files import open_regular_file

from karni_historian.collector import quiet_collector
from karni_historian.errors import IngestError
from karni_historian.fastjson import loads, loads_for
from karni_historian.ingest import registry
from karni_historian.ingest.omp import KIND as OMP
from karni_historian.ingest.omp import sniff as omp_entry
from karni_historian.ingest.reader import OVERSIZED, iter_lines
from karni_historian.ingest.registry import (
    STORE_KINDS,
    cursor_is_stale,
    reader_for,
    sniff_record,
    store_reader,
)
from karni_historian.ingest.report import FileReport, IngestReport
from karni_historian.ingest.sink import OtherProjectSession, Sink
from karni_historian.progress import progress_for
from karni_historian.store import CursorState

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any, TextIO, TypeGuard

    from karni_historian.store import CursorState, Store

__all__ = [
    "BATCH_BYTES",
    "IngestError",
    "check_sources",
    "default_sources",
    "ingest",
]

BATCH_BYTES = 32 << 20
"""Bytes of transcript read per transaction."""

_SNIFF_LINES = 50
_PROGRESS_STEP = 1 << 20
_GROUP_LINES = 512
_GROUP_BYTES = 4 << 20


def default_sources(root: str) -> list[tuple[str, str]]:
    """``(path, kind)`` of the project's transcripts found without ``--from``."""
    return registry.default_sources(root)


def check_sources(sources: Sequence[str]) -> None:
    """Check that every ``--from`` path exists, before anything is opened or written.

    Raises:
        IngestError: Naming the first missing path.
    """
    for path in sources:
        if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
            raise IngestError(
                f"--from {path} is not a regular file or a folder; "
                "pass a transcript file or a folder of them"
            )
        if not os.path.isfile(path) and not os.path.isdir(path):
            raise IngestError(
                f"no such transcript file or folder: {path}; "
                "pass an existing file or folder to --from"
            )


def _expand(path: str) -> list[tuple[str, str | None]]:
    check_sources([path])
    return registry.expand(path)


def _sniff(path: str) -> str | None:
    """The format of a file from its first parseable lines, or None when unknown yet.

    A Pi file is Oh My Pi's when one of its first lines is an entry only OMP writes.
    """
    found: str | None = None
    try:
        with open_regular_file(path) as handle:
            for count, (line, _) in enumerate(iter_lines(handle, 0)):
                if count >= _SNIFF_LINES:
                    break
                try:
                    record = json.loads(line.lstrip(b"\x00"))
                except ValueError:
                    continue
                if not isinstance(record, dict):
                    continue
                if found is None:
                    found = sniff_record(record)
                    if found is not None and found != "pi":
                        return found
                elif omp_entry(record):
                    return OMP
    except OSError as error:
        raise IngestError(f"cannot read {path}: {error.strerror}; check its permissions") from error
    return found


def _reader(kind: str, sink: Any, path: str) -> Any:
    return reader_for(kind, sink, path)


def ingest(
    store: Store,
    root: str | os.PathLike[str],
    sources: Sequence[str] | None = None,
    *,
    progress_stream: TextIO | None = None,
    other_projects: bool = False,
) -> IngestReport:
    """Import new transcript lines into ``store``.

    Args:
        store: The project's open, writable store.
        root: The project root (file paths are recorded relative to it).
        sources: Files or folders to read (``--from``); None reads the
            project's transcripts of every harness and its Chronicle logs.
        progress_stream: Where to draw a progress bar, when it is a terminal.
        other_projects: Take a session of ``sources`` recorded in another
            project's folder too (otherwise its file is refused, nothing of it
            stored). Without ``sources`` every reader takes only the project's.

    Returns:
        What was read, added and skipped.

    Raises:
        IngestError: A source does not exist or cannot be read.
    """
    root = os.fspath(root)
    work = _planned_files(root, sources)
    for key, kind, _ in work:
        _drop_stale_cursor(store, key, kind)
    progress = None
    if progress_stream is not None:
        progress = progress_for(_bytes_to_read(store, work), progress_stream, "ingest", _megabytes)
    report = IngestReport()
    sink = Sink(store, root, read_side_file, other_projects=other_projects or sources is None)
    reported: set[str] = set()  # a subagent file read with its session is not listed again
    try:
        with quiet_collector():
            for key, kind, stat in work:
                if kind in STORE_KINDS:
                    file_report: FileReport | None = _ingest_store(sink, key, kind)
                else:
                    file_report = _ingest_file(store, sink, key, kind, stat, progress)
                if file_report is not None and file_report.path not in reported:
                    report.files.append(file_report)
                report.files.extend(sink.side_reports)
                reported.update(file.path for file in sink.side_reports)
                sink.side_reports.clear()
    finally:
        if progress is not None:
            progress.close()
    report.messages_added = sink.messages_added
    report.sessions = sink.sessions_touched
    return report


def _planned_files(
    root: str, sources: Sequence[str] | None
) -> list[tuple[str, str | None, os.stat_result]]:
    """The files to read, each once by its resolved path, with its kind when known."""
    if sources is None:
        planned: list[tuple[str, str | None]] = list(default_sources(root))
    else:
        planned = [found for source in sources for found in _expand(source)]
    seen: set[str] = set()
    work: list[tuple[str, str | None, os.stat_result]] = []
    for path, kind in planned:
        key = os.path.realpath(path)
        if key in seen:
            continue
        seen.add(key)
        try:
            info = os.stat(key)
        except OSError:
            continue  # agents delete old transcripts; a vanished file is no error
        # A FIFO or a device would hang or flood the reader; an OpenCode
        # ``storage`` folder is a store of its own, read by its reader.
        if S_ISREG(info.st_mode) or (kind in STORE_KINDS and S_ISDIR(info.st_mode)):
            work.append((key, kind, info))
    return work


def _megabytes(done: int, total: int) -> str:
    return f"{done / 1e6:.1f}/{total / 1e6:.1f} MB"


def _bytes_to_read(store: Store, work: Sequence[tuple[str, str | None, os.stat_result]]) -> int:
    """The bytes the files hold beyond their cursors, for the progress bar."""
    total = 0
    for key, kind, stat in work:
        if kind in STORE_KINDS:
            continue
        state = store.cursor(key)
        total += stat.st_size - (state.offset if _continues(state, stat) else 0)
    return total


def _drop_stale_cursor(store: Store, path: str, kind: str | None) -> None:
    """Forget the cursor of a file that was rewritten in place (it is read again)."""
    state = store.cursor(path)
    if state is not None and cursor_is_stale(store, path, kind or state.kind):
        store.set_cursor(path, CursorState(state.kind, 0, 0, 0, -1, 0, 0))


def _ingest_store(sink: Any, path: str, kind: str) -> FileReport:
    """Read a source that is not a JSON line file (OpenCode's stores, Gemini's JSON, Aider's)."""
    report = FileReport(path, kind)
    added_before = sink.messages_added
    try:
        store_reader(kind)(sink, path, report)
    except OtherProjectSession as refused:
        report.refuse(refused.cwd)
    report.added = sink.messages_added - added_before
    return report


_side_files_open: set[str] = set()


def read_side_file(sink: Any, path: str, kind: str) -> None:
    """Read a file another transcript leads to (a subagent's), now, within the same run.

    Its report joins the run's after the file that led to it. The sink hands
    it to the readers (:attr:`~karni_historian.ingest.sink.Sink.read_side_file`),
    which never import this module.
    """
    path = os.path.realpath(path)
    if path in _side_files_open:
        return
    try:
        stat = os.stat(path)
    except OSError:
        return
    _side_files_open.add(path)
    try:
        report = _ingest_file(sink.store, sink, path, kind, stat, None)
    finally:
        _side_files_open.discard(path)
    if report is not None:
        sink.side_reports.append(report)


def _continues(state: CursorState | None, stat: os.stat_result) -> TypeGuard[CursorState]:
    """Whether reading can resume at the cursor (same file, not shrunk)."""
    return state is not None and state.inode == stat.st_ino and stat.st_size >= state.offset


def _ingest_file(
    store: Store,
    sink: Any,
    path: str,
    kind: str | None,
    stat: os.stat_result,
    progress: Any,
) -> FileReport | None:
    """Read one transcript file from its cursor; None when it cannot be opened."""
    state = store.cursor(path)
    if not _continues(state, stat):
        state = None
    elif stat.st_size == state.offset:
        return FileReport(path, kind or state.kind)
    kind = kind or (state.kind if state else _sniff(path))
    if kind is None:
        unknown = FileReport(path, None)
        if stat.st_size:
            unknown.problem = (
                "no reader recognises its format (Claude Code, Codex, Gemini CLI, Pi, "
                "Oh My Pi, OpenCode, Aider, Chronicle or the generic JSONL format; "
                "see docs/historian/harnesses.md)"
            )
        return unknown
    job = _FileIngest(store, sink, path, kind, stat, progress)
    if state is not None:
        job.offset, job.lines, job.malformed = state.offset, state.lines, state.malformed
    return job.run()


def _groups(stream: Iterator[tuple[Any, int]], until: int) -> Iterator[list[tuple[Any, int]]]:
    """The lines in groups of at most ``_GROUP_LINES`` lines or about ``_GROUP_BYTES``.

    A group also ends with the line that reaches the offset ``until`` (the
    end of the transaction).
    """
    group: list[tuple[Any, int]] = []
    size = 0
    for item in stream:
        group.append(item)
        size += len(item[0])
        if len(group) >= _GROUP_LINES or size >= _GROUP_BYTES or item[1] >= until:
            yield group
            group, size = [], 0
    if group:
        yield group


_BLANK: dict[str, Any] = {}
"""What :func:`_parsed` returns for a blank line (compared by identity)."""


def _parsed(line: bytes) -> dict[str, Any] | None:
    """A line's JSON object; :data:`_BLANK` for a blank line; None for a malformed one."""
    if line is OVERSIZED:
        return None
    if line[:1] == b"\x00":
        line = line.lstrip(b"\x00")
    try:
        record = loads(line)
    except ValueError:
        return _BLANK if not line.strip() else None
    return record if isinstance(record, dict) else None


class _FileIngest:
    """One file read in batches, each committed together with the file's cursor."""

    def __init__(
        self, store: Store, sink: Any, path: str, kind: str, stat: os.stat_result, progress: Any
    ) -> None:
        self.store = store
        self.sink = sink
        self.path = path
        self.kind = kind
        self.stat = stat
        self.progress = progress
        self.report = FileReport(path, kind)
        reader = _reader(kind, sink, path)
        self.feed = reader.feed
        self.prefetch = getattr(reader, "prefetch", None)
        """Looks up, once per group of lines, the ids the reader will ask the store about."""
        self.offset = 0
        self.lines = 0
        self.malformed = 0
        self.shown = 0

    def run(self) -> FileReport | None:
        """Read to the end of the file; None when it cannot be opened."""
        added_before = self.sink.messages_added
        try:
            handle = open_regular_file(self.path)  # closed in the finally below
        except OSError:
            return None

        try:
            stream = iter_lines(handle, self.offset)
            self.shown = self.offset
            while not self._batch(stream):
                pass
        except OtherProjectSession as refused:  # its batch was rolled back: nothing stored
            self.report.refuse(refused.cwd)
        finally:
            handle.close()
        try:
            self.report.torn = self.offset < os.stat(self.path).st_size
        except OSError:
            self.report.torn = False
        self.report.added = self.sink.messages_added - added_before
        return self.report

    def _batch(self, stream: Iterator[tuple[Any, int]]) -> bool:
        """Read about ``BATCH_BYTES`` in one transaction; True at the end of the file."""
        batch_start = self.offset
        finished = True
        with self.store.transaction():
            for group in _groups(stream, batch_start + BATCH_BYTES):
                self._group(group)
                if self.offset - batch_start >= BATCH_BYTES:
                    finished = False
                    break
            self.sink.flush()
            self._save_cursor()
        if self.progress is not None:
            self._show_progress()
        return finished

    def _group(self, group: list[tuple[Any, int]]) -> None:
        """Parse a group of lines, let the reader prefetch what they name, then feed them."""
        start = self.offset
        parsed: list[tuple[dict[str, Any] | None, int, int]] = []
        loads = loads_for([line for line, _ in group])
        for line, end in group:
            try:
                record = loads(line)
            except ValueError:  # blank, NUL-padded, oversized, malformed, or refused by orjson
                record = _parsed(line)
            parsed.append((record if isinstance(record, dict) else None, start, end))
            start = end
        if self.prefetch is not None:
            self.prefetch([record for record, _, _ in parsed if record is not None])
        feed, report, progress = self.feed, self.report, self.progress
        with_offset = self.kind == "generic"  # the generic reader keys records by offset
        for record, start, end in parsed:
            self.lines += 1
            report.lines += 1
            self.offset = end
            if record is None:
                self._malformed()
            elif record is not _BLANK:
                try:
                    if with_offset:
                        feed(record, start)
                    else:
                        feed(record)
                except (ValueError, TypeError, KeyError, AttributeError, IndexError):
                    self._malformed()  # a line the reader cannot use
            if progress is not None and end - self.shown >= _PROGRESS_STEP:
                self._show_progress()

    def _malformed(self) -> None:
        self.report.malformed += 1
        self.malformed += 1
        if self.report.first_malformed is None:
            self.report.first_malformed = self.lines

    def _show_progress(self) -> None:
        self.progress.advance(self.offset - self.shown, os.path.basename(self.path))
        self.shown = self.offset

    def _save_cursor(self) -> None:
        stat = self.stat
        self.store.set_cursor(
            self.path,
            CursorState(
                self.kind,
                self.offset,
                max(self.offset, stat.st_size),
                stat.st_mtime_ns,
                stat.st_ino,
                self.lines,
                self.malformed,
            ),
        )
