"""Turning Chronicle's JSON replies into briefs: one per file, one for the project.

A file brief is the compacted ``markdown`` of ``chronicle context``; a reply
without usable Markdown is briefed from its ``knowledge`` and ``prompts``
instead, decisions first. The project brief lists the decisions of
``chronicle knowledge --type decision``, newest first: Chronicle returns them
in store order, which is roughly oldest first.
"""

from __future__ import annotations

from karni.agent.history_chronicle.markdown import compact_markdown
from karni.agent.history_chronicle.render import knowledge_line, prompt_line

__all__ = ["file_brief", "project_brief"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KNOWLEDGE_HEADING = "## Decisions & TODOs from these sessions"
PROMPTS_HEADING = "## What shaped this file"
PROJECT_HEADING = "## Decisions, newest first"


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _from_items(payload: dict[str, Any]) -> str:
    bullets = [line for item in _dicts(payload.get("knowledge")) if (line := knowledge_line(item))]
    prompts = [prompt_line(n, item) for n, item in enumerate(_dicts(payload.get("prompts")), 1)]
    lines = [KNOWLEDGE_HEADING, *bullets] if bullets else []
    if prompts:
        lines += [PROMPTS_HEADING, *prompts]
    return "\n".join(lines)


def file_brief(payload: dict[str, Any]) -> str | None:
    """The brief for one file from a ``chronicle context --json`` reply.

    Returns:
        None for an honestly empty pack (``"empty": true``) or a reply with
        nothing to show.
    """
    if payload.get("empty") is True:
        return None
    markdown = payload.get("markdown")
    brief = compact_markdown(markdown) if isinstance(markdown, str) else ""
    if not brief:
        brief = compact_markdown(_from_items(payload))
    return brief or None


def _newest_first_key(item: dict[str, Any]) -> tuple[str, str]:
    ts, event = item.get("ts"), item.get("eventId")
    return (ts if isinstance(ts, str) else "", event if isinstance(event, str) else "")


def project_brief(payload: dict[str, Any]) -> str | None:
    """The project brief from a ``chronicle knowledge --type decision --json`` reply.

    Decisions are sorted by ``ts``, newest first (ties: the later event id
    first); Chronicle's canonical UTC timestamps sort as text.
    """
    items = [
        item for item in _dicts(payload.get("items")) if item.get("kind", "decision") == "decision"
    ]
    items.sort(key=_newest_first_key, reverse=True)
    bullets = [line for item in items if (line := knowledge_line(item, with_kind=False))]
    if not bullets:
        return None
    return "\n".join([PROJECT_HEADING, *bullets])
