"""The full-text index of the store: its table, its first filling, and how writers keep it.

``search_index`` is an FTS5 table without content of its own (``content=''``):
it holds only the index, and the text stays in the rows it was read from, so
the index costs the store no second copy of every message. Three columns are
indexed: ``title`` (a compartment's title, a fact's category), ``body`` (a
compartment's tiers, a fact, the text parts of a message that are not
ignored) and ``tools`` (a message's tool calls: name, input and output).

One index row stands for one stored row, its rowid telling which, and
when: ``rowid = day << DAY_SHIFT | id << KIND_BITS | kind``, where ``kind``
is :data:`KIND_MESSAGE`, :data:`KIND_COMPARTMENT` or :data:`KIND_FACT`, ``id``
the row's id, and ``day`` the row's date in days since 2000-01-01 (0 when it
has none): a message's time, a compartment's last date, a fact's promotion.
A search ranks by recency from the rowid alone, reading the rows of the best
matches only (``docs/performance.md``). The store's writers of ``raw_messages``,
``compartments`` and ``memories`` keep it in step by :func:`index_rows`
after an insert and :func:`unindex_rows` before a delete (both before and
after an update). No trigger does it: the store refuses triggers, which a
cloned repository's store could carry (``store/guard.py``). A table without
content forgets what it indexed, so removing a row gives the index the row's
text again, worked out by the same SQL as when it was added.

The migration's statements (:data:`SEARCH_MIGRATION`) are released: never
edit them or the expressions they are built from; a change is a new migration.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

__all__ = [
    "DAY_SHIFT",
    "EPOCH_JULIAN_DAY",
    "ID_MASK",
    "KIND_BITS",
    "KIND_COMPARTMENT",
    "KIND_FACT",
    "KIND_MESSAGE",
    "SEARCH_MIGRATION",
    "SEARCH_SHADOW_TABLES",
    "SEARCH_TABLE",
    "index_rows",
    "unindex_rows",
]

SEARCH_TABLE = "search_index"
"""The FTS5 table's name."""

SEARCH_SHADOW_TABLES = tuple(
    f"{SEARCH_TABLE}_{name}" for name in ("data", "idx", "docsize", "config")
)
"""The tables FTS5 keeps the index in (a table without content has no ``_content``)."""

KIND_BITS = 2
"""The low bits of an index rowid that name the kind of row (one of four kinds is spare)."""
DAY_SHIFT = 40
"""Where an index rowid's day starts: below it, the row's id (up to 2**38) and its kind."""
ID_MASK = (1 << (DAY_SHIFT - KIND_BITS)) - 1
"""The row id's bits, once the kind is shifted out."""
EPOCH_JULIAN_DAY = 2451544.5
"""2000-01-01 as a Julian day: an index rowid's day 0."""
MAX_DAY = (1 << 22) - 1
"""The largest day an index rowid holds (the sign bit stays clear)."""
KIND_MESSAGE = 0
"""A ``raw_messages`` row."""
KIND_COMPARTMENT = 1
"""A ``compartments`` row."""
KIND_FACT = 2
"""A ``memories`` row (a promoted fact)."""


def _rowid(row_id: str, date: str, kind: int) -> str:
    """The SQL of the index rowid of row ``row_id`` of ``kind`` dated ``date``."""
    day = (
        f"(CASE WHEN julianday({date}) >= {EPOCH_JULIAN_DAY} THEN"
        f" min(CAST(julianday({date}) - {EPOCH_JULIAN_DAY} AS INTEGER), {MAX_DAY}) ELSE 0 END)"
    )
    # SQLite's << and | bind alike, left to right: every shift is bracketed.
    return f"(({day} << {DAY_SHIFT}) | ({row_id} << {KIND_BITS}) | {kind})"


_BODY_PART = (
    "CASE WHEN json_extract(p.value, '$.type') IS NOT 'tool'"
    " AND json_extract(p.value, '$.ignored') IS NOT 1"
    " AND json_type(p.value, '$.text') = 'text' THEN json_extract(p.value, '$.text') END"
)
"""A text part that is not ignored: its text (else NULL, which ``group_concat`` skips)."""

