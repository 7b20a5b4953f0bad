"""The historian's output format: writing, lenient parsing and strict validation.

Every historian, the built-in extractive one or a model, produces the same XML:
``<compartments>`` with four paraphrase tiers each, durable ``<facts>`` by
category, optional events, observations and primers, and a ``<meta>`` block
saying where processing stopped. This module reads that XML leniently
(:func:`parse`) and checks it against the chunk it was made from
(:func:`validate`), so nothing malformed ever reaches the store; writing it is
:mod:`karni_historian.condense.compartment_writer`'s. The
format and every rule, with its message, are in ``docs/historian/validation.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from karni_historian.errors import HistorianOutputError
from karni_historian.model import Compartment, Fact
from karni_historian.xml_text import unescape

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container, Iterable, Sequence
    from typing import Any

__all__ = [
    "FACT_CATEGORIES",
    "HEALING_SLACK",
    "INVALID_PREFIX",
    "Event",
    "HistorianOutputError",
    "ParsedOutput",
    "ValidationResult",
    "parse",
    "validate",
]

FACT_CATEGORIES = ("PROJECT_RULES", "ARCHITECTURE", "CONSTRAINTS", "CONFIG_VALUES", "NAMING")
"""The v2 project-memory categories a historian emits."""

HEALING_SLACK = 2
"""``HISTORIAN_BOUNDARY_HEALING_SLACK``: discard-last applies within this many messages."""

INVALID_PREFIX = "Historian returned invalid compartment output: "
"""Prefix of the range and ``<unprocessed_from>`` errors (validation steps 4–6)."""

NO_COMPARTMENTS = "Historian returned no usable compartments."
TERMINAL_SPLIT = "Historian terminal boundary splits a completed tool invocation/result arc"

_RE: dict[str, Any] = {}


def _re(name: str) -> Any:
    if not _RE:
        _RE.update(
            compartment=re.compile(r"<compartment\s+([^>]*?)\s*(?<!/)>(.*?)</compartment>", re.S),
            start=re.compile(r'(?:^|\s)start="(\d+)"'),
            end=re.compile(r'(?:^|\s)end="(\d+)"'),
            title=re.compile(r'(?:^|\s)title="([^"]*)"'),
            episode=re.compile(r'(?:^|\s)episode_type="([^"]*)"'),
            importance=re.compile(r'(?:^|\s)importance="(\d+)"'),
            close=re.compile(r"</p\d"),
            opener=re.compile(r"<p\d"),
            facts=re.compile(r"<facts>(.*?)</facts>", re.S),
            category=re.compile(r"<([A-Z][A-Z0-9_]*)>(.*?)</\1>", re.S),
            bullet=re.compile(r"^\s*\*\s*(.+)$", re.M),
            events=re.compile(r"<events>(.*?)</events>", re.S),
            event=re.compile(r'<(\w+)\s+at_compartment="(\d+)"\s*>(.*?)</\1>', re.S),
            field=re.compile(r"<(\w+)\s*>(.*?)</\1>|<(\w+)\s*/>", re.S),
            unprocessed=re.compile(r"<unprocessed_from>\s*(\d+)\s*</unprocessed_from>"),
            processed=re.compile(
                r"<messages_processed>\s*(\d+)\s*-\s*(\d+)\s*</messages_processed>"
            ),
            observations=re.compile(r"<user_observations>(.*?)</user_observations>", re.S),
            primers=re.compile(r"<primer_candidates>(.*?)</primer_candidates>", re.S),
            primer=re.compile(r'<primer\s+at_compartment="(\d+)"\s*>(.*?)</primer>', re.S),
            primer_bullet=re.compile(r"^\s*(?:\*|-|\d+\.)\s*(.+)$", re.M),
        )
    return _RE[name]


@dataclass(slots=True)
class Event:
    """A structured event anchored at a compartment of the same output.

    Attributes:
        kind: ``causal_incident`` or ``trajectory_correction`` (any tag is kept).
        at_compartment: 1-based index into the compartments of this output.
        fields: Child elements with non-empty text.
    """

    kind: str
    at_compartment: int
    fields: dict[str, str]


@dataclass(slots=True)
class ParsedOutput:
    """What :func:`parse` found in a historian response.

    Attributes:
        compartments: Compartments sorted by start; flat rows have ``p1 == ""``.
        facts: Facts by category, in order, deduplicated.
        events: Events inside ``<events>``.
        user_observations: ``*`` bullets of ``<user_observations>``.
        primer: The first primer candidate as ``(at_compartment, question)``.
        unprocessed_from: The ``<unprocessed_from>`` ordinal, if any.
        messages_processed: The ``<messages_processed>`` range, if any.
    """

    compartments: list[Compartment]
    facts: list[Fact]
    events: list[Event]
    user_observations: list[str]
    primer: tuple[int | None, str] | None
    unprocessed_from: int | None
    messages_processed: tuple[int, int] | None


@dataclass(slots=True)
class ValidationResult:
    """Output that passed validation, ready to publish.

    Attributes:
        compartments: The compartments to store, oldest first, tiling the range.
        facts: Facts to promote to project memory.
        events: Events whose ``at_compartment`` points at a kept compartment.
        user_observations: Observations to keep.
        primer: The primer candidate, if kept.
        unprocessed_from: Where the next run should start, or ``None`` when
            everything up to the chunk end was processed.
        discarded_last: True when the last compartment was dropped.
    """

    compartments: list[Compartment]
    facts: list[Fact]
    events: list[Event]
    user_observations: list[str]
    primer: tuple[int | None, str] | None
    unprocessed_from: int | None
    discarded_last: bool


def _tier(body: str, n: int) -> str | None:
    match = re.search(rf"<p{n}\s*(/?)>", body)
    if match is None:
        return None
    if match.group(1):
        return ""
    rest = body[match.end() :]
    close = _re("close").search(rest)
    if close is not None:
        rest = rest[: close.start()]
    opener = _re("opener").search(rest)
    if opener is not None:
        rest = rest[: opener.start()]
    return unescape(rest.strip())


def _parse_compartment(attrs: str, inner: str) -> Compartment | None:
    start = _re("start").search(attrs)
    end = _re("end").search(attrs)
    title = _re("title").search(attrs)
    if start is None or end is None or title is None or not title.group(1):
        return None
    episode = _re("episode").search(attrs)
    importance = _re("importance").search(attrs)
    kwargs: dict[str, Any] = {
        "start": int(start.group(1)),
        "end": int(end.group(1)),
        "title": unescape(title.group(1)),
        "episode_type": unescape(episode.group(1)) if episode else None,
        "importance": min(max(int(importance.group(1)), 1), 100) if importance else 50,
    }
    p1 = _tier(inner, 1)
    if p1:
        p2 = _tier(inner, 2)
        p3 = _tier(inner, 3)
        p4 = _tier(inner, 4)
        p2 = p1 if p2 is None else p2
        p3 = p2 if p3 is None else p3
        return Compartment(p1=p1, p2=p2, p3=p3, p4="" if p4 is None else p4, content=p1, **kwargs)
    content = unescape(inner.strip())
    if not content:
        return None
    return Compartment(content=content, **kwargs)


def _bullets(text: str) -> list[str]:
    return [m.strip() for m in _re("bullet").findall(text) if m.strip()]


def parse(xml: str) -> ParsedOutput:
    """Parse a historian response leniently (``docs/historian/validation.md``).

    Compartments are found anywhere by pattern, self-closing ones are ignored,
    and rows missing ``start``, ``end`` or a non-empty ``title`` are skipped.
    Missing tiers are filled: ``p2`` from ``p1``, ``p3`` from ``p2``, ``p4`` empty.
    A compartment without ``<p1>`` keeps its inner text as flat ``content``
    (which :func:`validate` rejects).

    Args:
        xml: The historian's response text.

    Returns:
        Everything found; never raises on malformed input.
    """
    text = xml or ""
    compartments = []
    for match in _re("compartment").finditer(text):
        row = _parse_compartment(match.group(1), match.group(2))
        if row is not None:
            compartments.append(row)
    compartments.sort(key=lambda c: c.start)
    unprocessed = _re("unprocessed").search(text)
    processed = _re("processed").search(text)
    return ParsedOutput(
        compartments=compartments,
        facts=_parse_facts(text),
        events=_parse_events(text),
        user_observations=_parse_observations(text),
        primer=_parse_primer(text),
        unprocessed_from=int(unprocessed.group(1)) if unprocessed else None,
        messages_processed=(int(processed.group(1)), int(processed.group(2)))
        if processed
        else None,
    )


def _parse_facts(text: str) -> list[Fact]:
    """Facts of ``<facts>``, or of category elements outside compartments and events."""
    block = _re("facts").search(text)
    if block is not None:
        source = block.group(1)
    else:
        source = _re("events").sub("", _re("compartment").sub("", text))
    facts: list[Fact] = []
    seen: set[tuple[str, str]] = set()
    for category, body in _re("category").findall(source):
        for line in _bullets(body):
            fact = (category, unescape(line))
            if fact not in seen:
                seen.add(fact)
                facts.append(Fact(*fact))
    return facts


def _parse_events(text: str) -> list[Event]:
    block = _re("events").search(text)
    if block is None:
        return []
    events = []
    for kind, at, body in _re("event").findall(block.group(1)):
        fields = {}
        for name, value, _empty in _re("field").findall(body):
            value = unescape(value.strip())
            if name and value:
                fields[name] = value
        events.append(Event(kind, int(at), fields))
    return events


def _parse_observations(text: str) -> list[str]:
    block = _re("observations").search(text)
    return [] if block is None else [unescape(b) for b in _bullets(block.group(1))]


def _parse_primer(text: str) -> tuple[int | None, str] | None:
    """The first primer candidate: an anchored ``<primer>``, else the first bullet."""
    block = _re("primers").search(text)
    if block is None:
        return None
    element = _re("primer").search(block.group(1))
    if element is not None:
        question = unescape(element.group(2).strip())
        return (int(element.group(1)), question) if question else None
    bullet = _re("primer_bullet").search(block.group(1))
    if bullet is not None and bullet.group(1).strip():
        return (None, unescape(bullet.group(1).strip()))
    return None


def _splits(boundary_end: int, arcs: Iterable[tuple[int, int]]) -> tuple[int, int] | None:
    """The completed arc that an end at ``boundary_end`` would cut, if any."""
    splitting = getattr(arcs, "splitting", None)  # an ArcIndex answers without a scan
    if splitting is not None:
        found: tuple[int, int] | None = splitting(boundary_end)
        return found
    for call, result in arcs:
        if call <= boundary_end < result:
            return call, result
    return None


def _present_ordinals(chunk: Any) -> Container[int]:
    """The ordinals the chunk's lines cover: one range when they follow each other."""
    lines = chunk.lines
    if lines:
        expected = lines[0].start
        for line in lines:
            if line.start != expected or line.end < line.start:
                break
            expected = line.end + 1
        else:
            return range(lines[0].start, expected)
    present: set[int] = set()
    for line in lines:
        present.update(range(line.start, line.end + 1))
    return present


