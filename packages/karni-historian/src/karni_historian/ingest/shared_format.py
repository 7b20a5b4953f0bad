"""The format of a shared history file, and its strict reader.

A file under ``.karni/history/`` is one session's condensed history, written
by ``karni-historian share`` and committed by its user
(``docs/how-to/team-history.md``). It arrives from the repository, so it is
untrusted: :func:`parse` reads it strictly (its size, its text, its depth,
every field's type and length) and raises :class:`SharedFileProblem` with a
one-line reason for anything else, which ``doctor`` shows and the brief
skips. Keys this version does not know are ignored (an older writer's
``author`` claim among them: who wrote a file comes from git, never from
the file). A file of a newer ``format`` is skipped, not guessed at.

The shape (format 1), keys sorted when written::

    {"format": 1,
     "session": {"id", "harness", "title", "started", "ended", "messages"},
     "compartments": [{"sequence", "start", "end", "title", "type", "importance",
                       "start_date", "end_date", "p1", "p2", "p3", "p4"}],
     "facts": [{"category", "content", "origin", "start", "end", "message"}],
     "files": {PATH: {"requests": [{"request", "time", "text", "added", "removed", "edits",
                                    "ranges": [{"ordinal", "position", "time", "hash",
                                                "lines", "loose"}]}],
                      "notes": [{"kind", "request", "message", "text", "weight"}]}},
     "commits": [{"ordinal", "request", "hash", "subject", "time", "request_text",
                  "request_time"}]}

A range is what :mod:`karni_historian.written_ranges` makes of an edit: its
hash, and its lines' exact and loose hashes (8 hex digits each, separated by
spaces), which ``blame`` matches against today's lines.
"""

from __future__ import annotations

from karni_historian.errors import SharedFileProblem
from karni_historian.written_ranges import HASH_PREFIX, LINE_HASH_CHARS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = [
    "FORMAT",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "NOTE_KINDS",
    "SharedFileProblem",
    "file_name",
    "is_commit",
    "is_relative_path",
    "parse",
    "session_id_problem",
]

FORMAT = 1
"""The format this version writes and the newest it reads."""

MAX_FILE_BYTES = 256 * 1024
"""The largest shared file written or read (256 KiB)."""

MAX_DEPTH = 8
"""The deepest nesting of arrays and objects a shared file may have (format 1 needs 6)."""

NOTE_KINDS = ("failed", "rejected", "decision", "constraint", "outcome")
"""The kinds of a file note (``docs/historian/file-notes.md``)."""

_ORIGINS = ("user", "agent", "historian")
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
_HEX = frozenset("0123456789abcdef")
_TEXT = 20_000
_LINE = 4_000
_SHORT = 200
_MANY = 5_000


def session_id_problem(session_id: str) -> str | None:
    """Why ``session_id`` cannot name a shared file, or None when it can."""
    if not 0 < len(session_id) <= _SHORT:
        return "is empty or longer than 200 characters"
    if not set(session_id) <= _ID_CHARS or session_id.startswith("."):
        return "holds characters other than letters, digits, '-', '_' and '.'"
    return None


def file_name(session_id: str) -> str:
    """The name of the session's shared file: its id and ``.json``."""
    return f"{session_id}.json"


def _text(limit: int, *, empty: bool = True) -> Callable[[object], bool]:
    return lambda v: isinstance(v, str) and len(v) <= limit and (empty or bool(v)) and "\0" not in v


def _optional(check: Callable[[object], bool]) -> Callable[[object], bool]:
    return lambda v: v is None or check(v)


def _integer(low: int, high: int = 1 << 40) -> Callable[[object], bool]:
    return lambda v: type(v) is int and low <= v <= high


def _hash(value: object) -> bool:
    prefix = HASH_PREFIX
    return (
        isinstance(value, str)
        and value.startswith(prefix)
        and len(value) == len(prefix) + 16
        and set(value[len(prefix) :]) <= _HEX
    )


def _line_hashes(value: object) -> bool:
    """Whether ``value`` is 1 to 2,000 line hashes (8 lower-case hex digits), space-separated."""
    if not isinstance(value, str) or not 0 < len(value) <= 2_000 * (LINE_HASH_CHARS + 1):
        return False
    hashes = value.split(" ")
    return all(len(h) == LINE_HASH_CHARS and set(h) <= _HEX for h in hashes)


def is_commit(value: object) -> bool:
    """Whether ``value`` is a commit hash as a shared file holds it: 4 to 40 lower-case hex."""
    return _commit(value)


def is_relative_path(value: object) -> bool:
    """Whether ``value`` is a path a shared file may name: project-relative POSIX, no ``..``."""
    return _relative_path(value)


def _commit(value: object) -> bool:
    return isinstance(value, str) and 4 <= len(value) <= 40 and set(value) <= _HEX


def _relative_path(value: object) -> bool:
    if not isinstance(value, str) or not 0 < len(value) <= 1000 or "\0" in value:
        return False
    if value.startswith("/") or "\\" in value or value[1:3] == ":/":
        return False
    return all(part not in ("", ".", "..") for part in value.split("/"))


