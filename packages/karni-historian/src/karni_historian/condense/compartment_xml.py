"""The historian's output format: writing, lenient parsing and strict validation.

Every historian, the built-in extractive one or a model, produces the same XML
(reference §3.5): ``<compartments>`` with four paraphrase tiers each, durable
``<facts>`` by category, optional events, observations and primers, and a
``<meta>`` block saying where processing stopped. This module writes that XML
(:func:`emit`), reads it leniently the way upstream does (:func:`parse`, §3.6)
and checks it against the chunk it was made from (:func:`validate`, §3.7), so
nothing malformed ever reaches the store.

Choices where the reference leaves room:

- The TypeScript error wording is used (``gap before message 19 (expected 3)``).
- Attribute values (titles, episode types) are XML-unescaped like bodies.
- ``importance`` is clamped to 1–100; a missing one is 50.
- Discard-last also drops the unanchored facts and user observations and the
  events and primers that point at the dropped compartment (the Rust goldens).
- The chunk's "present" ordinals are those its lines cover, noise included.
"""

from __future__ import annotations

from dataclasses import dataclass

from karni_historian.errors import HistorianOutputError
from karni_historian.model import Compartment, Fact
from karni_historian.xml_text import escape_attr, escape_body, unescape

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

__all__ = [
    "FACT_CATEGORIES",
    "HEALING_SLACK",
    "INVALID_PREFIX",
    "Event",
    "HistorianOutputError",
    "ParsedOutput",
    "ValidationResult",
    "emit",
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
        import re

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
        discarded_last: True when the last compartment was dropped (§3.7).
    """

    compartments: list[Compartment]
    facts: list[Fact]
    events: list[Event]
    user_observations: list[str]
    primer: tuple[int | None, str] | None
    unprocessed_from: int | None
    discarded_last: bool


def _tier(body: str, n: int) -> str | None:
    import re

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
    """Parse a historian response leniently (§3.6).

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

    facts_block = _re("facts").search(text)
    if facts_block is not None:
        fact_source = facts_block.group(1)
    else:
        fact_source = _re("events").sub("", _re("compartment").sub("", text))
    facts: list[Fact] = []
    seen: set[tuple[str, str]] = set()
    for category, body in _re("category").findall(fact_source):
        for line in _bullets(body):
            fact = (category, unescape(line))
            if fact not in seen:
                seen.add(fact)
                facts.append(Fact(*fact))

    events = []
    events_block = _re("events").search(text)
    if events_block is not None:
        for kind, at, body in _re("event").findall(events_block.group(1)):
            fields = {}
            for name, value, _empty in _re("field").findall(body):
                value = unescape(value.strip())
                if name and value:
                    fields[name] = value
            events.append(Event(kind, int(at), fields))

    observations: list[str] = []
    obs_block = _re("observations").search(text)
    if obs_block is not None:
        observations = [unescape(b) for b in _bullets(obs_block.group(1))]

    primer: tuple[int | None, str] | None = None
    primers_block = _re("primers").search(text)
    if primers_block is not None:
        element = _re("primer").search(primers_block.group(1))
        if element is not None:
            question = unescape(element.group(2).strip())
            if question:
                primer = (int(element.group(1)), question)
        else:
            bullet = _re("primer_bullet").search(primers_block.group(1))
            if bullet is not None and bullet.group(1).strip():
                primer = (None, unescape(bullet.group(1).strip()))

    unprocessed = _re("unprocessed").search(text)
    processed = _re("processed").search(text)
    return ParsedOutput(
        compartments=compartments,
        facts=facts,
        events=events,
        user_observations=observations,
        primer=primer,
        unprocessed_from=int(unprocessed.group(1)) if unprocessed else None,
        messages_processed=(int(processed.group(1)), int(processed.group(2)))
        if processed
        else None,
    )


def _splits(boundary_end: int, arcs: Iterable[tuple[int, int]]) -> tuple[int, int] | None:
    """The completed arc that an end at ``boundary_end`` would cut, if any."""
    for call, result in arcs:
        if call <= boundary_end < result:
            return call, result
    return None


def _present_ordinals(chunk: Any) -> set[int]:
    present: set[int] = set()
    for line in chunk.lines:
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
    """Check parsed output against its chunk and heal what the reference heals (§3.7).

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
            :func:`karni_historian.condense.chunk.completed_arcs`).
        emergency: The run is an emergency (usage ≥ 95 %): never discard.
        force_keep: A wrapup run: never discard.

    Returns:
        The compartments, facts and side channels to publish.

    Raises:
        HistorianOutputError: With the reference's message for the first
            failed check.
    """
    from dataclasses import replace

    rows = list(parsed.compartments)
    if not rows:
        raise HistorianOutputError(NO_COMPARTMENTS)
    cs, ce = chunk.start, chunk.end
    unprocessed = parsed.unprocessed_from

    tool_only = list(chunk.tool_only_ranges)
    for i in range(len(rows) - 1):
        prev, nxt = rows[i], rows[i + 1]
        gap_start, gap_end = prev.end + 1, nxt.start - 1
        if gap_start <= gap_end and any(s <= gap_start and gap_end <= e for s, e in tool_only):
            rows[i] = replace(prev, end=gap_end)

    split = _splits(rows[-1].end, arcs)
    if split is not None and split[1] <= ce:
        rows[-1] = replace(rows[-1], end=split[1])
        if unprocessed is not None:
            unprocessed = split[1] + 1

    present = _present_ordinals(chunk)
    for row in rows:
        if row.start not in present or row.end not in present:
            raise HistorianOutputError(
                f"{INVALID_PREFIX}Compartment range {row.start}-{row.end} does not map to raw "
                f"session lines {cs}-{ce}"
            )

    expected = cs
    for i, row in enumerate(rows, 1):
        if not row.p1:
            raise HistorianOutputError(
                f"{INVALID_PREFIX}compartment {i} is missing the tiered paraphrase structure "
                "(p1..p4); re-emit with all four tiers"
            )
        if row.end < row.start:
            raise HistorianOutputError(f"{INVALID_PREFIX}invalid range {row.start}-{row.end}")
        if row.start < cs or row.end > ce:
            raise HistorianOutputError(
                f"{INVALID_PREFIX}range {row.start}-{row.end} is outside chunk {cs}-{ce}"
            )
        if row.start < expected:
            raise HistorianOutputError(
                f"{INVALID_PREFIX}overlap before message {expected} (saw {row.start}-{row.end})"
            )
        if row.start > expected:
            raise HistorianOutputError(
                f"{INVALID_PREFIX}gap before message {row.start} (expected {expected})"
            )
        expected = row.end + 1

    next_uncovered = rows[-1].end + 1
    if unprocessed is not None:
        if unprocessed == ce + 1:
            unprocessed = None
        elif not cs <= unprocessed <= ce:
            raise HistorianOutputError(
                f"{INVALID_PREFIX}<unprocessed_from> {unprocessed} is outside chunk {cs}-{ce}"
            )
        elif unprocessed != next_uncovered:
            raise HistorianOutputError(
                f"{INVALID_PREFIX}<unprocessed_from> {unprocessed} does not match next uncovered "
                f"message {next_uncovered}"
            )
    elif next_uncovered <= ce:
        raise HistorianOutputError(
            f"{INVALID_PREFIX}output left uncovered messages {next_uncovered}-{ce} without "
            "<unprocessed_from>"
        )

    if _splits(rows[-1].end, arcs) is not None:
        raise HistorianOutputError(TERMINAL_SPLIT)

    facts = list(parsed.facts)
    observations = list(parsed.user_observations)
    events = list(parsed.events)
    primer = parsed.primer
    discarded = False
    if (
        len(rows) >= 2
        and not emergency
        and not force_keep
        and ce - rows[-1].end <= HEALING_SLACK
        and _splits(rows[-2].end, arcs) is None
    ):
        dropped = rows.pop()
        discarded = True
        unprocessed = dropped.start
        facts = []
        observations = []
        if primer is not None and (primer[0] is None or primer[0] > len(rows)):
            primer = None
    events = [e for e in events if 1 <= e.at_compartment <= len(rows)]
    if primer is not None and primer[0] is not None and not 1 <= primer[0] <= len(rows):
        primer = None
    return ValidationResult(
        compartments=rows,
        facts=facts,
        events=events,
        user_observations=observations,
        primer=primer,
        unprocessed_from=unprocessed,
        discarded_last=discarded,
    )


def emit(
    compartments: Sequence[Compartment],
    facts: Sequence[Fact] = (),
    *,
    messages_processed: tuple[int, int] | None = None,
    unprocessed_from: int | None = None,
) -> str:
    """Write historian output in the §3.5 format.

    Args:
        compartments: Compartments with all four tiers (``p4`` may be empty).
        facts: Project-memory facts; empty categories are omitted.
        messages_processed: The processed ``(first, last)`` range for ``<meta>``.
        unprocessed_from: Where processing stopped, if before the chunk end.

    Returns:
        The ``<output>…</output>`` document.
    """
    lines = ["<output>", "<compartments>"]
    for c in compartments:
        attrs = f'start="{c.start}" end="{c.end}" title="{escape_attr(c.title)}"'
        if c.episode_type:
            attrs += f' episode_type="{escape_attr(c.episode_type)}"'
        attrs += f' importance="{c.importance}"'
        lines.append(f"<compartment {attrs}>")
        for n, body in enumerate((c.p1, c.p2, c.p3), 1):
            lines.append(f"<p{n}>{escape_body(body)}</p{n}>")
        lines.append(f"<p4>{escape_body(c.p4)}</p4>" if c.p4 else "<p4/>")
        lines.append("</compartment>")
    lines.append("</compartments>")
    by_category: dict[str, list[str]] = {}
    for fact in facts:
        by_category.setdefault(fact.category, []).append(" ".join(fact.content.split()))
    if by_category:
        lines.append("<facts>")
        for category, items in by_category.items():
            lines.append(f"<{category}>")
            lines.extend(f"* {escape_body(item)}" for item in items)
            lines.append(f"</{category}>")
        lines.append("</facts>")
    lines.append("<meta>")
    if messages_processed is not None:
        lines.append(
            f"<messages_processed>{messages_processed[0]}-{messages_processed[1]}"
            "</messages_processed>"
        )
    if unprocessed_from is not None:
        lines.append(f"<unprocessed_from>{unprocessed_from}</unprocessed_from>")
    lines.append("</meta>")
    lines.append("</output>")
    return "\n".join(lines)
