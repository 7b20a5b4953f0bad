"""What the double's commands return: context packs and knowledge, from the store fixture.

Chronicle picks a file's prompts from its checkpoints (the last N turns that
touched the path, oldest first; a directory covers what is under it), its
knowledge in store scan order (one block per session, deduplicated, private
sessions left out) and the Project Memory related to those prompts' sessions.
These functions make the same choices over the fixture's description.
"""

from __future__ import annotations

from karni_provider_testkit.fake_chronicle.formats import collapse, truncate
from karni_provider_testkit.fake_chronicle.markdown import context_markdown

__all__ = ["context_pack", "knowledge_items", "related_memory", "shaping_prompts"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

MINUS = "\u2212"
UNLISTED_MEMORY_KINDS = frozenset({"current_work", "handoff"})


def _private_sessions(data: Mapping[str, Any]) -> set[str]:
    return {
        session["id"]
        for session in data.get("sessions", [])
        if isinstance(session, dict) and session.get("private") and "id" in session
    }


def knowledge_items(
    data: Mapping[str, Any],
    *,
    sessions: set[str] | None = None,
    kind: str | None = None,
) -> list[dict[str, Any]]:
    """Knowledge in store scan order, limited to ``sessions`` and ``kind``, deduplicated."""
    private = _private_sessions(data)
    scanned = [
        item
        for item in data.get("knowledge", [])
        if isinstance(item, dict) and item.get("session") not in private
    ]
    scanned.sort(key=lambda item: (item.get("session") or "", item.get("eventId") or ""))
    seen: set[tuple[str, str]] = set()
    items = []
    for item in scanned:
        if sessions is not None and item.get("session") not in sessions:
            continue
        if kind is not None and item.get("kind") != kind:
            continue
        full = collapse(str(item.get("text", "")))
        key = (str(item.get("kind")), full.lower())
        if len(full) < 4 or key in seen:
            continue
        seen.add(key)
        items.append(
            {
                "kind": item.get("kind"),
                "text": truncate(full, 200),
                "eventId": item.get("eventId"),
                "session": item.get("session"),
                "ts": item.get("ts"),
                "role": item.get("role", "human"),
                "confidence": item.get("confidence", "high"),
            }
        )
    return items


def _churn(files: Mapping[str, Any], path: str) -> str | None:
    matched = [
        change
        for name, change in files.items()
        if name == path or name.startswith(path.rstrip("/") + "/")
    ]
    if not matched:
        return None
    if any(change == "bin" for change in matched):
        return "bin"
    added = sum(int(change[0]) for change in matched)
    removed = sum(int(change[1]) for change in matched)
    return f"+{added} {MINUS}{removed}"


def shaping_prompts(data: Mapping[str, Any], path: str, limit: int) -> list[dict[str, Any]]:
    """The last ``limit`` turns that touched ``path``, oldest first, as PromptItems."""
    private = _private_sessions(data)
    turns = sorted(
        (turn for turn in data.get("prompts", []) if isinstance(turn, dict)),
        key=lambda turn: turn.get("eventId") or "",
    )
    chosen: list[dict[str, Any]] = []
    for turn in reversed(turns):
        churn = _churn(turn.get("files") or {}, path)
        if churn is None:
            continue
        hidden = turn.get("session") in private
        text = turn.get("text")
        chosen.append(
            {
                "eventId": turn.get("eventId"),
                "ts": None if hidden else turn.get("ts"),
                "session": None if hidden else turn.get("session"),
                "text": None if hidden or not (text or "").strip() else text,
                "churn": churn,
            }
        )
        if len(chosen) >= limit:
            break
    chosen.reverse()
    return chosen


def related_memory(data: Mapping[str, Any], sessions: set[str]) -> list[dict[str, Any]]:
    """Project Memory items related to ``sessions``, in memory order (kind, then id)."""
    items = [
        item
        for item in data.get("memory", [])
        if isinstance(item, dict)
        and item.get("kind") not in UNLISTED_MEMORY_KINDS
        and sessions.intersection(item.get("sessions") or [])
    ]
    items.sort(key=lambda item: (str(item.get("kind")), str(item.get("id"))))
    return items


def context_pack(data: Mapping[str, Any], file: str, limit: int) -> dict[str, Any]:
    """The ``chronicle context --json`` payload for the repo-relative ``file``."""
    prompts = shaping_prompts(data, file, limit)
    sessions = {prompt["session"] for prompt in prompts if prompt["session"]}
    knowledge = knowledge_items(data, sessions=sessions) if prompts else []
    memory = related_memory(data, sessions) if prompts else []
    return {
        "apiVersion": 1,
        "command": "context",
        "file": file,
        "empty": not prompts,
        "prompts": prompts,
        "knowledge": knowledge,
        "markdown": context_markdown(file, prompts, knowledge, memory),
    }
