"""The episode scan of the built-in historian: where a chunk's lines split into episodes.

A new episode starts at a meaningful user turn that opens a new task, where
the phase of work changes (a todo item starts), after a commit, or when an
episode has grown past :data:`MAX_EPISODE_LINES`; acknowledgements,
follow-ups and corrections stay in the current one. Episodes tile the chunk.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import replace
from itertools import pairwise

from karni_historian.condense.boundaries import completed_arcs, fence_arcs
from karni_historian.condense.extractive.sentences import is_ack, opens_as_continuation
from karni_historian.condense.message_text import meaningful_user_text
from karni_historian.condense.work_phases import phase_starts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from karni_historian.condense.chunk import Chunk, ChunkLine
    from karni_historian.model import Message

__all__ = [
    "MAX_EPISODE_LINES",
    "by_ordinal_of",
    "episodes",
    "phase_lines",
    "split_episodes",
    "user_texts",
]

MAX_EPISODE_LINES = 40
"""An episode longer than this closes at the next real user request."""


def user_texts(by_ordinal: dict[int, Message], chunk: Chunk | None = None) -> dict[int, str]:
    """The meaningful text of each user message, by ordinal: asked about more than once.

    The chunk's digest has them when the chunk was built from these messages.
    """
    digest = chunk.digest if chunk is not None else None
    if digest is not None and digest.covers(list(by_ordinal.values())):
        return digest.user_texts

    return {o: meaningful_user_text(m) for o, m in by_ordinal.items() if m.role == "user"}


def _pieces(line: ChunkLine, cuts: Sequence[int], by_ordinal: dict[int, Message]) -> list[Any]:
    """``line`` cut at ``cuts``, the phase starts inside it; each piece keeps its own commits."""
    bounds = [line.start, *cuts, line.end + 1]
    pieces = []
    for first, after in pairwise(bounds):
        ordinals = tuple(o for o in line.ordinals if first <= o < after)
        texts = " ".join(
            getattr(p, "text", "") or getattr(p, "output", "") or ""
            for o in ordinals
            if o in by_ordinal
            for p in by_ordinal[o].parts
        )
        commits = tuple(h for h in line.commits if h in texts)
        pieces.append(replace(line, start=first, end=after - 1, ordinals=ordinals, commits=commits))
    return pieces


def phase_lines(
    chunk: Chunk, by_ordinal: dict[int, Message]
) -> tuple[list[ChunkLine], dict[int, str]]:
    """The chunk's lines cut where the work changes phase, and the phases' todo items."""
    inside = [by_ordinal[o] for o in sorted(by_ordinal)]  # the chunk's own (by_ordinal_of)
    starts = phase_starts(inside, fence_arcs(completed_arcs(inside)))
    if not starts:
        return list(chunk.lines), starts

    ordered = sorted(starts)
    lines: list[ChunkLine] = []
    for line in chunk.lines:
        first = bisect_right(ordered, line.start)  # the starts after the line's first ordinal
        after = bisect_right(ordered, line.end, first)  # … through its last
        if first == after:
            lines.append(line)
        else:
            lines += _pieces(line, ordered[first:after], by_ordinal)
    return lines, starts


def episodes(chunk: Chunk, messages: Sequence[Message]) -> list[list[ChunkLine]]:
    """Split the chunk's lines into episodes where the objective or the phase of work changes.

    Args:
        chunk: The chunk to condense.
        messages: The raw messages behind it (any superset).

    Returns:
        Consecutive groups of lines; together they cover exactly the chunk's
        lines (a line is cut in two where a phase of work starts inside it).
    """
    by_ordinal = by_ordinal_of(messages, chunk)
    return split_episodes(by_ordinal, user_texts(by_ordinal), *phase_lines(chunk, by_ordinal))


def by_ordinal_of(messages: Sequence[Message], chunk: Chunk) -> dict[int, Message]:
    """The chunk's messages by ordinal: nothing outside it is read."""
    start, end = chunk.start, chunk.end
    return {m.ordinal: m for m in messages if start <= m.ordinal <= end}


def split_episodes(
    by_ordinal: dict[int, Message],
    texts: dict[int, str],
    lines: list[ChunkLine],
    starts: dict[int, str],
) -> list[list[ChunkLine]]:
    """The phase-cut ``lines`` in episodes: a new one where a user turn opens a new task."""
    groups: list[list[ChunkLine]] = []
    current: list[ChunkLine] = []
    committed = False
    answered = False  # whether a line of the current episode is not the user's
    for line in lines:
        new_task = current and line.start in starts
        if line.role == "U" and answered:
            text = _line_text(line, by_ordinal, texts)
            ack = is_ack(text)
            new_task = new_task or not (ack or opens_as_continuation(text))
            if not ack and (committed or len(current) >= MAX_EPISODE_LINES):
                new_task = True
        if new_task:
            groups.append(current)
            current = []
            committed = answered = False
        current.append(line)
        if line.role != "U":
            answered = True
        if line.commits:
            committed = True
    if current:
        groups.append(current)
    return groups


def _line_text(line: ChunkLine, by_ordinal: dict[int, Message], texts: dict[int, str]) -> str:
    """The meaningful text of a user line's messages, joined; else the line's body."""
    ordinals = line.ordinals
    if len(ordinals) == 1:  # most lines: one message, nothing to join
        ordinal = ordinals[0]
        return (texts.get(ordinal, "") if ordinal in by_ordinal else "") or line.body
    return " ".join(texts.get(o, "") for o in ordinals if o in by_ordinal) or line.body