def validate(
    parsed: ParsedOutput,
    chunk: Any,
    *,
    arcs: Sequence[tuple[int, int]] = (),
    emergency: bool = False,
    force_keep: bool = False,
) -> ValidationResult:
    """Check parsed output against its chunk and heal what can be healed.

    Steps, in order: no compartments; heal gaps that lie inside one tool-only
    range; extend a last compartment that splits a completed tool arc; map
    endpoints to the chunk's lines; tiers, ranges, order and contiguity;
    ``<unprocessed_from>``; the terminal arc check; then discard-last and the
    filtering of events that point past the kept compartments.

    Args:
        parsed: The output of :func:`parse`.
        chunk: The :class:`~karni_historian.condense.chunk.Chunk` the output was made
            from (``start``, ``end``, ``lines``, ``tool_only_ranges``).
        arcs: Completed tool arcs as ``(call, result)`` ordinals (see
            :func:`karni_historian.condense.boundaries.completed_arcs`).
        emergency: The run is an emergency (usage ≥ 95 %): never discard.
        force_keep: A wrapup run: never discard.

    Returns:
        The compartments, facts and side channels to publish.

    Raises:
        HistorianOutputError: With the documented message of the first
            failed check.
    """
    if not parsed.compartments:
        raise HistorianOutputError(NO_COMPARTMENTS)
    rows = _heal_tool_only_gaps(list(parsed.compartments), chunk)
    rows, unprocessed = _heal_split_arc(rows, parsed.unprocessed_from, arcs, chunk.end)
    _check_ranges(rows, chunk)
    unprocessed = _check_unprocessed(unprocessed, rows[-1].end + 1, chunk.start, chunk.end)
    if _splits(rows[-1].end, arcs) is not None:
        raise HistorianOutputError(TERMINAL_SPLIT)
    result = ValidationResult(
        compartments=rows,
        facts=list(parsed.facts),
        events=list(parsed.events),
        user_observations=list(parsed.user_observations),
        primer=parsed.primer,
        unprocessed_from=unprocessed,
        discarded_last=False,
    )
    if not emergency and not force_keep and _may_discard_last(rows, chunk.end, arcs):
        _discard_last(result)
    return _drop_dangling_pointers(result)