_TOOL_PART = (
    "CASE WHEN json_extract(p.value, '$.type') = 'tool' THEN"
    " coalesce(json_extract(p.value, '$.name'), '') || ' '"
    " || coalesce(json_extract(p.value, '$.input'), '') || ' '"
    " || coalesce(json_extract(p.value, '$.output'), '') END"
)
"""A tool part: its name, input and output (else NULL)."""

_MESSAGE_PARTS = (
    "SELECT m.id AS id, m.timestamp AS timestamp,"
    f" group_concat({_BODY_PART}, char(10)) AS body,"
    f" group_concat({_TOOL_PART}, char(10)) AS tools"
    " FROM raw_messages m,"
    " json_each(CASE WHEN json_valid(m.parts_json) THEN m.parts_json ELSE '[]' END) p"
    " WHERE ({where}) AND p.type = 'object' GROUP BY m.id"
)
"""Each message ``{where}`` picks, its JSON read once: the text of its text parts that are
not ignored and of its tool calls, one part a line (NULL: none)."""

_ROWS = {
    KIND_MESSAGE: (
        f"SELECT {{head}}{_rowid('id', 'timestamp', KIND_MESSAGE)}, '', body, tools"
        f" FROM ({_MESSAGE_PARTS}) WHERE body IS NOT NULL OR tools IS NOT NULL"
    ),
    KIND_COMPARTMENT: (
        f"SELECT {{head}}{_rowid('c.id', 'coalesce(c.end_date, c.start_date)', KIND_COMPARTMENT)},"
        " c.title,"
        " coalesce(c.p1, '') || char(10) || coalesce(c.p2, '') || char(10)"
        " || coalesce(c.p3, '') || char(10) || coalesce(c.p4, ''), NULL"
        " FROM compartments c WHERE {where}"
    ),
    KIND_FACT: (
        f"SELECT {{head}}{_rowid('f.id', 'f.created_at', KIND_FACT)}, f.category, f.content, NULL"
        " FROM memories f WHERE {where}"
    ),
}
"""Per kind, the ``SELECT`` of the index rows of the stored rows ``{where}`` picks.

The message's alias is ``m``, the compartment's ``c``, the fact's ``f``;
``{head}`` is empty when adding rows and ``'delete', `` when removing them.
"""

_ADD = f"INSERT INTO {SEARCH_TABLE} (rowid, title, body, tools) "
_REMOVE = f"INSERT INTO {SEARCH_TABLE} ({SEARCH_TABLE}, rowid, title, body, tools) "

SEARCH_MIGRATION: tuple[str, ...] = (
    "ALTER TABLE sessions ADD COLUMN author TEXT",
    f"CREATE VIRTUAL TABLE {SEARCH_TABLE} USING fts5(title, body, tools, content='',"
    " tokenize='unicode61 remove_diacritics 2')",
    *(_ADD + _ROWS[kind].format(head="", where="1") for kind in sorted(_ROWS)),
)
"""The migration that adds the index (and ``sessions.author``) and fills it from every row.

``sessions.author`` names who ran a session; NULL is the local user (the
sessions this machine's harnesses recorded); shared sessions set it.
"""


def index_rows(
    connection: sqlite3.Connection, kind: int, where: str, params: Sequence[object] = ()
) -> None:
    """Add to the index the rows of ``kind`` that ``where`` picks (after they are written)."""
    connection.execute(_ADD + _ROWS[kind].format(head="", where=where), params)


def unindex_rows(
    connection: sqlite3.Connection, kind: int, where: str, params: Sequence[object] = ()
) -> None:
    """Remove from the index the rows of ``kind`` that ``where`` picks (before they change)."""
    connection.execute(_REMOVE + _ROWS[kind].format(head="'delete', ", where=where), params)
