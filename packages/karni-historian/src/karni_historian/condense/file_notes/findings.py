"""What a file's notes record as decided, required and found: decisions, rules and outcomes.

Decisions are the agent's statements that name the file or its code after
editing it, the names each attempt added and removed, and the comments the
edits wrote; rules are the sentences of the user's prompts that state one
(or give values), kept for the files they concern; outcomes are the checks
that ran after the file's last edit, the commit that landed it and what was
left open.
"""

from __future__ import annotations

import re

from karni_historian.condense.file_notes.changes import change_of
from karni_historian.condense.file_notes.failures import short_command
from karni_historian.condense.file_notes.prompts import CORRECTION, constraints
from karni_historian.condense.file_notes.prose import units
from karni_historian.condense.file_notes.session import Edit, Event, Said, Shell
from karni_historian.condense.file_notes.view import (
    CHECKS,
    CONSTRAINT,
    DECISION,
    OUTCOME,
    FileView,
    NoteList,
    names_phrase,
    quoted,
    worth_keeping,
)
from karni_historian.cut import shorten

__all__ = ["constraints_of", "decisions", "outcomes"]

_OPEN = re.compile(
    r"\bTODO\b|(?i:\b(?:not yet|still (?:need|needs|fails|broken|missing)|remaining|left to|"
    r"follow[- ]up|known issue|didn't|couldn't|could not|unable to|not committed|uncommitted|"
    r"not (?:implemented|supported|done))\b)"
)

_COMMIT_SAID = re.compile(r"^Commit ([0-9a-f]{7,40}) (.+)$", re.M)
"""A commit a harness reports as text (Aider's ``Commit 4a1c9e2 feat: …``)."""
_RULE = re.compile(
    r"\b(?:must|never|always|don'?t|do not|shouldn'?t|should not|not allowed|avoid|"
    r"no \w+(?: \w+)?!)",
    re.I,
)


def decisions(notes: NoteList) -> None:
    """The agent's best statements about the file, each attempt's names, the edits' comments."""
    view = notes.view
    statements: list[tuple[int, int, str]] = []
    attempts = view.request.attempts
    for index, attempt in enumerate(attempts):
        if not any(e.error is None for e in attempt.edits(view.path)):
            continue
        if index + 1 < len(attempts) and attempts[index + 1].kind == CORRECTION:
            continue  # the user rejected this attempt: its "rejected" note says what it did
        for score, sentence in view._statements(attempt)[:3]:
            statements.append((score, attempt.ordinal, sentence))
    for score, ordinal, sentence in sorted(statements, key=lambda s: (-s[0], -s[1]))[:4]:
        notes.add(DECISION, ordinal, sentence, min(85, 45 + score))
    landed = view.landed
    net = change_of((pair for edit in landed for pair in edit.pairs), code=not view.data)
    phrase = names_phrase(net, 5)  # what landed, once the rejected attempts were undone
    if phrase:
        notes.add(DECISION, landed[-1].ordinal, phrase, 60)
    for comment in view.change.comments[:2]:
        notes.add(DECISION, view.landed[-1].ordinal, f"comment: {comment}", 45)


def constraints_of(notes: NoteList) -> None:
    """The user's rules and values stated while the file was worked on, when they concern it."""
    view = notes.view
    attempts = view.request.attempts
    many = len(view.request.edited_paths()) > 3
    for index, attempt in enumerate(attempts):
        if not any(a.edits(view.path) for a in attempts[index:]):
            continue
        for sentence in constraints(attempt.words):
            if many and view.relevance(sentence) == 0 and view.name not in sentence:
                continue
            if _about_another_file(view, sentence):
                continue
            weight = 85 if _RULE.search(sentence) else 70
            notes.add(CONSTRAINT, attempt.ordinal, quoted(shorten(sentence, 180)), weight)


def _about_another_file(view: FileView, sentence: str) -> bool:
    """Whether a sentence names another edited file (or its stem) and not this one."""
    words = set(re.findall(r"[a-z][\w-]*", sentence.lower()))
    own = view.name.split(".")[0].lower()
    named = re.search(rf"(?<![\w.-]){re.escape(view.name)}\b", sentence) is not None
    return own not in words and not named and bool(words & view.other_stems)


def outcomes(notes: NoteList) -> None:
    """The last check of each kind after the file's last edit, its commit, what was left open."""
    view = notes.view
    if not view.landed:
        if view.edits:  # whatever the agent said after, the file was not changed
            final = view.edits[-1]
            notes.add(OUTCOME, final.ordinal, f"not written: every edit of {view.name} failed", 75)
        return
    events = [e for a in view.request.attempts for e in a.events]
    last = max(i for i, e in enumerate(events) if isinstance(e, Edit) and e in view.landed)
    checks: dict[str, Shell] = {}
    workers = view.groups | {None}
    for event in events[last + 1 :]:
        if isinstance(event, Said) and event.group in workers:
            said = _COMMIT_SAID.search(event.text)
            if said:
                subject = quoted(said.group(2).strip())
                notes.add(OUTCOME, event.ordinal, f"committed {said.group(1)[:8]} {subject}", 60)
                break
        if not isinstance(event, Shell) or event.group not in workers:
            continue
        run = event.run
        if run.kind in CHECKS and run.failed is not None:
            checks[run.kind] = event
        elif run.kind == "commit" and run.commit:
            notes.add(
                OUTCOME, event.ordinal, f"committed {run.commit[0]} {quoted(run.commit[1])}", 60
            )
            break
    for event in checks.values():
        state = "failed" if event.run.failed else "passed"
        detail = f": {event.run.summary}" if event.run.summary else ""
        notes.add(
            OUTCOME, event.ordinal, f"`{short_command(event.run.command)}` {state}{detail}", 50
        )
    _left_open(notes, events[last + 1 :])


def _left_open(notes: NoteList, events: list[Event]) -> None:
    view = notes.view
    for event in events:
        if isinstance(event, Said) and event.group in view.groups | {None}:
            for sentence in units(event.text):
                if (
                    _OPEN.search(sentence)
                    and worth_keeping(sentence)
                    and view.relevance(sentence) >= 1
                ):
                    notes.add(OUTCOME, event.ordinal, f"left open: {sentence}", 55)