def _heal_tool_only_gaps(rows: list[Compartment], chunk: Any) -> list[Compartment]:
    """Give a gap that lies inside one tool-only range to the compartment before it."""
    tool_only = list(chunk.tool_only_ranges)
    for i in range(len(rows) - 1):
        gap_start, gap_end = rows[i].end + 1, rows[i + 1].start - 1
        if gap_start <= gap_end and any(s <= gap_start and gap_end <= e for s, e in tool_only):
            rows[i] = replace(rows[i], end=gap_end)
    return rows


def _heal_split_arc(
    rows: list[Compartment],
    unprocessed: int | None,
    arcs: Sequence[tuple[int, int]],
    chunk_end: int,
) -> tuple[list[Compartment], int | None]:
    """Extend a last compartment that ends inside a completed tool arc to its result."""
    split = _splits(rows[-1].end, arcs)
    if split is not None and split[1] <= chunk_end:
        rows[-1] = replace(rows[-1], end=split[1])
        if unprocessed is not None:
            unprocessed = split[1] + 1
    return rows, unprocessed


def _check_ranges(rows: Sequence[Compartment], chunk: Any) -> None:
    """Endpoints on the chunk's lines, tiers present, ranges in order and contiguous."""
    cs, ce = chunk.start, chunk.end
    present = _present_ordinals(chunk)
    for row in rows:
        if row.start not in present or row.end not in present:
            raise HistorianOutputError(
                f"{INVALID_PREFIX}Compartment range {row.start}-{row.end} does not map to raw "
                f"session lines {cs}-{ce}"
            )
    expected = cs
    for i, row in enumerate(rows, 1):
        _check_row(i, row, expected, cs, ce)
        expected = row.end + 1