_SESSION = {
    "id": _text(_SHORT, empty=False),
    "harness": _text(40, empty=False),
    "title": _optional(_text(_LINE)),
    "started": _optional(_text(40)),
    "ended": _optional(_text(40)),
    "messages": _integer(0),
}
_COMPARTMENT = {
    "sequence": _integer(0),
    "start": _integer(0),
    "end": _integer(0),
    "title": _text(_LINE),
    "type": _optional(_text(_SHORT)),
    "importance": _integer(1, 100),
    "start_date": _optional(_text(40)),
    "end_date": _optional(_text(40)),
    **{tier: _optional(_text(_TEXT)) for tier in ("p1", "p2", "p3", "p4")},
}
_FACT = {
    "category": _text(60, empty=False),
    "content": _text(_LINE, empty=False),
    "origin": lambda v: v is None or v in _ORIGINS,
    "start": _integer(0),
    "end": _integer(0),
    "message": _optional(_integer(0)),
}
_RANGE = {
    "ordinal": _integer(0),
    "position": _integer(0),
    "time": _optional(_text(40)),
    "hash": _hash,
    "lines": _line_hashes,
    "loose": _line_hashes,
}
_COMMIT = {
    "ordinal": _integer(0),
    "request": _integer(0),
    "hash": _commit,
    "subject": _text(_LINE),
    "time": _optional(_text(40)),
    "request_text": _text(_LINE),
    "request_time": _optional(_text(40)),
}
_NOTE = {
    "kind": lambda v: v in NOTE_KINDS,
    "request": _integer(0),
    "message": _integer(0),
    "text": _text(_LINE, empty=False),
    "weight": _integer(0, 1000),
}


def _each(items: object, limit: int, check: Callable[[object], bool]) -> bool:
    return isinstance(items, list) and len(items) <= limit and all(check(item) for item in items)


def _request(value: object) -> bool:
    fields = {
        "request": _integer(0),
        "time": _optional(_text(40)),
        "text": _text(_LINE),
        "added": _integer(0),
        "removed": _integer(0),
    }
    if not isinstance(value, dict) or not _object(value, fields):
        return False
    return _each(value.get("edits", []), _MANY, _integer(0)) and _each(
        value.get("ranges", []), _MANY, lambda r: _object(r, _RANGE)
    )


def _file_entry(value: object) -> bool:
    if not isinstance(value, dict):
        return False
    return _each(value.get("requests", []), _MANY, _request) and _each(
        value.get("notes", []), _MANY, lambda n: _object(n, _NOTE)
    )


def _object(value: object, fields: dict[str, Callable[[object], bool]]) -> bool:
    """Whether ``value`` is an object whose every known field is present and valid."""
    if not isinstance(value, dict):
        return False
    return all(key in value and check(value[key]) for key, check in fields.items())


def _depth(value: object, limit: int) -> bool:
    """Whether ``value`` nests no deeper than ``limit`` arrays and objects."""
    if isinstance(value, dict):
        return limit > 0 and all(_depth(item, limit - 1) for item in value.values())
    if isinstance(value, list):
        return limit > 0 and all(_depth(item, limit - 1) for item in value)
    return True


def _decoded(data: bytes) -> Any:
    """The JSON value of ``data``; raises :class:`SharedFileProblem` for anything else."""
    # bench row "karni context … (historian store, 1,000 compartments)" runs without it
    import json

    if len(data) > MAX_FILE_BYTES:
        raise SharedFileProblem(f"is larger than {MAX_FILE_BYTES // 1024} KiB")
    if b"\0" in data:
        raise SharedFileProblem("is binary, not JSON text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SharedFileProblem("is binary, not UTF-8 text") from None
    try:
        value = json.loads(text)
    except RecursionError:
        raise SharedFileProblem(f"is nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as error:
        raise SharedFileProblem(f"is not valid JSON ({error.args[0].split(':')[0]})") from None
    if not _depth(value, MAX_DEPTH):
        raise SharedFileProblem(f"is nested deeper than {MAX_DEPTH} levels")
    return value


def parse(data: bytes, name: str) -> dict[str, Any]:
    """The shared session in ``data``, the file ``name``'s bytes, checked field by field.

    Raises:
        SharedFileProblem: Too large, binary, not JSON, too deep, a newer
            format, a missing or mistyped field, or an id that is not the
            file's name.
    """
    value = _decoded(data)
    if not isinstance(value, dict):
        raise SharedFileProblem("is not a JSON object")
    version = value.get("format")
    if type(version) is not int or version < 1:
        raise SharedFileProblem("has no `format` version")
    if version > FORMAT:
        raise SharedFileProblem(
            f"has format {version}, newer than {FORMAT}; upgrade karni-historian to read it"
        )
    session = value.get("session")
    if not _object(session, _SESSION):
        raise SharedFileProblem("has no valid `session` (id, harness, title, times, messages)")
    assert isinstance(session, dict)
    if session_id_problem(session["id"]) or file_name(session["id"]) != name:
        raise SharedFileProblem("names a session other than its file name says")
    if not _each(value.get("compartments"), _MANY, lambda c: _object(c, _COMPARTMENT)):
        raise SharedFileProblem("has a malformed `compartments` list")
    if not _each(value.get("facts"), _MANY, lambda f: _object(f, _FACT)):
        raise SharedFileProblem("has a malformed `facts` list")
    files = value.get("files")
    if not isinstance(files, dict) or len(files) > _MANY:
        raise SharedFileProblem("has no valid `files` object")
    for path, entry in files.items():
        if not _relative_path(path) or not _file_entry(entry):
            raise SharedFileProblem("has a malformed entry in `files`")
    if not _each(value.get("commits", []), _MANY, lambda c: _object(c, _COMMIT)):
        raise SharedFileProblem("has a malformed `commits` list")
    return value
