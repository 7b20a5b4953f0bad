"""``expand``: raw messages recovered from the store, compact or in full.

A range comes back as the compact ``U:``/``A:``/``TC:`` chunk the historian
reads (``docs/historian/chunk.md``), within :data:`EXPAND_TOKEN_BUDGET`
tokens; ``verbose`` gives one preview line per part instead. One message comes
back in full. Compartments are a view on the raw messages, which are never
deleted, so any range a compartment names can be read again. A session a
teammate shared has no raw messages here (they stay on the machine it ran
on): :func:`shared_episodes` gives the episodes that cover the range instead.
"""

from __future__ import annotations

import json

from karni.agent.common.sanitize import clean_line

from karni_historian.budget import estimate_tokens
from karni_historian.condense.chunk import build_chunk
from karni_historian.condense.message_text import role_letter, tool_summary
from karni_historian.condense.project_view import project_view
from karni_historian.model import TextPart
from karni_historian.templates import expand_tool

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from karni_historian.condense.chunk import Chunk
    from karni_historian.condense.settings import Settings
    from karni_historian.model import Message
    from karni_historian.store import Store

__all__ = ["EXPAND_TOKEN_BUDGET", "expand_range", "full_message", "shared_episodes"]

PROG = "karni-historian"
EXPAND_TOKEN_BUDGET = 15_000
"""The token budget of one ``expand`` answer."""


def full_message(
    store: Store, session_id: str, ordinal: int, *, verbose: bool = False
) -> str | None:
    """One message recovered in full from the raw store, or None when there is none.

    Every text part, and every tool call with its input and output; ``verbose``
    adds the message's time and the files its tool calls touched.
    """
    message = store.message(session_id, ordinal)
    if message is None:
        return None
    lines = [f"[{ordinal}] {role_letter(message.role)} ({message.role}) — full recovery:", ""]
    if verbose:
        lines.append(f"  time: {message.timestamp or 'unknown'}")
        files = store.files(session_id, ordinal)
        if files:
            lines.append("  files: " + ", ".join(f"{path} ({action})" for path, action in files))
    for part in message.parts:
        if isinstance(part, TextPart):
            lines += ["  [text]", part.text]
            continue
        call = f" #{part.call_id}" if part.call_id else ""
        lines.append(f"  [tool: {part.name}{call}]")
        if isinstance(part.input, dict) and isinstance(part.input.get("description"), str):
            lines.append(f"  description: {part.input['description']}")
        lines.append(f"  input: {json.dumps(part.input, ensure_ascii=False, sort_keys=True)}")
        if part.output is not None:
            lines += ["  output:" + (" (error)" if part.is_error else ""), part.output]
    return _clean("\n".join(lines))


def shared_episodes(store: Store, session_id: str, start: int, end: int) -> str:
    """The episodes of a teammate's shared session that cover messages ``start``-``end``."""
    author = store.shared_authors().get(session_id)
    by = f" by {author}" if author else ""
    head = (
        f"Session {session_id} was shared{by} (.karni/history/{session_id}.json): its raw "
        f"messages stay on the machine it ran on."
    )
    episodes = [
        stored.compartment
        for stored in store.compartments(session_id)
        if stored.compartment.start <= end and stored.compartment.end >= start
    ]
    if not episodes:
        return f"{head} No episode of it covers messages {start}-{end}."
    lines = [f"{head} The episodes that cover messages {start}-{end}:"]
    for episode in episodes:
        lines += ["", f"[{episode.start}-{episode.end}] {episode.title}", episode.p1]
    return _clean("\n".join(lines))


def expand_range(
    store: Store,
    session_id: str,
    start: int,
    end: int,
    settings: Settings,
    *,
    verbose: bool = False,
) -> str:
    """Messages ``start``-``end`` as the compact chunk, or one preview line per part."""
    messages = project_view(store.messages(session_id, start, end), store.root)
    nothing = (
        f"No messages found in range {start}-{end}. "
        f"The range may be outside this session's history."
    )
    if not messages:
        return nothing
    if verbose:
        return _clean(_verbose(messages, session_id, start, end, settings))
    return _clean(_compact(messages, session_id, start, end, settings))


def _compact(
    messages: Sequence[Message], session_id: str, start: int, end: int, settings: Settings
) -> str:
    """The compact chunk of the range; the verbose view when it keeps nothing of it."""

    def chunk_from(offset: int) -> Chunk:
        return build_chunk(
            messages,
            offset=offset,
            eligible_end=end + 1,
            budget_tokens=EXPAND_TOKEN_BUDGET,
            expand_tools={},
        )

    chunk = chunk_from(start)
    if chunk.is_empty:
        # Nothing in the range is shown compactly (a lone tool result, harness
        # noise): every stored message can still be read, one line per part.
        return _verbose(messages, session_id, start, end, settings)
    count = chunk.end - chunk.start + 1
    text = (
        f"Messages {chunk.start}-{chunk.end} ({count} messages, "
        f"~{estimate_tokens(chunk.text)} tokens):\n\n{chunk.text}"
    )
    last = min(end, messages[-1].ordinal)
    if chunk.end < last and not chunk_from(chunk.end + 1).is_empty:
        text += (
            f"\n\nTruncated after message {chunk.end}: message {chunk.end + 1} would pass the "
            f"~{EXPAND_TOKEN_BUDGET}-token budget of one answer. "
            f"Run `{PROG} expand --session {session_id} {chunk.end + 1} {end}` for more."
        )
    return text


def _clean(text: str) -> str:
    """``text`` with no escape sequence or control character on any line."""
    return "\n".join(clean_line(line) for line in text.split("\n"))


def _preview(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


def _verbose(
    messages: Sequence[Message], session_id: str, start: int, end: int, settings: Settings
) -> str:
    blocks: list[str] = []
    used = 0
    last = start
    for message in messages:
        lines = [f"[{message.ordinal}] {role_letter(message.role)} ({message.role})"]
        for part in message.parts:
            if isinstance(part, TextPart):
                if part.text.strip():
                    lines.append(f"    • {_preview(part.text, 200)}")
                continue
            expansion = expand_tool(part.name, part.input, part.output, settings.expand_tools)
            if expansion is not None:
                lines.append(f"    • tool {part.name}: {expansion}")
                continue
            summary = tool_summary(part)
            call = summary[4:] if summary.startswith("TC: ") else summary
            if not call.startswith(part.name):
                call = f"{part.name}({call})"  # a description stands in for the key argument
            cost = estimate_tokens(part.output) if part.output else 0
            lines.append(f"    • tool {call} → output ~{cost} tok")
        block = "\n".join(lines)
        cost = estimate_tokens(block)
        if blocks and used + cost > EXPAND_TOKEN_BUDGET:
            break
        blocks.append(block)
        used += cost
        last = message.ordinal
    header = (
        f"Messages {start}-{last} (verbose). Recover any one in full with "
        f"`{PROG} expand --session {session_id} --message <ordinal>`:"
    )
    text = header + "\n\n" + "\n\n".join(blocks)
    if last < min(end, messages[-1].ordinal):
        text += (
            f"\n\nTruncated after message {last}: message {last + 1} would pass the "
            f"~{EXPAND_TOKEN_BUDGET}-token budget of one answer. "
            f"Run `{PROG} expand --session {session_id} --verbose {last + 1} {end}` for more."
        )
    return text
