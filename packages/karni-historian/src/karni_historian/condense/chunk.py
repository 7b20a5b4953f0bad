"""The historian's input: settled messages as compact ``U:``/``A:``/``TC:`` lines.

The historian never reads raw transcripts. It reads a *chunk*: consecutive
messages after the last compartment, condensed to one line per block of
same-role messages (``[12-15] A: I will inspect / TC: read(src/lib.rs)``), with
commit hashes pulled to the front, noise folded into the next block, and tool
calls summarised or expanded through ``expand_tools`` templates. This module
builds that text, checks its coverage, and finds where the protected tail and
the ``wrapup`` boundary start, so a run knows which messages are settled. The
format and every rule are in ``docs/historian/chunk.md``.

``expand_tools=None`` means the built-in templates; pass ``{}`` for none.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from karni_historian.budget import estimate_tokens, tokens_for_length
from karni_historian.condense.prose import rules_out
from karni_historian.errors import ChunkCoverageError
from karni_historian.model import Message, TextPart, ToolPart
from karni_historian.prompts import (
    INTERNAL_INITIATOR_MARKER,
    clean_prompt_part,
    prompt_text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

__all__ = [
    "INTERNAL_INITIATOR_MARKER",
    "MAX_COMMITS_PER_BLOCK",
    "PROTECTED_TAIL_USER_TURNS",
    "TRUNCATION_MARKER",
    "WRAPUP_ALLOWANCE",
    "ArcIndex",
    "Chunk",
    "ChunkCoverageError",
    "ChunkDigest",
    "ChunkLine",
    "arcs_of_calls",
    "build_chunk",
    "check_coverage",
    "completed_arcs",
    "fence_arcs",
    "fence_boundary",
    "is_meaningful_user_message",
    "keep_boundary",
    "meaningful_user_text",
    "protected_tail_start",
    "raw_tokens",
    "role_letter",
    "tail_start",
    "tool_summary",
    "wrapup_boundary",
]

MAX_COMMITS_PER_BLOCK = 5
"""Most commit hashes shown on one block line."""

PROTECTED_TAIL_USER_TURNS = 5
"""Meaningful user turns kept raw at the end of a session."""

TRUNCATION_MARKER = "\n[… tokens truncated to fit the historian window …]"
"""Appended when the first block alone is larger than the chunk budget."""

_KEY_ARGS_CUT = ("filePath", "file_path", "notebook_path", "path", "pattern", "query")
_KEY_ARGS_WHOLE = ("symbol", "module", "action")

_RE: dict[str, re.Pattern[str]] = {}


def _regex(name: str) -> re.Pattern[str]:
    pattern = _RE.get(name)
    if pattern is None:
        import re

        _RE["hash"] = re.compile(r"`?\b([0-9a-f]{7,12})\b`?", re.I)
        _RE["verb"] = re.compile(
            r"\b(commit(ted|ting|s)?|cherry-?pick(ed|ing|s)?|merge[ds]?|merging|rebas(e|ed|es|ing))\b",
            re.I,
        )
        _RE["parens"] = re.compile(r"\(\s*\)")
        _RE["space_comma"] = re.compile(r"\s+,")
        _RE["commas"] = re.compile(r",\s*,+")
        _RE["spaces"] = re.compile(r"\s{2,}")
        _RE["space_punct"] = re.compile(r"\s+([,.;:])")
        pattern = _RE[name]
    return pattern


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


_ROLE_LETTERS = {"assistant": "A", "user": "U"}


def role_letter(role: str) -> str:
    """The chunk's letter for a role: ``A`` for assistant, ``U`` for user, else its initial."""
    return _ROLE_LETTERS.get(role) or (role[:1].upper() or "?")


def _format_line(start: int, end: int, role: str, body: str, commits: Sequence[str]) -> str:
    span = f"[{start}]" if start == end else f"[{start}-{end}]"
    if commits:
        return f"{span} {role}: commits: {', '.join(commits)} {body}"
    return f"{span} {role}: {body}"


def _collapse(text: str) -> str:
    return " ".join(text.split())


