"""The historian's input: settled messages as compact ``U:``/``A:``/``TC:`` lines.

The historian never reads raw transcripts. It reads a *chunk*: consecutive
messages after the last compartment, condensed to one line per block of
same-role messages (``[12-15] A: I will inspect / TC: read(src/lib.rs)``), with
commit hashes pulled to the front, noise folded into the next block, and tool
calls summarised or expanded through ``expand_tools`` templates. This module
builds that text and checks its coverage; how each message reads on a line is
:mod:`karni_historian.condense.message_text`'s, and where the settled messages
end :mod:`karni_historian.condense.boundaries`'. The format and every rule are
in ``docs/historian/chunk.md``.

``expand_tools=None`` means the built-in templates; pass ``{}`` for none.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from karni_historian.budget import estimate_tokens
from karni_historian.condense.message_text import (
    collapse,
    extract_commits,
    role_letter,
    tool_summary,
)
from karni_historian.errors import ChunkCoverageError
from karni_historian.model import Message, TextPart, ToolPart
from karni_historian.prompts import clean_prompt_part
from karni_historian.templates import BUILTIN_TEMPLATES, expand_tool

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

__all__ = [
    "MAX_COMMITS_PER_BLOCK",
    "TRUNCATION_MARKER",
    "Chunk",
    "ChunkBuilder",
    "ChunkCoverageError",
    "ChunkDigest",
    "ChunkLine",
    "build_chunk",
    "check_coverage",
]

MAX_COMMITS_PER_BLOCK = 5
"""Most commit hashes shown on one block line."""

TRUNCATION_MARKER = "\n[… tokens truncated to fit the historian window …]"
"""Appended when the first block alone is larger than the chunk budget."""


@dataclass(slots=True, repr=False)
class ChunkLine:
    """One block of the chunk: consecutive same-role messages on one line.

    Attributes:
        start: First ordinal covered (absorbed noise included).
        end: Last ordinal covered.
        role: The role letter: ``U``, ``A``, or another upper-case letter.
        body: The joined parts without the prefix and commits.
        commits: Commit hashes on this block (at most 5).
        tool_only: True when the block is made only of tool summaries.
        ordinals: Ordinals of the messages that contributed to the block.
        text: The line as it appears in the chunk, ``[S-E] R: …`` (formatted
            from the other fields).
    """

    start: int
    end: int
    role: str
    body: str
    commits: tuple[str, ...] = ()
    tool_only: bool = False
    ordinals: tuple[int, ...] = ()
    text: str = field(init=False)

    def __post_init__(self) -> None:
        """Format ``text`` from the other fields."""
        self.text = _format_line(self.start, self.end, self.role, self.body, self.commits)

    def __repr__(self) -> str:
        """Show the line."""
        return f"ChunkLine({self.text!r})"


@dataclass(slots=True, repr=False)
class Chunk:
    r"""The historian's input for one run; built by :func:`build_chunk`.

    Attributes:
        text: The chunk text: lines joined by ``\\n`` (maybe truncated).
        start: The first ordinal the chunk claims (the run's offset).
        end: The last ordinal covered by an emitted line (``start - 1`` if none).
        has_more: Eligible messages remain after ``end``.
        commit_clusters: Commit clusters among the emitted lines.
        tool_only_ranges: Merged ``(start, end)`` ranges of tool-only blocks.
        lines: The emitted lines, in order.
        token_estimate: The estimated tokens of ``text``.
        truncated: True when pre-flight truncation cut ``text``.
        digest: What the builder read of the range's messages, when it built
            the chunk (not compared).
    """

    text: str
    start: int
    end: int
    has_more: bool
    commit_clusters: int
    tool_only_ranges: tuple[tuple[int, int], ...]
    lines: tuple[ChunkLine, ...]
    token_estimate: int
    truncated: bool = False
    digest: ChunkDigest | None = field(default=None, compare=False)

    @property
    def is_empty(self) -> bool:
        """True when no line was emitted."""
        return not self.lines

    def __repr__(self) -> str:
        """Show the range and size."""
        return f"Chunk({self.start}-{self.end}, lines={len(self.lines)}, has_more={self.has_more})"


class ChunkDigest:
    """What the chunk builder read of each message, kept for the historian's own passes.

    The builder walks every part of every message of its range; the built-in
    historian reads the same messages again and needs some of what it
    worked out (``docs/historian/chunk.md``). Valid for the messages in
    :attr:`messages` only: a reader checks that it holds those objects.

    Attributes:
        messages: The messages of the chunk's range, in order, as read.
        user_texts: The meaningful text of each user message among them, by
            ordinal (:func:`meaningful_user_text`).
    """

    __slots__ = ("messages", "user_texts")

    def __init__(self) -> None:
        """Start with no message read."""
        self.messages: list[Message] = []
        self.user_texts: dict[int, str] = {}

    def read(self, message: Message, parts: list[_Shown], *, has_text: bool) -> None:
        """Keep ``message``, with its shown parts as the builder found them."""
        self.messages.append(message)
        if message.role == "user":  # its shown text parts are what meaningful_user_text joins
            shown = (
                [t for k, t, _c in parts if k == "text" and isinstance(t, str)] if has_text else []
            )
            self.user_texts[message.ordinal] = " / ".join(shown)

    def covers(self, messages: Sequence[Message]) -> bool:
        """Whether ``messages`` are the first ones read, the same objects in the same order."""
        return self.messages[: len(messages)] == messages  # an identity check per item first


def _format_line(start: int, end: int, role: str, body: str, commits: Sequence[str]) -> str:
    span = f"[{start}]" if start == end else f"[{start}-{end}]"
    if commits:
        return f"{span} {role}: commits: {', '.join(commits)} {body}"
    return f"{span} {role}: {body}"


class _Block:
    __slots__ = ("call_ids", "commits", "end", "has_text", "ordinals", "parts", "role", "start")

    def __init__(self, start: int, role: str) -> None:
        self.start = start
        self.end = start
        self.role = role
        self.parts: list[str] = []
        self.commits: list[str] = []
        self.has_text = False
        self.call_ids: set[str] = set()
        self.ordinals: list[int] = []

    def line(self) -> ChunkLine:
        return ChunkLine(
            self.start,
            self.end,
            self.role,
            " / ".join(self.parts),
            tuple(self.commits),
            tool_only=not self.has_text,
            ordinals=tuple(self.ordinals),
        )


_Shown = tuple[str, "str | ToolPart", str]
"""``(kind, text, call_id)`` of a message part, or ``(summary, tool part, call_id)``."""


def _message_parts(
    message: Message, templates: Mapping[str, Any] | None, expand_tool: Callable[..., str | None]
) -> tuple[list[_Shown], bool, bool]:
    """Return ``(kind, text, call_id)`` parts in order, whether any text and any summary exist.

    ``kind`` is ``text``, ``expanded`` (always shown) or ``summary`` (shown only
    when the message has no text). A summary carries its tool part instead of
    its text, written only if it is shown (:func:`_fill_block`): most are not.
    A tool without a template is not handed to ``expand_tool``, which would
    give None for it.
    """
    user = message.role == "user"
    parts: list[_Shown] = []
    has_text = has_summary = False
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.ignored:
                continue
            text = clean_prompt_part(part.text) if user else collapse(part.text)
            if text:
                parts.append(("text", text, ""))
                has_text = True
        elif isinstance(part, ToolPart):
            template = templates.get(part.name) if templates else None
            expansion = (
                expand_tool(part.name, part.input, part.output, templates)
                if isinstance(template, str)
                else None
            )
            if expansion is not None:
                parts.append(("expanded", f"TC: {expansion}", part.call_id))
            else:
                parts.append(("summary", part, part.call_id))
                has_summary = True
    return parts, has_text, has_summary


def build_chunk(
    messages: Iterable[Message],
    *,
    offset: int,
    eligible_end: int,
    budget_tokens: int,
    expand_tools: Mapping[str, str | bool] | None = None,
    estimate: Callable[[str], int] = estimate_tokens,
) -> Chunk:
    """Build the chunk for ``offset <= ordinal < eligible_end`` (``docs/historian/chunk.md``).

    Args:
        messages: The session's messages in ordinal order (a superset of the
            range is fine; messages outside it are skipped). It is read only
            until the chunk is full, so it may be a lazy iterator.
        offset: The first ordinal to read, usually the last compartment's end + 1.
        eligible_end: The exclusive end: the protected tail's first ordinal.
        budget_tokens: The chunk token budget (see
            :func:`karni_historian.budget.historian_chunk_tokens`).
        expand_tools: The resolved template map; ``None`` for the built-ins.
        estimate: The token estimator.

    Returns:
        The chunk. Its ``text`` is empty when nothing in the range is readable.
    """
    builder = ChunkBuilder(
        offset=offset,
        eligible_end=eligible_end,
        budget_tokens=budget_tokens,
        expand_tools=expand_tools,
        estimate=estimate,
        digest=True,
    )
    for message in messages:
        if not builder.read(message):
            break
    return builder.chunk()


class ChunkBuilder:
    """:func:`build_chunk` one message at a time, for a reader that needs the messages for more.

    Feed it the session's messages in order with :meth:`read` until it
    returns False (the chunk is full), then take :meth:`chunk`. The arguments
    are :func:`build_chunk`'s; with ``digest`` the chunk carries a
    :class:`ChunkDigest`, which holds the messages of its range (as
    :func:`build_chunk` does: its chunk goes to a historian with them).
    """

    def __init__(
        self,
        *,
        offset: int,
        eligible_end: int,
        budget_tokens: int,
        expand_tools: Mapping[str, str | bool] | None = None,
        estimate: Callable[[str], int] = estimate_tokens,
        digest: bool = False,
    ) -> None:
        """Start with no line."""
        self.templates: Mapping[str, Any] = (
            BUILTIN_TEMPLATES if expand_tools is None else expand_tools
        )
        self.expand_tool = expand_tool
        self.offset = offset
        self.eligible_end = eligible_end
        self.budget = budget_tokens
        self.estimate = estimate
        self.newline_cost = estimate("\n")
        self.lines: list[ChunkLine] = []
        self.total = 0
        self.clusters = 0
        self.stopped = False
        self.block: _Block | None = None
        self.pending_noise: int | None = None
        self.furthest = offset - 1
        self.last_ordinal = 0
        self.digest = ChunkDigest() if digest else None

    def read(self, message: Message) -> bool:
        """Take the next message; False once the budget is full (read no more)."""
        ordinal = message.ordinal
        if ordinal > self.last_ordinal:
            self.last_ordinal = ordinal
        if self.offset <= ordinal < self.eligible_end:
            return self.add(message, self.templates)
        return True

    def chunk(self) -> Chunk:
        """The chunk of the messages read."""
        return self.finish(self.eligible_end)

    def _emit(self, block: _Block) -> bool:
        """Add the block's line when it fits the budget (the first line always does)."""
        line = block.line()
        cost = self.estimate(line.text) + (self.newline_cost if self.lines else 0)
        if self.total + cost > self.budget and self.total > 0:
            return False
        if line.role == "A" and line.commits and (not self.lines or self.lines[-1].role != "A"):
            self.clusters += 1
        self.lines.append(line)
        self.total += cost
        return True

    def add(self, message: Message, templates: Mapping[str, Any]) -> bool:
        """Read one message of the range; False when the budget stopped the chunk."""
        ordinal = message.ordinal
        parts, has_text, has_summary = _message_parts(message, templates, self.expand_tool)
        self.furthest = ordinal
        digest = self.digest
        if digest is not None:
            digest.read(message, parts, has_text=has_text)
        if message.role == "system" or not parts:
            if self.pending_noise is None:
                self.pending_noise = ordinal  # noise is folded into the next block
            return True
        tool_results = message.role == "user" and not has_text
        role = "A" if tool_results else role_letter(message.role)
        if has_text and has_summary:  # a message with text shows no tool summary
            parts = [(k, t, c) for k, t, c in parts if k != "summary"]
        block = self._block_for(ordinal, role)
        if block is None:
            return False
        self.pending_noise = None
        block.end = ordinal
        block.ordinals.append(ordinal)
        _fill_block(block, parts, assistant=message.role == "assistant", results=tool_results)
        return True

    def _block_for(self, ordinal: int, role: str) -> _Block | None:
        """The open block when the message continues it, else a new one; None when full."""
        first = ordinal if self.pending_noise is None else self.pending_noise
        block = self.block
        if block is not None and block.role == role and first == block.end + 1:
            return block
        if block is not None and not self._emit(block):
            self.stopped = True
            self.block = None
            return None
        self.block = _Block(first, role)
        return self.block

    def finish(self, eligible_end: int) -> Chunk:
        """Emit the open block and assemble the chunk."""
        if self.block is not None and not self.stopped and not self._emit(self.block):
            self.stopped = True
        lines = self.lines
        text = "\n".join(line.text for line in lines)
        token_estimate = self.estimate(text) if text else 0
        truncated = bool(text) and token_estimate > self.budget
        if truncated:
            text = _truncate(text, self.budget, self.estimate)
            token_estimate = self.estimate(text)
        last_emitted = lines[-1].end if lines else self.offset - 1
        reached = max(last_emitted, self.furthest)
        return Chunk(
            text=text,
            start=self.offset,
            end=last_emitted,
            has_more=self.stopped or reached < min(eligible_end - 1, self.last_ordinal),
            commit_clusters=self.clusters,
            tool_only_ranges=_merge_ranges([(ln.start, ln.end) for ln in lines if ln.tool_only]),
            lines=tuple(lines),
            token_estimate=token_estimate,
            truncated=truncated,
            digest=self.digest,
        )


