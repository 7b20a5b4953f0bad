"""The facts the built-in historian promotes to project memory, by category.

User prohibitions are ``CONSTRAINTS``, workflow rules ``PROJECT_RULES``,
decisions ``ARCHITECTURE``, settings with values ``CONFIG_VALUES``, naming
conventions ``NAMING``; only whole sentences, never a question or a fragment.
"""

from __future__ import annotations

from karni_historian.condense.extractive.sentences import COMPILED
from karni_historian.condense.file_notes.prose import is_statement
from karni_historian.model import Fact
from karni_historian.store.records import normalize_fact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni_historian.condense.extractive.signals import Episode

__all__ = ["promoted_facts"]


def _whole_sentence(sentence: str) -> bool:
    """Whether a fact candidate is a whole sentence: no fragment, no unbalanced quote, no guess."""
    if len(sentence.split()) < 4 or not (sentence[:1].isupper() or sentence[:1] in "`\"'"):
        return False
    if sentence.count("`") % 2 or sentence.count("(") != sentence.count(")"):
        return False
    return is_statement(sentence) and not sentence.rstrip().endswith((":", ","))


def promoted_facts(episodes_: list[Episode]) -> list[Fact]:
    """The facts the episodes state, in the order they were said.

    Each sentence once, under the first category that takes it, in the order
    below (a prohibition that also names a setting is a constraint).
    """
    facts: list[Fact] = []
    seen: set[str] = set()

    def add(category: str, sentences: list[str]) -> None:
        for s in sentences:
            s = COMPILED.lead.sub("", s)
            s = s[:1].upper() + s[1:]
            if not _whole_sentence(s):
                continue
            key = normalize_fact(s)
            if key not in seen:
                seen.add(key)
                facts.append(Fact(category, s))

    for ep in episodes_:
        add("CONSTRAINTS", ep.prohibitions)
        add("PROJECT_RULES", ep.rules)
        decisions = ep.user_decisions + ep.agent_decisions
        add("ARCHITECTURE", [s for s in decisions if s not in ep.prohibitions + ep.rules])
        add("CONFIG_VALUES", ep.configs)
        add("NAMING", ep.naming)
    return facts
