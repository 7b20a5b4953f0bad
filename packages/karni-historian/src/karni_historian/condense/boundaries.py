"""Where the settled messages end: the protected tail, the tool arcs, the ``wrapup`` boundary.

A run condenses only settled messages: those before the last five
meaningful user turns (the protected tail), or, for ``wrapup KEEP``, before
the newest KEEP messages. A boundary never splits a tool call from its
result (a completed *arc*), so it moves to a place none straddles
(``docs/historian/chunk.md``).
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import pairwise

from karni_historian.condense.message_text import is_meaningful_user_message
from karni_historian.model import ToolPart

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from karni_historian.model import Message

__all__ = [
    "LONG_ARC",
    "PROTECTED_TAIL_USER_TURNS",
    "WRAPUP_ALLOWANCE",
    "ArcIndex",
    "arcs_of_calls",
    "completed_arcs",
    "fence_arcs",
    "fence_boundary",
    "keep_boundary",
    "protected_tail_start",
    "tail_start",
    "wrapup_boundary",
]

PROTECTED_TAIL_USER_TURNS = 5
"""Meaningful user turns kept raw at the end of a session."""


def protected_tail_start(
    messages: Sequence[Message], turns: int = PROTECTED_TAIL_USER_TURNS
) -> int:
    """Return the first ordinal of the protected tail (``docs/historian/chunk.md``).

    The tail starts at the ``turns``-th meaningful user message from the end;
    messages before it are settled. With fewer such messages nothing is
    settled and 1 is returned.

    Args:
        messages: The session's messages in ordinal order.
        turns: Meaningful user turns kept raw (5).

    Returns:
        The exclusive end of the eligible range (``eligible_end``).
    """
    if turns <= 0:
        return (messages[-1].ordinal + 1) if messages else 1
    return tail_start(reversed(messages), turns)


def tail_start(newest_first: Iterable[Message], turns: int) -> int:
    """:func:`protected_tail_start` (``turns`` positive) from the messages newest first.

    Reads only until the ``turns``-th meaningful user message, so the
    messages may come from the store lazily.
    """
    seen = 0
    for message in newest_first:
        if is_meaningful_user_message(message):
            seen += 1
            if seen == turns:
                return message.ordinal
    return 1


def completed_arcs(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """Return ``(call, result)`` ordinal pairs of tool calls answered in a later message.

    A call is an assistant :class:`~karni_historian.model.ToolPart` with a
    ``call_id``; its result is the first later message holding a tool part
    with the same ``call_id``. Calls whose result is in the same message, or
    missing (open calls), form no arc.

    Args:
        messages: The session's messages in ordinal order.

    Returns:
        Arcs sorted by call ordinal.
    """
    return arcs_of_calls(
        (message.ordinal, message.role, part.call_id)
        for message in messages
        for part in message.parts
        if isinstance(part, ToolPart) and part.call_id
    )


LONG_ARC = 16
"""A call answered more messages later than this fences nothing: what lies between is other work.

A subagent's messages sit between its ``Task`` call and the call's result
(hundreds of them, with their own calls and results); fencing the whole
stretch would keep a boundary from falling anywhere inside it. Parallel
calls answered one result per message stay well under this.
"""


def fence_arcs(arcs: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The arcs a boundary must not split: all but those longer than :data:`LONG_ARC`."""
    return [(call, result) for call, result in arcs if result - call <= LONG_ARC]


def arcs_of_calls(calls: Iterable[tuple[int, str, str]]) -> list[tuple[int, int]]:
    """:func:`completed_arcs` from the ``(ordinal, role, call_id)`` of every tool part, in order.

    What the store can list without decoding the messages
    (:meth:`karni_historian.store.Store.tool_part_calls`).
    """
    open_calls: dict[str, int] = {}
    arcs: list[tuple[int, int]] = []
    for ordinal, role, call_id in calls:
        start = open_calls.get(call_id)
        if start is not None and start < ordinal:
            arcs.append((start, ordinal))
            del open_calls[call_id]
        elif start is None and role == "assistant":
            open_calls[call_id] = ordinal
    arcs.sort()
    return arcs


class ArcIndex(tuple[tuple[int, int], ...]):
    """Completed tool arcs sorted by call, asked which arc an end splits in logarithmic time.

    A run asks that of every chunk it validates; scanning all the session's
    arcs each time would make a long session's run quadratic. It is the
    tuple of the arcs, as :func:`arcs_of_calls` returns them.
    """

    _calls: list[int]
    _reach: list[int]

    def __new__(cls, arcs: Iterable[tuple[int, int]]) -> ArcIndex:
        """Index ``arcs``, which must be sorted by call (as :func:`arcs_of_calls` sorts them)."""
        index = super().__new__(cls, arcs)
        calls = [call for call, _result in index]
        if any(a > b for a, b in pairwise(calls)):
            raise ValueError("tool arcs must be sorted by their call's ordinal")
        reach, furthest = [], -1
        for _call, result in index:
            furthest = max(furthest, result)
            reach.append(furthest)
        index._calls, index._reach = calls, reach  # the furthest result among the arcs so far
        return index

    def splitting(self, end: int) -> tuple[int, int] | None:
        """The first arc with ``call <= end < result``, or None.

        The first arc whose result lies after ``end`` is the first whose
        furthest result so far does; it splits ``end`` when its call is not
        after it, and no later arc (called later still) can.
        """
        index = bisect_right(self._reach, end)
        if index < len(self) and self._calls[index] <= end:
            return self[index]
        return None


def fence_boundary(boundary: int, arcs: Sequence[tuple[int, int]]) -> int:
    """Move a tail boundary back so it never splits a completed tool arc.

    Args:
        boundary: The first ordinal of the tail.
        arcs: Completed ``(call, result)`` arcs (see :func:`completed_arcs`).

    Returns:
        The boundary, moved back to the call of any arc it would split.
    """
    moved = True
    while moved:
        moved = False
        for call, result in arcs:
            if call < boundary <= result:
                boundary = call
                moved = True
    return boundary


WRAPUP_ALLOWANCE = 3
"""Messages past the newest KEEP the ``wrapup`` boundary may move to end on a clean place."""


def wrapup_boundary(messages: Sequence[Message], keep: int, *, floor: int = 1) -> int:
    """Return the first ordinal ``wrapup KEEP`` leaves raw (``docs/historian/chunk.md``).

    The newest ``keep`` messages of any role stay raw: the boundary is the
    first of them, moved at most :data:`WRAPUP_ALLOWANCE` messages later to a
    place no tool call and its result straddle, else back to the nearest such
    place.

    Args:
        messages: The session's messages in ordinal order.
        keep: Raw messages to keep (positive).
        floor: The first ordinal still to condense (after the last compartment).

    Returns:
        The exclusive end of the range to condense (1 when nothing is eligible).
    """
    if not messages:
        return 1
    return keep_boundary(messages[-1].ordinal, keep, completed_arcs(messages), floor=floor)


def keep_boundary(
    last_ordinal: int, keep: int, arcs: Sequence[tuple[int, int]], *, floor: int = 1
) -> int:
    """:func:`wrapup_boundary` from the session's last ordinal and its tool arcs."""
    target = max(last_ordinal - keep + 1, floor)
    fences = fence_arcs(arcs)
    index = ArcIndex(fences)
    for boundary in range(target, min(target + WRAPUP_ALLOWANCE, last_ordinal) + 1):
        if index.splitting(boundary - 1) is None:
            return boundary
    return fence_boundary(target, fences)