def _fill_block(block: _Block, parts: list[_Shown], *, assistant: bool, results: bool) -> None:
    """Append a message's shown parts to its block, pulling commit hashes out of its text."""
    for kind, shown, call_id in parts:
        if kind == "text":
            assert isinstance(shown, str)
            if block.role == "A" and assistant:
                shown, hashes = extract_commits(shown)
                for h in hashes:
                    if h not in block.commits and len(block.commits) < MAX_COMMITS_PER_BLOCK:
                        block.commits.append(h)
            block.has_text = True
        elif call_id:
            if results and call_id in block.call_ids:
                continue  # the call was already summarised in this block
            block.call_ids.add(call_id)
        block.parts.append(shown if isinstance(shown, str) else tool_summary(shown))


def _merge_ranges(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    merged: list[tuple[int, int]] = []
    for start, end in ranges:
        if merged and start == merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return tuple(merged)


def _truncate(text: str, budget: int, estimate: Callable[[str], int]) -> str:
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate(text[:mid] + TRUNCATION_MARKER) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + TRUNCATION_MARKER


def check_coverage(chunk: Chunk) -> None:
    """Check that the chunk's lines run consecutively from its start to its end.

    Args:
        chunk: A chunk from :func:`build_chunk`.

    Raises:
        ChunkCoverageError: ``chunk omits raw message X while still claiming
            coverage through E``, or ``chunk coverage ends at X but chunk end is E``.
    """
    expected = chunk.start
    for line in chunk.lines:
        if line.start != expected:
            raise ChunkCoverageError(
                f"chunk omits raw message {expected} while still claiming coverage through "
                f"{chunk.end}"
            )
        expected = line.end + 1
    if expected - 1 != chunk.end:
        raise ChunkCoverageError(
            f"chunk coverage ends at {expected - 1} but chunk end is {chunk.end}"
        )
