"""Chronicle's human-readable output: the context pack's Markdown and the knowledge listing.

The templates are Chronicle's (docs/chronicle-contract.md), byte for byte: the empty
pack, the prompt list, the Project Memory block with its fixed groups, the
older "Decisions & TODOs" fallback and the footer.
"""

from __future__ import annotations

from karni_provider_testkit.fake_chronicle.formats import collapse, truncate

__all__ = ["context_markdown", "knowledge_listing", "when"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

EMPTY_INTRO = (
    "_No captured history shaped this file yet — nothing to brief. Chronicle can only",
    "assemble context for work done while capture was running._",
)
PACK_INTRO = (
    "_Assembled from your own AI-development history so your next prompt starts with",
    "what was already asked and decided — paste this into your AI tool._",
)
FOOTER = (
    "---",
    "_Derived from the Chronicle record on this machine. Chronicle never calls a model;",
    "this is your context, assembled — nothing left your machine._",
)
PROMPTS_HEADING = "## What shaped this file"
MEMORY_HEADING = "## Why this file looks the way it does (Project Memory)"
KNOWLEDGE_HEADING = "## Decisions & TODOs from these sessions"
MEMORY_GROUPS = (
    "**Active decisions**",
    "**Constraints**",
    "**Known issues**",
    "**Failed / superseded approaches (do NOT repeat)**",
    "**Open TODOs**",
)


def when(ts: str | None) -> str:
    """Chronicle's ``<when>``: ``YYYY-MM-DD HH:MM`` in UTC, or ``unknown``."""
    return "unknown" if ts is None else ts.replace("T", " ")[:16]


def _memory_group(item: Mapping[str, Any]) -> int | None:
    kind, status = item.get("kind"), item.get("status")
    if kind == "decision" and status == "active":
        return 0
    if kind == "constraint" and status != "rejected":
        return 1
    if kind == "known_issue" and status != "resolved":
        return 2
    if kind == "failed_approach" or (kind == "decision" and status in ("superseded", "rejected")):
        return 3
    if kind == "todo" and status != "resolved":
        return 4
    return None


def _prompt_line(number: int, prompt: Mapping[str, Any]) -> str:
    text = prompt.get("text")
    shown = "(prompt text unavailable)" if text is None else f'"{truncate(collapse(text), 100)}"'
    return f"{number}. {when(prompt.get('ts'))}  {prompt['churn']}  — {shown}"


def _memory_block(memory: list[dict[str, Any]]) -> list[str]:
    groups: list[list[str]] = [[] for _ in MEMORY_GROUPS]
    for item in memory:
        group = _memory_group(item)
        if group is not None:
            groups[group].append(f"- {truncate(collapse(str(item.get('content'))), 240)}")
    if not any(groups):
        return []
    lines = ["", MEMORY_HEADING, ""]
    for title, bullets in zip(MEMORY_GROUPS, groups, strict=True):
        if bullets:
            lines += [title, *bullets, ""]
    return lines


def context_markdown(
    file: str,
    prompts: list[dict[str, Any]],
    knowledge: list[dict[str, Any]],
    memory: list[dict[str, Any]],
) -> str:
    """The ``markdown`` of a context pack, exactly as Chronicle renders it."""
    lines = [f"# Context for {file}", ""]
    if not prompts:
        return "\n".join([*lines, *EMPTY_INTRO]) + "\n"
    lines += [*PACK_INTRO, "", PROMPTS_HEADING, ""]
    lines += [_prompt_line(number, prompt) for number, prompt in enumerate(prompts, 1)]
    if memory:
        lines += _memory_block(memory)
    elif knowledge:
        lines += ["", KNOWLEDGE_HEADING, ""]
        lines += [
            f"- **[{item['kind']}]** {item['text']}  _({item['role']}, {when(item['ts'])})_"
            for item in knowledge
        ]
    return "\n".join([*lines, "", *FOOTER]) + "\n"


def knowledge_listing(items: list[dict[str, Any]], kinds: Sequence[str]) -> str:
    """``chronicle knowledge`` human output, as Chronicle prints it without ``--json``."""
    if not items:
        return (
            "No decisions or TODOs found in the Chronicle record yet.\n"
            "They are extracted from captured prompts and responses: lines such as\n"
            '"decided to …", "let\'s use …" or "TODO: …".\n'
            "Capture a session, then run this again.\n"
        )
    lines: list[str] = []
    for kind in kinds:
        chosen = [item for item in items if item["kind"] == kind]
        if not chosen:
            continue
        if lines:
            lines.append("")
        lines += [f"{kind}s ({len(chosen)}):", ""]
        for item in chosen:
            origin = f"{item['role']} · {when(item['ts'])} · {item['confidence']}"
            lines += [f"  {item['text']}", f"     {origin} · chronicle inspect {item['eventId']}"]
    return "\n".join(lines) + "\n"
