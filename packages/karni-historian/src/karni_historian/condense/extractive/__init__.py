"""``local/extractive``: the built-in historian that needs no model.

It reads a chunk (see :mod:`karni_historian.condense.chunk`) and the raw messages behind
it, and writes the same XML a model-backed historian would (``docs/historian/validation.md``),
so the output goes through the same validator
(:mod:`karni_historian.condense.compartment_xml`); a run takes what parsing that XML
gives without writing it (:func:`summarize_parsed`). Everything is extracted, nothing is
invented, and the same input always gives the same bytes.

How it decides, in short:

- **Episodes.** A new compartment starts at a meaningful user turn that opens
  a new task. Acknowledgements ("ok", "thanks"), follow-ups ("also…",
  "and…") and corrections ("no, …", "actually…", "instead…") stay in the
  current episode; after a commit (a finished work phase) any real request
  starts a new one, and an episode of more than 40 lines is closed at the next
  user turn. Episodes tile the chunk, so coverage is always complete.
- **Tiers.** p1 keeps the request, the user's constraints and corrections
  verbatim, the assistant's key sentences, the files edited and the commits;
  p2 keeps the request, decisions, constraints, the outcome, files and
  commits; p3 is one or two sentences; p4 is an anchor of commit hashes and
  edited file names, or empty (title only) for low-importance episodes with
  nothing distinctive. Commit hashes appear at every non-empty tier.
- **Importance** (1–100) starts at 35 and rises with real signals: user
  constraints (+20), decisions (+15), commit clusters (+10 each, at most +20),
  reverts (+10), edits (+5), fixes with edits (+5); episodes with no edit,
  commit or decision lose 10.
- **Facts** are sentences promoted to project memory by category: user
  prohibitions to ``CONSTRAINTS``, user workflow rules ("always…", "from now
  on…", or "must…" that is not part of a decision) to ``PROJECT_RULES``,
  decisions to ``ARCHITECTURE``, settings with values to ``CONFIG_VALUES``,
  user naming conventions ("named after…", "use snake_case") to ``NAMING``; a
  one-off action such as "rename X to Y" is not a naming rule. When a sentence
  is a request followed by its reason ("Revert X: we decided Y"), only the
  reason is promoted. Questions and fragments are never promoted.

Its parts, by concern: :mod:`.sentences` (the patterns), :mod:`.scan` (the
episodes), :mod:`.signals` (what an episode says), :mod:`.tiers` (its four
tiers, objective and title) and :mod:`.facts` (the facts promoted).
"""

from __future__ import annotations

from karni_historian.condense.compartment_writer import emit, read_back
from karni_historian.condense.extractive.facts import promoted_facts
from karni_historian.condense.extractive.scan import (
    by_ordinal_of,
    phase_lines,
    split_episodes,
    user_texts,
)
from karni_historian.condense.extractive.signals import Episode
from karni_historian.condense.extractive.tiers import objective_of, tiers_of, title_of
from karni_historian.model import Compartment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from karni_historian.condense.chunk import Chunk
    from karni_historian.condense.compartment_xml import ParsedOutput
    from karni_historian.model import Fact, Message

__all__ = ["HISTORIAN_NAME", "condense", "summarize", "summarize_parsed"]

HISTORIAN_NAME = "local/extractive"
"""The historian's name as runs record it."""


def _resolve_continuations(episodes_: list[Episode]) -> None:
    """An episode opened by a bare "continue" is about the request it continues."""
    last = ""
    for ep in episodes_:
        if ep.continued and not ep.requests and last:
            ep.requests.append(last)
        elif not ep.requests:
            ep.continued = False  # nothing to name: its topic or its work will
        if ep.requests:
            last = ep.requests[0]


def summarize(chunk: Chunk, messages: Sequence[Message]) -> str:
    """Condense a chunk into historian XML without a model.

    Args:
        chunk: The chunk built by :func:`karni_historian.condense.chunk.build_chunk`.
        messages: The raw messages behind the chunk (any superset of its range).

    Returns:
        The ``<output>`` document (``docs/historian/validation.md``), one compartment per
        episode, tiling ``chunk.start``–``chunk.end``, and the promoted facts.
        An empty chunk gives an output with no compartments.
    """
    compartments, facts = condense(chunk, messages)
    return emit(compartments, facts, messages_processed=_processed(chunk, compartments))


def summarize_parsed(chunk: Chunk, messages: Sequence[Message]) -> ParsedOutput:
    """What :func:`~karni_historian.condense.compartment_xml.parse` reads from :func:`summarize`.

    The same result, without writing the XML and parsing it back: what a run
    of the built-in historian validates.
    """
    compartments, facts = condense(chunk, messages)
    return read_back(compartments, facts, messages_processed=_processed(chunk, compartments))


def _processed(chunk: Chunk, compartments: list[Compartment]) -> tuple[int, int] | None:
    return (chunk.start, chunk.end) if compartments else None


def condense(chunk: Chunk, messages: Sequence[Message]) -> tuple[list[Compartment], list[Fact]]:
    """The compartments (one per episode, tiling the chunk) and the facts of a chunk."""
    by_ordinal = by_ordinal_of(messages, chunk)
    texts = user_texts(by_ordinal, chunk)
    lines, starts = phase_lines(chunk, by_ordinal)
    groups = split_episodes(by_ordinal, texts, lines, starts)
    edits: set[tuple[str, str, str]] = set()
    gathered = [
        Episode(group, by_ordinal, texts, starts.get(group[0].start, ""), edits) for group in groups
    ]
    _resolve_continuations(gathered)
    compartments = []
    for index, ep in enumerate(gathered):
        importance = ep.importance
        objective = objective_of(ep)
        p1, p2, p3, p4 = tiers_of(ep, importance, objective)
        compartments.append(
            Compartment(
                start=chunk.start if index == 0 else ep.start,
                end=ep.end,
                title=title_of(objective),
                p1=p1,
                p2=p2,
                p3=p3,
                p4=p4,
                importance=importance,
                episode_type=ep.episode_type,
                content=p1,  # as parsing fills it: read back without a copy
            )
        )
    return compartments, promoted_facts(gathered)
