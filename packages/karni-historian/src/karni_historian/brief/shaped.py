"""What shaped a file: the requests whose work edited it, with the lines each changed.

Read before an edit, the most useful history of a file is the list of the
user requests that led to changes in it: when, how much, and why. This module
works it out from the raw messages, so a file has it as soon as its session is
ingested, condensed or not (``docs/historian/blocks.md``). Each edit is
attributed to the last meaningful user prompt before it in its session
(subagent work is stored after the call that started it, so it counts for
the parent's request), and its ``+added −removed`` line counts come from the
edit tool's own input: the old and new text of a replacement, the content of
a written file, the ``+``/``-`` lines of a patch.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from karni_historian.model import Message, ToolPart
    from karni_historian.store import Store

__all__ = ["REQUEST_CHARS", "Shaping", "edit_line_counts", "shaping_line", "shaping_requests"]

_REPLACE_TOOLS = frozenset({"edit", "multiedit", "str_replace_editor"})
_WRITE_TOOLS = frozenset({"write", "create"})
_PATCH_TOOLS = frozenset({"apply_patch", "patch"})
_NOTEBOOK_TOOLS = frozenset({"notebookedit"})
_OLD_KEYS = ("old_string", "oldText", "oldString", "old_str")
_NEW_KEYS = ("new_string", "newText", "newString", "new_str")
_PATCH_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ")
REQUEST_CHARS = 72
"""The longest request quoted in a line of what shaped a file."""


@dataclass(slots=True)
class Shaping:
    """One request that led to edits of a file.

    Attributes:
        session_id: The session of the request.
        ordinal: The request's message (0 when the edits came before any prompt).
        request: The request's text, on one line.
        timestamp: When the request was made (else the first edit), ISO 8601.
        added: Lines the edits added.
        removed: Lines the edits removed.
    """

    session_id: str
    ordinal: int
    request: str
    timestamp: str | None
    added: int = 0
    removed: int = 0


def _text(data: dict[str, Any], keys: Sequence[str]) -> str | None:
    return next((data[k] for k in keys if isinstance(data.get(k), str)), None)


def _diff_counts(old: str, new: str) -> tuple[int, int]:
    """Lines added and removed turning ``old`` into ``new``."""
    import difflib

    added = removed = 0
    for line in difflib.ndiff(old.splitlines(), new.splitlines()):
        if line.startswith("+ "):
            added += 1
        elif line.startswith("- "):
            removed += 1
    return added, removed


def _replacements(data: dict[str, Any]) -> Iterable[tuple[str, str]]:
    """The ``(old, new)`` text pairs of a replacing edit, one or many."""
    old, new = _text(data, _OLD_KEYS), _text(data, _NEW_KEYS)
    if old is not None or new is not None:
        yield old or "", new or ""
    edits = data.get("edits")
    for item in edits if isinstance(edits, list) else ():
        if isinstance(item, dict):
            yield _text(item, _OLD_KEYS) or "", _text(item, _NEW_KEYS) or ""


def _patch_counts(patch: str, path: str) -> tuple[int, int]:
    """``+``/``-`` lines of ``patch`` about ``path`` (all of them when it names no file)."""
    added = removed = 0
    current: str | None = None
    headed = any(header in patch for header in _PATCH_HEADERS)
    for line in patch.splitlines():
        header = next((h for h in _PATCH_HEADERS if line.startswith(h)), None)
        if header is not None:
            current = line[len(header) :].strip()
            continue
        if line.startswith(("***", "+++", "---", "@@")) or (headed and not _same(current, path)):
            continue
        if line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
    return added, removed


def _same(candidate: str | None, path: str) -> bool:
    return bool(candidate) and (candidate == path or str(candidate).endswith("/" + path))


def edit_line_counts(part: ToolPart, path: str) -> tuple[int, int]:
    """``(added, removed)`` lines of ``path`` worked out from an edit tool's input.

    Args:
        part: A tool call, its input paths already project-relative.
        path: The project-relative file the counts are for.

    Returns:
        The counts; ``(0, 0)`` for a tool whose input does not say.
    """
    data = part.input if isinstance(part.input, dict) else {}
    name = part.name.lower()
    if name in _REPLACE_TOOLS:
        pairs = [_diff_counts(old, new) for old, new in _replacements(data)]
        return sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    if name in _WRITE_TOOLS:
        content = _text(data, ("content", "file_text"))
        return (len(content.splitlines()), 0) if content else (0, 0)
    if name in _NOTEBOOK_TOOLS:
        source = _text(data, ("new_source",))
        return (len(source.splitlines()), 0) if source else (0, 0)
    if name in _PATCH_TOOLS:
        patch = _text(data, ("patchText", "patch", "input"))
        return _patch_counts(patch, path) if patch else (0, 0)
    return 0, 0


def _touches(part: ToolPart, path: str) -> bool:
    from karni_historian.model import PATH_KEYS

    data = part.input if isinstance(part.input, dict) else {}
    named = _text(data, PATH_KEYS)
    if named is not None:
        return named == path or named.startswith(path.rstrip("/") + "/")
    patch = _text(data, ("patchText", "patch"))
    return bool(patch) and path in str(patch)


def _message_counts(message: Message, path: str) -> tuple[int, int]:
    from karni_historian.model import ToolPart

    added = removed = 0
    for part in message.parts:
        if isinstance(part, ToolPart) and not part.is_error and _touches(part, path):
            plus, minus = edit_line_counts(part, path)
            added, removed = added + plus, removed + minus
    return added, removed


def _one_line(text: str) -> str:
    """``text`` on one line, without escape sequences or control characters."""
    from karni.agent.common.sanitize import clean_line

    return clean_line(" ".join(text.split()))


def _session_shapings(store: Store, session_id: str, edits: set[int], path: str) -> list[Shaping]:
    """The requests of one session whose work edited ``path``, oldest first."""
    from karni_historian.condense.chunk import meaningful_user_text
    from karni_historian.condense.project_view import project_view

    found: dict[int, Shaping] = {}
    request: tuple[int, str, str | None] = (0, "", None)
    for message in store.prompts_and_edits(session_id, edits, max(edits)):
        prompt = meaningful_user_text(message)
        if prompt:
            request = (message.ordinal, _one_line(prompt), message.timestamp)
        if message.ordinal not in edits:
            continue
        ordinal, text, when = request
        shaping = found.get(ordinal)
        if shaping is None:
            shaping = found[ordinal] = Shaping(session_id, ordinal, text, when or message.timestamp)
        plus, minus = _message_counts(project_view([message], store.root)[0], path)
        shaping.added += plus
        shaping.removed += minus
    return list(found.values())


def shaping_requests(store: Store, path: str) -> list[Shaping]:
    """The requests that led to edits of ``path`` (or files under it), newest first."""
    by_session: dict[str, set[int]] = {}
    for session_id, ordinal in store.editing(path):
        by_session.setdefault(session_id, set()).add(ordinal)
    shapings: list[Shaping] = []
    for session_id, ordinals in by_session.items():
        shapings += _session_shapings(store, session_id, ordinals, path)
    shapings.sort(key=lambda s: (s.timestamp or "", s.session_id, s.ordinal), reverse=True)
    return shapings


def _minute(timestamp: str | None) -> str:
    """The local ``YYYY-MM-DD HH:MM`` of an ISO 8601 timestamp, or ``""``."""
    if not timestamp:
        return ""
    from datetime import datetime

    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return ""
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M")


def _quoted(request: str, limit: int) -> str:
    if not request:
        return "(edits before the first request)"
    if len(request) > limit:
        cut = request[:limit]
        space = cut.rfind(" ")
        request = (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:.") + "…"
    return f'"{request}"'


def shaping_line(number: int, shaping: Shaping, *, request_chars: int = REQUEST_CHARS) -> str:
    """``N. DATE +A −R — "request…"``, one line."""
    date = _minute(shaping.timestamp)
    head = f"{number}. {date} " if date else f"{number}. "
    counts = f"+{shaping.added} \u2212{shaping.removed}"
    return f"{head}{counts} \u2014 {_quoted(shaping.request, request_chars)}"
