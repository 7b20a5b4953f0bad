"""The project brief as harnesses are handed it: the same bytes between ordinary turns.

A harness that puts the project brief in the agent's prompt (a session-start
context, a system prompt sent again on every call) keeps its prompt cache
only while that text stays the same. So the brief is handed the way
``render`` hands the ``<session-history>`` block (``docs/historian/cache-safe.md``):
the text of the last rebuild byte for byte, then an additive part listing
the facts and episodes learnt since, oldest first. It is rebuilt, newest
titles first again, only when that is warranted: the first handover, a
change of the room or the number of titles, a listed episode rebuilt
(``recomp``), project memory known at the rebuild edited, or the additive
part outgrowing :data:`ADDITIVE_SHARE` of the room (a rebuilt brief leaves it
that share). The record of the last
rebuild is ``.karni/local/historian-handover.json``; when it cannot be read or
written the brief is handed fresh (``docs/hooks.md``).
"""

from __future__ import annotations

import json
import os

from karni.agent.common.files import read_regular_file, write_atomic

from karni_historian.brief.briefs import project_brief
from karni_historian.brief.lines import anchor_line, fact_line
from karni_historian.store.briefing import change_digest
from karni_historian.store.database import utc_now

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from karni_historian.store.briefing import BriefTables
    from karni_historian.store.records import BriefEpisode

__all__ = ["ADDITIVE_SHARE", "RECORD_FILE", "SINCE_HEADING", "handed_project_brief"]

ADDITIVE_SHARE = 0.25
"""The share of the room the additive part may use before the brief is rebuilt."""

RECORD_FILE = "historian-handover.json"
"""The record of the last rebuild, in ``.karni/local/``."""

SINCE_HEADING = "Since then, oldest first:"
"""The heading of the additive part."""

_MAX_RECORD_BYTES = 1 << 20


def _record_path(store: BriefTables) -> str:
    return os.path.join(store.root, ".karni", "local", RECORD_FILE)


def _read_record(store: BriefTables) -> dict[str, Any] | None:
    try:
        record = json.loads(
            read_regular_file(_record_path(store), _MAX_RECORD_BYTES, follow_symlinks=False)
        )
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _digest(listed: Sequence[BriefEpisode]) -> str:
    return change_digest(repr([(e.id, e.session_id, e.start, e.end, e.title) for e in listed]))


def _shape(room: int | None, max_titles: int | None) -> str:
    return f"room={room} titles={max_titles}"


def _reason(store: BriefTables, record: dict[str, Any] | None, shape: str) -> str | None:
    """Why the brief is rebuilt now, None when the recorded one still holds."""
    if record is None:
        return "first handover"
    if record.get("shape") != shape:
        return "the room or the number of titles changed"
    if not record.get("text"):
        return "nothing was handed before"
    ids = [i for i in record.get("listed", ()) if isinstance(i, int)]
    found = store.episodes_by_id(ids)
    if len(found) != len(ids) or _digest([found[i] for i in ids]) != record.get("digest"):
        return "episodes of the handed brief were rebuilt"
    memory_max_id = record.get("memory_max_id")
    if not isinstance(memory_max_id, int):
        return "first handover"
    if store.memory_digest(memory_max_id)[1] != record.get("memory_digest"):
        return "project memory was edited"
    return None


def _additive(store: BriefTables, record: dict[str, Any], room: int | None) -> str | None:
    """The facts and episodes learnt since the rebuild; None when they outgrew their room."""
    facts = store.facts_after(int(record["memory_max_id"]))
    store.attribute_facts(facts)
    limit = 200 if room is None else max(1, room // 20)
    episodes = store.episodes_after(int(record.get("newest_id", 0)), limit + 1)
    if not facts and not episodes:
        return ""
    if len(episodes) > limit:
        return None
    sessions = max(int(record.get("sessions", 1)), len({e.session_id for e in episodes}))
    lines = [SINCE_HEADING, *(fact_line(fact) for fact in facts)]
    lines += [anchor_line(episode, sessions) for episode in episodes]
    text = "\n".join(lines)
    if room is not None:
        share = min(int(room * ADDITIVE_SHARE), room - len(record["text"]) - 1)
        if len(text) + 1 > share:
            return None
    return text


def _rebuild(
    store: BriefTables, shape: str, reason: str, max_titles: int | None, room: int | None
) -> str | None:
    # A rebuilt brief leaves the additive part its share of the room.
    kept = None if room is None else room - int(room * ADDITIVE_SHARE)
    text = project_brief(store, max_titles=max_titles, room_chars=kept)
    listed = store.newest_episodes(max_titles)
    memory_max_id, memory_digest = store.memory_digest()
    record = {
        "shape": shape,
        "text": text or "",
        "listed": [s.id for s in listed],
        "digest": _digest(listed),
        "sessions": len({s.session_id for s in listed}),
        "newest_id": store.newest_compartment_id(),
        "memory_max_id": memory_max_id,
        "memory_digest": memory_digest,
        "reason": reason,
        "at": utc_now(),
    }
    _write_record(store, record)
    return text


def _write_record(store: BriefTables, record: dict[str, Any]) -> None:
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        write_atomic(_record_path(store), text, within=store.root, mode=0o600, durable=False)
    except (OSError, ValueError):
        pass  # handed fresh: the next handover rebuilds again


def handed_project_brief(
    store: BriefTables, *, max_titles: int | None = None, room_chars: int | None = None
) -> str | None:
    """The project brief as handed over: the last rebuild's text, then what was learnt since.

    Args:
        store: The project's store.
        max_titles: How many titles a rebuilt brief lists at most.
        room_chars: The characters the whole brief may use; None for no limit.

    Returns:
        The brief, or None when nothing is known.
    """
    shape = _shape(room_chars, max_titles)
    record = _read_record(store)
    reason = _reason(store, record, shape)
    if reason is None and record is not None:
        additive = _additive(store, record, room_chars)
        if additive is not None:
            text = str(record["text"])
            return f"{text}\n{additive}" if additive else text
        reason = "the additive part outgrew its share of the room"
    return _rebuild(store, shape, reason or "first handover", max_titles, room_chars)