def _check_row(position: int, row: Compartment, expected: int, cs: int, ce: int) -> None:
    """One compartment against the chunk ``cs``-``ce`` and the next expected start."""
    where = f"{row.start}-{row.end}"
    if not row.p1:
        raise HistorianOutputError(
            f"{INVALID_PREFIX}compartment {position} is missing the tiered paraphrase structure "
            "(p1..p4); re-emit with all four tiers"
        )
    if row.end < row.start:
        raise HistorianOutputError(f"{INVALID_PREFIX}invalid range {where}")
    if row.start < cs or row.end > ce:
        raise HistorianOutputError(f"{INVALID_PREFIX}range {where} is outside chunk {cs}-{ce}")
    if row.start < expected:
        raise HistorianOutputError(
            f"{INVALID_PREFIX}overlap before message {expected} (saw {where})"
        )
    if row.start > expected:
        raise HistorianOutputError(
            f"{INVALID_PREFIX}gap before message {row.start} (expected {expected})"
        )


def _check_unprocessed(
    unprocessed: int | None, next_uncovered: int, cs: int, ce: int
) -> int | None:
    """``<unprocessed_from>`` must name the first uncovered message; None when all is covered."""
    if unprocessed is None:
        if next_uncovered <= ce:
            raise HistorianOutputError(
                f"{INVALID_PREFIX}output left uncovered messages {next_uncovered}-{ce} without "
                "<unprocessed_from>"
            )
        return None
    if unprocessed == ce + 1:
        return None
    if not cs <= unprocessed <= ce:
        raise HistorianOutputError(
            f"{INVALID_PREFIX}<unprocessed_from> {unprocessed} is outside chunk {cs}-{ce}"
        )
    if unprocessed != next_uncovered:
        raise HistorianOutputError(
            f"{INVALID_PREFIX}<unprocessed_from> {unprocessed} does not match next uncovered "
            f"message {next_uncovered}"
        )
    return unprocessed


def _may_discard_last(
    rows: Sequence[Compartment], chunk_end: int, arcs: Sequence[tuple[int, int]]
) -> bool:
    """Whether the last compartment ends so near the chunk's end that it may be unfinished."""
    return (
        len(rows) >= 2
        and chunk_end - rows[-1].end <= HEALING_SLACK
        and _splits(rows[-2].end, arcs) is None
    )


def _discard_last(result: ValidationResult) -> None:
    """Drop the last compartment, with the facts and observations of the run."""
    dropped = result.compartments.pop()
    result.discarded_last = True
    result.unprocessed_from = dropped.start
    result.facts = []
    result.user_observations = []
    primer = result.primer
    if primer is not None and (primer[0] is None or primer[0] > len(result.compartments)):
        result.primer = None


def _drop_dangling_pointers(result: ValidationResult) -> ValidationResult:
    """Events and a primer that point outside the kept compartments are dropped."""
    kept = len(result.compartments)
    result.events = [e for e in result.events if 1 <= e.at_compartment <= kept]
    primer = result.primer
    if primer is not None and primer[0] is not None and not 1 <= primer[0] <= kept:
        result.primer = None
    return result
