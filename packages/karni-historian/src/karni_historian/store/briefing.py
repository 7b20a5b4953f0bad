"""What a brief reads from the store, as few rows as it shows, in light records.

A brief runs before every edit (``karni context --with-history``), so these
queries walk indexed columns newest first and stop when the caller has
enough, and they return :class:`~karni_historian.store.records.BriefEpisode`
and :class:`~karni_historian.store.records.FactRecord` rather than the model
classes. The provider opens :class:`BriefTables` alone;
:class:`~karni_historian.store.Store` includes it. See ``docs/performance.md``.
"""

from __future__ import annotations

from karni_historian.store.database import Database
from karni_historian.store.records import BriefEpisode, FactRecord
from karni_historian.store.schema import NOTES_VERSION, P1_ONLY_VERSION, SHARED_VERSION

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Iterator
    from typing import Any

__all__ = ["BriefTables", "change_digest", "span_fact_rows"]

TouchingRows = list[tuple[str, int, int, int, int, int, str | None]]

_EPISODE_SELECT = (
    "SELECT c.id, c.session_id, c.start_message, c.end_message, c.title, {body},"
    " c.p2, c.p3, c.p4, c.importance, c.start_date, c.episode_type FROM compartments c"
)
"""The brief's columns of a compartment; ``{body}`` is its body (:meth:`BriefTables._episodes`)."""
_BODY = "c.p1"
_BODY_BEFORE_P1_ONLY = "CASE WHEN c.p1 IS NULL OR c.p1 = '' THEN c.content ELSE c.p1 END"
"""A compartment's body in a store older than schema 8: a legacy row's is its ``content``."""
_TOUCHED = (
    " EXISTS (SELECT 1 FROM message_files f WHERE f.session_id = c.session_id"
    " AND f.ordinal BETWEEN c.start_message AND c.end_message"
    " AND (f.path = ? OR substr(f.path, 1, ?) = ?))"
)
_LIGHT = (
    "SELECT c.session_id, c.id, c.sequence, c.importance, c.start_message, c.end_message,"
    " c.episode_type"
)


def change_digest(text: str) -> str:
    """A digest that tells whether ``text`` changed: its length, CRC-32 and Adler-32.

    Not a cryptographic hash: it only decides whether a handed brief or a
    history block must be rebuilt. No bench row runs it; it stays because
    its digests are stored (``history_rebuilds``, the handover record), and
    another would make every stored one stale once.
    """
    # bench row "karni context … (historian store, 1,000 compartments)" runs without it
    import zlib

    data = text.encode("utf-8", "surrogatepass")
    return f"{len(data):x}-{zlib.crc32(data):08x}-{zlib.adler32(data):08x}"


_SESSIONS_OF_FILE = (
    "WITH RECURSIVE touching(id) AS ("
    " SELECT MIN(session_id) FROM message_files WHERE path = ?"
    " UNION ALL SELECT (SELECT MIN(f.session_id) FROM message_files f"
    " WHERE f.path = ? AND f.session_id > touching.id)"
    " FROM touching WHERE touching.id IS NOT NULL)"
    " SELECT id FROM touching WHERE id IS NOT NULL"
)
"""The sessions with a row for the file (two parameters: its path twice), one index seek each."""


def _under(path: str) -> tuple[str, str]:
    """The bounds of the paths under the folder ``path``: ``low <= p < high`` (binary order)."""
    prefix = path.rstrip("/") + "/"
    return prefix, prefix[:-1] + "0"  # "0" is the character after "/"