def meaningful_user_text(message: Message) -> str:
    """Return the meaningful text of a user message, parts joined by `` / ``.

    Ignored parts, ``<system-reminder>`` blocks, the internal-initiator marker
    and harness directives are not meaningful (``docs/historian/chunk.md``).

    Args:
        message: Any message.

    Returns:
        The cleaned text, or ``""`` for non-user messages and messages with
        nothing meaningful.
    """
    if message.role != "user":
        return ""
    return prompt_text(
        [part.text for part in message.parts if isinstance(part, TextPart) and not part.ignored]
    )


def is_meaningful_user_message(message: Message) -> bool:
    """Tell whether ``message`` is a user turn with meaningful text (``docs/historian/chunk.md``).

    Args:
        message: Any message.

    Returns:
        True for a user message with at least one meaningful text part.
    """
    if message.role != "user":
        return False
    for part in message.parts:
        if isinstance(part, TextPart) and not part.ignored and clean_prompt_part(part.text):
            return True
    return False


def tool_summary(part: ToolPart) -> str:
    """Return the compact ``TC:`` summary of a tool call (the legacy form).

    Args:
        part: The tool call.

    Returns:
        ``TC: <description>`` when the input or metadata has one, else
        ``TC: tool(keyArg)`` when a key argument is a string, else ``TC: tool``.
    """
    data = part.input if isinstance(part.input, dict) else {}
    meta = part.metadata if isinstance(part.metadata, dict) else {}
    for source in (data, meta):
        description = source.get("description")
        if isinstance(description, str) and description.strip():
            return f"TC: {_collapse(description)}"
    for key in _KEY_ARGS_CUT:
        value = data.get(key)
        if isinstance(value, str):
            value = _collapse(value)
            if len(value) > 60:
                value = value[:60] + "…"
            return f"TC: {part.name}({value})"
    for key in _KEY_ARGS_WHOLE:
        value = data.get(key)
        if isinstance(value, str):
            return f"TC: {part.name}({_collapse(value)})"
    return f"TC: {part.name}"


_VERB_LITERALS = ("commit", "cherry", "merg", "rebas")
"""What lower-cased ASCII text holds when the ``verb`` pattern matches it."""


def _extract_commits(text: str) -> tuple[str, list[str]]:
    if rules_out(text, _VERB_LITERALS):
        return text, []  # no verb: no commit, whatever hashes it names
    hash_re = _regex("hash")
    found = hash_re.findall(text)
    if not found or not _regex("verb").search(text):
        return text, []
    hashes: list[str] = []
    for h in found:
        h = h.lower()
        if h not in hashes:
            hashes.append(h)
    cleaned = hash_re.sub("", text)
    cleaned = _regex("parens").sub("", cleaned)
    cleaned = _regex("space_comma").sub(",", cleaned)
    cleaned = _regex("commas").sub(", ", cleaned)
    cleaned = _regex("spaces").sub(" ", cleaned)
    cleaned = _regex("space_punct").sub(r"\1", cleaned).strip()
    return (cleaned or text), hashes


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
            text = clean_prompt_part(part.text) if user else _collapse(part.text)
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
        from karni_historian.templates import BUILTIN_TEMPLATES, expand_tool

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
                shown, hashes = _extract_commits(shown)
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


def raw_tokens(message: Message, estimate: Callable[[str], int] = estimate_tokens) -> int:
    """Estimate the true-raw tokens of a message, tool inputs and outputs included.

    Args:
        message: Any message.
        estimate: The token estimator.

    Returns:
        The estimated tokens of every text part, tool input (as JSON) and output.
    """
    import json

    from karni_historian.fastjson import spaced_length

    total = 0
    for part in message.parts:
        if isinstance(part, TextPart):
            total += estimate(part.text)
        else:
            try:
                if estimate is estimate_tokens:  # a length is enough: no text to build
                    total += tokens_for_length(spaced_length(part.input))
                else:
                    total += estimate(json.dumps(part.input, ensure_ascii=False, default=str))
            except (TypeError, ValueError):
                total += estimate(str(part.input))
            if part.output:
                total += estimate(part.output)
    return total


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
        from itertools import pairwise

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
        from bisect import bisect_right

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
