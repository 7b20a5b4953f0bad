"""The lines of a brief: facts, episode anchors and paraphrases, one line each."""

from __future__ import annotations

from karni.agent.common.sanitize import clean_field
from karni.agent.history.cap import leading_lines

from karni_historian.brief.paraphrase import paraphrase
from karni_historian.store.records import normalize_fact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from karni_historian.model import Fact
    from karni_historian.store.records import BriefEpisode, FactRecord

__all__ = ["alnum_key", "anchor_line", "by_priority", "episode_line", "fact_line", "fit_lines"]

CATEGORY_ORDER = ("CONSTRAINTS", "PROJECT_RULES", "ARCHITECTURE", "CONFIG_VALUES", "NAMING")
"""Facts are listed in this order (what must not be broken first); others follow."""


def alnum_key(text: str) -> str:
    """``text`` lowercased with only its letters and digits: what two wordings of a line share."""
    return "".join(filter(str.isalnum, text.lower()))


def _one_line(text: str) -> str:
    """A field from the store as one clean line (karni-core's sanitiser, ``docs/security.md``)."""
    return " ".join(clean_field(text).split())


def fact_line(fact: Fact | FactRecord) -> str:
    """``- CONTENT (category)``, and `` — by NAME`` for a teammate's fact."""
    line = f"- {_one_line(fact.content)} ({_one_line(fact.category).lower()})"
    author = getattr(fact, "author", None)
    return f"{line} \u2014 by {_one_line(author)}" if author else line


def _body(episode: BriefEpisode, tier: int) -> str:
    """The paraphrase for ``tier`` (``docs/historian/blocks.md``), on one line."""
    return _one_line(paraphrase(episode, tier))


def anchor_line(episode: BriefEpisode, sessions: int) -> str:
    """``- DATE TITLE (messages S-E)``: the episode's anchor (``by NAME, …`` for a teammate's)."""
    where = f"messages {episode.start}-{episode.end}"
    if sessions > 1:
        where = f"session {episode.session_id[:8]} {where}"
    if episode.author:
        where = f"by {_one_line(episode.author)}, {where}"
    date = f"{_one_line(episode.start_date)} " if episode.start_date else ""
    return f"- {date}{_one_line(episode.title)} ({where})"


def episode_line(episode: BriefEpisode, tier: int, sessions: int) -> str:
    """The anchor, then the paraphrase at ``tier`` when it has one."""
    head = anchor_line(episode, sessions)
    body = _body(episode, tier)
    return f"{head}: {body}" if body else head


def by_priority(facts: Sequence[FactRecord]) -> list[FactRecord]:
    """The facts in :data:`CATEGORY_ORDER`, others after them, each group in order.

    Words promoted under two categories are listed once, under the first.
    """
    rank = {category: i for i, category in enumerate(CATEGORY_ORDER)}
    listed: set[str] = set()
    ordered = []
    for fact in sorted(facts, key=lambda fact: rank.get(fact.category, len(rank))):
        words = normalize_fact(fact.content)
        if words not in listed:
            listed.add(words)
            ordered.append(fact)
    return ordered


def fit_lines(lines: list[str], room: int) -> list[str]:
    """The leading lines that fit in ``room`` characters, each paying for its newline."""
    return leading_lines(lines, room)