class BriefTables(Database):
    """The reads of a file or project brief; no writes."""

    def touching_compartments(self, path: str, newest: int | None = None) -> TouchingRows:
        """Compartments whose messages touched ``path`` (or a file under it), oldest first.

        Light rows ``(session_id, id, sequence, importance, start, end, episode_type)``,
        ordered by the
        session's first message, then session id, then sequence; fetch the
        episodes with :meth:`episodes_by_id`. With ``newest``, only
        the newest that many: each session is walked newest first along its
        ``(session_id, sequence)`` index, each compartment tested with one seek
        of the ``message_files`` key, and the walk stops when enough are found,
        so the cost follows ``newest``, not the store's size. Only the sessions
        that touched ``path`` are walked (one seek of the path index each), so a
        thousand shared sessions about other files cost one statement.
        """
        prefix = path.rstrip("/") + "/"
        if newest is None:
            return self.connection.execute(
                f"{_LIGHT} FROM compartments c JOIN sessions s ON s.id = c.session_id"
                f" WHERE{_TOUCHED} ORDER BY COALESCE(s.first_ts, ''), c.session_id, c.sequence",
                (path, len(prefix), prefix),
            ).fetchall()
        found: TouchingRows = []
        test, params = self._sessions_touching(path)
        sessions = self.connection.execute(
            f"SELECT s.id FROM sessions s WHERE {test}"
            " ORDER BY COALESCE(s.first_ts, '') DESC, s.id DESC",
            params,
        ).fetchall()
        for (session_id,) in sessions:
            if len(found) >= newest:
                break
            found += self.connection.execute(
                f"{_LIGHT} FROM compartments c WHERE c.session_id = ? AND{_TOUCHED}"
                " ORDER BY c.sequence DESC LIMIT ?",
                (session_id, path, len(prefix), prefix, newest - len(found)),
            ).fetchall()
        found.reverse()
        return found

    def episodes_by_id(self, ids: Iterable[int]) -> dict[int, BriefEpisode]:
        """The compartments with these row ids, as brief records."""
        wanted = list(ids)
        found: dict[int, BriefEpisode] = {}
        select = self._episodes()
        for offset in range(0, len(wanted), 500):
            batch = wanted[offset : offset + 500]
            marks = ",".join("?" * len(batch))
            for row in self.connection.execute(f"{select} WHERE c.id IN ({marks})", batch):
                found[row[0]] = self._attributed(BriefEpisode(row))
        return found

    def newest_episodes(self, limit: int | None = None) -> list[BriefEpisode]:
        """The newest compartments: sessions by last activity, then sequence, newest first.

        Each session is walked along its ``(session_id, sequence)`` index, so
        the cost follows ``limit``, not the store's size.
        """
        found: list[BriefEpisode] = []
        sessions = self.connection.execute(
            "SELECT id FROM sessions ORDER BY COALESCE(last_ts, '') DESC, id DESC"
        ).fetchall()
        for (session_id,) in sessions:
            left = -1 if limit is None else limit - len(found)
            if left == 0:
                break
            rows = self.connection.execute(
                f"{self._episodes()} WHERE c.session_id = ? ORDER BY c.sequence DESC LIMIT ?",
                (session_id, left),
            )
            found += [self._attributed(BriefEpisode(row)) for row in rows]
        return found

    def episodes_after(self, max_id: int, limit: int) -> list[BriefEpisode]:
        """At most ``limit`` compartments stored after row ``max_id``, oldest first."""
        rows = self.connection.execute(
            f"{self._episodes()} WHERE c.id > ? ORDER BY c.id LIMIT ?", (max_id, limit)
        )
        return [self._attributed(BriefEpisode(row)) for row in rows]

    def _attributed(self, episode: BriefEpisode) -> BriefEpisode:
        """``episode`` with the teammate who shared its session, when one did."""
        authors: dict[str, str] | None = getattr(self, "_authors", None)
        if authors is None:
            authors = self._authors = self.shared_authors()
        episode.author = authors.get(episode.session_id)
        return episode

    def newest_compartment_id(self) -> int:
        """The row id of the newest compartment, 0 when there is none."""
        row = self.connection.execute("SELECT MAX(id) FROM compartments").fetchone()
        return int(row[0] or 0)

    def memory_digest(self, max_id: int | None = None) -> tuple[int, str]:
        """``(newest memory id, digest)`` of the memories up to ``max_id`` (None: all).

        Only the id, category and content count: a fact seen again changes
        nothing, an edited or removed one changes the digest.
        """
        query = "SELECT id, category, content FROM memories"
        rows = self.connection.execute(
            query + " ORDER BY id" if max_id is None else query + " WHERE id <= ? ORDER BY id",
            () if max_id is None else (max_id,),
        ).fetchall()
        return (int(rows[-1][0]) if rows else 0), change_digest(repr(rows))

    def facts_after(self, max_id: int) -> list[FactRecord]:
        """The memories promoted after ``max_id``, oldest first."""
        rows = self.connection.execute(
            "SELECT category, content FROM memories WHERE id > ? ORDER BY id", (max_id,)
        )
        return [FactRecord(category, content) for category, content in rows]

    def fact_records(self) -> list[FactRecord]:
        """Every project-memory fact, by category then first promotion."""
        rows = self.connection.execute(
            "SELECT category, content FROM memories ORDER BY category, id"
        )
        return [FactRecord(category, content) for category, content in rows]

    def fact_records_naming(self, *names: str) -> list[FactRecord]:
        """The facts whose content contains one of ``names``, by category then promotion."""
        if not names:
            return []
        test = " OR ".join("instr(content, ?) > 0" for _ in names)
        rows = self.connection.execute(
            f"SELECT category, content FROM memories WHERE {test} ORDER BY category, id", names
        )
        return [FactRecord(category, content) for category, content in rows]

    def attribute_facts(self, facts: list[FactRecord]) -> None:
        """Name on each fact the teammate whose shared sessions alone promoted it.

        A fact one of the user's own sessions promoted too, or two teammates',
        names nobody. A statement per 400 facts, none when no teammate shared a session.
        """
        authors = self.shared_authors()
        if not authors or not facts:
            return
        sources: dict[tuple[str, str], set[str | None]] = {}
        contents = sorted({fact.content for fact in facts})
        for offset in range(0, len(contents), _BATCH):
            batch = contents[offset : offset + _BATCH]
            marks = ",".join("?" * len(batch))
            for category, content, session_id in self.connection.execute(
                "SELECT m.category, m.content, s.session_id FROM memories m"
                f" JOIN memory_sources s ON s.memory_id = m.id WHERE m.content IN ({marks})",
                batch,
            ):
                sources.setdefault((category, content), set()).add(authors.get(session_id))
        for fact in facts:
            named = sources.get((fact.category, fact.content), set())
            fact.author = next(iter(named)) if len(named) == 1 else None

    def fact_records_for_spans(self, spans: Iterable[tuple[str, int, int]]) -> list[FactRecord]:
        """Facts promoted from a run that overlapped one of ``(session, start, end)``."""
        return [FactRecord(*row) for row in span_fact_rows(self.connection, spans)]

    def editing_sessions(self, path: str) -> list[tuple[str, str | None]]:
        """``(session_id, last_ts)`` of the sessions ``ingest`` has not noted that edited ``path``.

        Or a file under it. Newest activity first; one seek of the
        ``message_files`` path index per session. A noted session's requests
        are in ``file_requests`` already (every session on a store older than
        the notes is unnoted).
        """
        low, high = _under(path)
        unnoted = (
            " AND NOT EXISTS (SELECT 1 FROM noted_sessions n WHERE n.session_id = s.id)"
            if self._has_notes()
            else ""
        )
        test, params = self._sessions_touching(path)
        return self.connection.execute(
            f"SELECT s.id, s.last_ts FROM sessions s WHERE {test}"
            " AND (EXISTS (SELECT 1 FROM message_files f"
            " WHERE f.path = ? AND f.session_id = s.id AND f.action != 'read')"
            " OR EXISTS (SELECT 1 FROM message_files f INDEXED BY idx_message_files_path"
            " WHERE f.path >= ? AND f.path < ?"
            f" AND f.session_id = s.id AND f.action != 'read')){unnoted}"
            " ORDER BY COALESCE(s.last_ts, '') DESC, s.id DESC",
            (*params, path, low, high),
        ).fetchall()

    def _sessions_touching(self, path: str) -> tuple[str, tuple[str, ...]]:
        """The SQL test of a session ``s`` that touched ``path`` (a folder: a file under it).

        With its parameters. For a file, the sessions come from a loose scan
        of the path index, one seek per session that touched it, so a
        thousand other sessions (a team's shared history) are never looked
        at; for a folder, each session is tested with a seek.
        """
        low, high = _under(path)
        folder = self.connection.execute(
            "SELECT 1 FROM message_files INDEXED BY idx_message_files_path"
            " WHERE path >= ? AND path < ? LIMIT 1",
            (low, high),
        ).fetchone()
        if folder is None:
            return f"s.id IN ({_SESSIONS_OF_FILE})", (path, path)
        return (
            "(EXISTS (SELECT 1 FROM message_files f WHERE f.path = ? AND f.session_id = s.id)"
            " OR EXISTS (SELECT 1 FROM message_files f INDEXED BY idx_message_files_path"
            " WHERE f.path >= ? AND f.path < ? AND f.session_id = s.id))",
            (path, low, high),
        )

    def edit_ordinals(self, session_id: str, path: str) -> Iterator[int]:
        """The messages of the session that edited ``path`` (or under it), newest first.

        A file is walked along the path index and the walk stops when the
        caller does; a folder's edits are sorted first.
        """
        low, high = _under(path)
        under = self.connection.execute(
            "SELECT DISTINCT ordinal FROM message_files INDEXED BY idx_message_files_path"
            " WHERE path >= ? AND path < ? AND session_id = ? AND action != 'read'",
            (low, high, session_id),
        ).fetchall()
        rows = self._file_edits(session_id, path)
        if under:
            rows = iter(sorted({*rows, *(ordinal for (ordinal,) in under)}, reverse=True))
        last = None
        for ordinal in rows:
            if ordinal != last:
                yield ordinal
                last = ordinal

    def _file_edits(self, session_id: str, path: str) -> Iterator[int]:
        """The session's edits of the file ``path``, newest first, a page at a time.

        The ``ordinal <`` bound lets SQLite walk the path index in order
        instead of sorting every edit of the file.
        """
        below = 1 << 62
        while True:
            page = self.connection.execute(
                "SELECT ordinal FROM message_files WHERE path = ? AND session_id = ?"
                " AND ordinal < ? AND action != 'read' ORDER BY ordinal DESC LIMIT 64",
                (path, session_id, below),
            ).fetchall()
            for (ordinal,) in page:
                yield ordinal
            if len(page) < 64:
                return
            below = page[-1][0]

    def _episodes(self) -> str:
        """The query of :class:`BriefEpisode` rows, for this store's schema (read once)."""
        select: str | None = getattr(self, "_episode_select", None)
        if select is None:
            old = self.schema_version < P1_ONLY_VERSION  # read as it is, before ingest upgrades it
            select = _EPISODE_SELECT.format(body=_BODY_BEFORE_P1_ONLY if old else _BODY)
            self._episode_select = select
        return select

    def shared_fingerprint(self, key: str = "fingerprint") -> str | None:
        """The shared history folder's fingerprint at the last refresh; None if never (or older).

        ``key="stamp"``: the folder's own stamp then, when it was settled.
        """
        if self.schema_version < SHARED_VERSION:
            return None
        row = self.connection.execute(
            "SELECT value FROM shared_state WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else str(row[0])

    def shared_authors(self) -> dict[str, str]:
        """Session id → the teammate who committed its shared file (the user's own: absent).

        Read once per read-only connection (a brief asks from several places).
        """
        known: dict[str, str] | None = getattr(self, "_shared_authors", None)
        if known is not None:
            return known
        if self.schema_version < SHARED_VERSION:
            return {}
        rows = self.connection.execute(
            "SELECT session_id, author FROM shared_files WHERE state = 'imported'"
            " AND author IS NOT NULL AND session_id IS NOT NULL"
        )
        found = dict(rows.fetchall())
        if self.readonly:
            self._shared_authors = found
        return found

    def _has_notes(self) -> bool:
        """Whether the store has the files' notes (schema 7 on; an older one is read as it is)."""
        return self.schema_version >= NOTES_VERSION

    def file_note_rows(
        self, path: str, limit: int | None = None
    ) -> list[tuple[str, int, int, str, str, int, str | None]]:
        """``(session_id, request, ordinal, kind, text, weight, last_ts)`` of ``path``'s notes.

        Notes of the files under ``path`` too when it is a folder; newest
        session first; at most ``limit`` (None: all). None on a store older
        than the notes.
        """
        if not self._has_notes():
            return []
        low, high = _under(path)
        return self.connection.execute(
            "SELECT n.session_id, n.request, n.ordinal, n.kind, n.text, n.weight, s.last_ts"
            " FROM file_notes n JOIN sessions s ON s.id = n.session_id"
            " WHERE n.path = ? OR (n.path >= ? AND n.path < ?)"
            " ORDER BY COALESCE(s.last_ts, '') DESC, n.session_id DESC, n.request DESC,"
            " n.weight DESC, n.ordinal DESC LIMIT ?",
            (path, low, high, -1 if limit is None else limit),
        ).fetchall()

    def file_request_rows(
        self, path: str, limit: int | None = None
    ) -> list[tuple[str, int, str | None, str, int, int]]:
        """``(session_id, request, timestamp, text, added, removed)`` of ``path``'s requests.

        Newest first; at most ``limit`` (None: all). A file (nothing stored
        under it as a folder) has one row per request, read newest first along
        ``idx_file_requests_newest`` (schema 12), so a file a thousand shared
        sessions shaped costs ``limit`` rows, not a sort of all of them.
        """
        if not self._has_notes():
            return []
        low, high = _under(path)
        folder = self.connection.execute(
            "SELECT 1 FROM file_requests WHERE path >= ? AND path < ? LIMIT 1", (low, high)
        ).fetchone()
        if folder is None:
            return self.connection.execute(
                "SELECT session_id, request, timestamp, text, added, removed FROM file_requests"
                " WHERE path = ? ORDER BY timestamp DESC, request DESC LIMIT ?",
                (path, -1 if limit is None else limit),
            ).fetchall()
        return self.connection.execute(
            "SELECT session_id, request, timestamp, text, SUM(added), SUM(removed)"
            " FROM file_requests WHERE path = ? OR (path >= ? AND path < ?)"
            " GROUP BY session_id, request ORDER BY COALESCE(timestamp, '') DESC, request DESC"
            " LIMIT ?",
            (path, low, high, -1 if limit is None else limit),
        ).fetchall()

    def user_texts(self, session_id: str, before: int) -> Iterator[tuple[int, str | None, str]]:
        """``(ordinal, timestamp, text)`` of the user messages' text parts, newest first.

        A part is text unless it is a tool call, as the store's codec reads it.

        Messages at or before ``before``; parts marked ignored are left out, a
        message's parts come in order. The text is read by SQLite's JSON
        functions, so no message is decoded whole.
        """
        rows = self.connection.execute(
            "SELECT m.ordinal, m.timestamp, json_extract(j.value, '$.text')"
            " FROM raw_messages m, json_each(m.parts_json) j"
            " WHERE m.session_id = ? AND m.ordinal <= ? AND m.role = 'user'"
            " AND COALESCE(json_extract(j.value, '$.type'), '') != 'tool'"
            " AND NOT COALESCE(json_extract(j.value, '$.ignored'), 0)"
            " ORDER BY m.ordinal DESC",
            (session_id, before),
        )
        for ordinal, timestamp, text in rows:
            yield ordinal, timestamp, text if isinstance(text, str) else ""

    def tool_calls(self, session_id: str, ordinal: int) -> tuple[str | None, list[dict[str, Any]]]:
        """The message's timestamp and its tool parts, as stored (JSON objects)."""
        row = self.connection.execute(
            "SELECT timestamp, parts_json FROM raw_messages WHERE session_id = ? AND ordinal = ?",
            (session_id, ordinal),
        ).fetchone()
        if row is None:
            return None, []
        # bench row "karni-historian ingest" runs without it
        from karni.agent.common.jsontext import loads  # no json, no re on the brief path

        parts = loads(row[1])
        return row[0], [part for part in parts if part.get("type") == "tool"]


def _first_at_least(keys: list[int], value: int) -> int:
    """The position of the first of the sorted ``keys`` that is ``>= value`` (``len`` if none).

    :func:`bisect.bisect_left`, without loading :mod:`bisect` before every edit.
    """
    low, high = 0, len(keys)
    while low < high:
        middle = (low + high) // 2
        if keys[middle] < value:
            low = middle + 1
        else:
            high = middle
    return low


_BATCH = 400
"""Sessions asked about in one statement (SQLite's default limit is 999 parameters)."""


def span_fact_rows(
    connection: sqlite3.Connection, spans: Iterable[tuple[str, int, int]]
) -> list[tuple[str, str]]:
    """``(category, content)`` of the facts promoted from a run overlapping one of ``spans``.

    Each span is ``(session, start, end)``; facts by category, then first promotion.
    The sources are read for up to :data:`_BATCH` sessions at a time, so a
    file touched by a thousand sessions (a team's shared history) costs a
    few statements, not one per session.
    """
    by_session: dict[str, list[tuple[int, int]]] = {}
    for session_id, start, end in spans:
        by_session.setdefault(session_id, []).append((start, end))
    found: dict[int, tuple[str, str]] = {}
    tests: dict[str, tuple[list[int], list[int]]] = {}
    for session_id, ranges in by_session.items():
        # Sort by end, and keep the smallest start reaching each end, for overlap tests.
        ends = sorted(ranges, key=lambda r: r[1])
        end_keys = [end for _, end in ends]
        lowest = [start for start, _ in ends]
        for i in range(len(lowest) - 2, -1, -1):
            lowest[i] = min(lowest[i], lowest[i + 1])
        tests[session_id] = (end_keys, lowest)
    sessions = list(tests)
    for offset in range(0, len(sessions), _BATCH):
        batch = sessions[offset : offset + _BATCH]
        marks = ",".join("?" * len(batch))
        for memory_id, category, content, session_id, start, end in connection.execute(
            "SELECT m.id, m.category, m.content, s.session_id, s.start_message, s.end_message"
            " FROM memories m JOIN memory_sources s ON s.memory_id = m.id"
            f" WHERE s.session_id IN ({marks})",
            batch,
        ):
            end_keys, lowest = tests[session_id]
            i = _first_at_least(end_keys, start)
            if i < len(end_keys) and lowest[i] <= end:
                found[memory_id] = (category, content)
    return [found[key] for key in sorted(found, key=lambda k: (found[k][0], k))]
