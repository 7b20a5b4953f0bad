"""Approaches a file's notes record as undone: by the user, by the session itself, or by git.

An attempt the user corrects ("no, …") or says they undid is noted with what
it did to the file and the user's words; an edit that writes back exactly
what an earlier one replaced is the session reverting itself; ``git
checkout`` or ``restore`` of the file (or ``stash``, ``reset --hard``) after
edits discards them.
"""

from __future__ import annotations

import re

from karni_historian.condense.file_notes.changes import change_of, comments_added, names_in
from karni_historian.condense.file_notes.failures import short_command
from karni_historian.condense.file_notes.prompts import (
    CONTINUATION,
    CORRECTION,
    says_undone,
    user_words,
)
from karni_historian.condense.file_notes.session import Attempt, Edit, Shell
from karni_historian.condense.file_notes.view import (
    REJECTED,
    FileView,
    NoteList,
    SessionView,
    basename,
    names_phrase,
    quoted,
)
from karni_historian.cut import shorten

__all__ = ["PUT_BACK", "TAKEN_BACK", "discards", "rejections", "self_reverts"]

PUT_BACK = ("undone", "discarded")
"""How a note begins when the file was put back: the user undid the attempt (or had it undone),
or ``git checkout``/``restore``/``stash`` discarded it (``blame`` then takes its writes for no
evidence)."""

TAKEN_BACK = (*PUT_BACK, "reverted its own edit")
"""How every note of an approach taken back begins (the other rejected notes are corrections)."""


def rejections(notes: NoteList, following: Attempt | None, session: SessionView) -> None:
    """Attempts on the file the user then corrected or said they undid, with their words.

    A correction whose edits write back an earlier edit rejected that edit,
    which :func:`self_reverts` names: not the attempt just before it.
    """
    view = notes.view
    attempts = view.request.attempts
    for index, attempt in enumerate(attempts):
        if not any(e.error is None for e in attempt.edits(view.path)):
            continue
        after = attempts[index + 1] if index + 1 < len(attempts) else following
        if after is None or (
            after.kind not in (CORRECTION, CONTINUATION) and not says_undone(after.words)
        ):
            continue
        if undoes_earlier(after, view.path, session):
            continue
        words = user_words(after.words, 110)
        what, named = view.describe(attempt, taken_out=_taken_out(view, attempts[index + 1 :]))
        if says_undone(after.words):
            notes.add(REJECTED, after.ordinal, f"undone: {what} — user: {quoted(words)}", 96)
        elif after.kind == CORRECTION and _concerns(view, attempt, after.words):
            weight = 92 if named else 70
            notes.add(REJECTED, after.ordinal, f"{what} — user: {quoted(words)}", weight)


def _taken_out(view: FileView, later: list[Attempt]) -> set[str]:
    """The names later attempts of the request removed from the file (what the user rejected)."""
    landed = [e for attempt in later for e in attempt.edits(view.path) if e.error is None]
    return set(change_of(pair for e in landed for pair in e.pairs).removed)


def _concerns(view: FileView, attempt: Attempt, words: str) -> bool:
    """Whether a correction is about this file: it names the file or its code, or names no other.

    A file the user asks to keep ("keep pricing.py") is not what they reject.
    """
    words = re.sub(rf"\bkeep (?:the )?`?{re.escape(view.name)}`?", " ", words, flags=re.I)
    if view.name in words or any(name in words for name in view.change.mentioned):
        return True
    others = {basename(path) for path in attempt.edited_paths()} - {view.name}
    if any(other in words for other in others):
        return False
    return len(attempt.edited_paths()) <= 2


def self_reverts(notes: NoteList, session: SessionView) -> None:
    """Edits that wrote back what an earlier one replaced: at the user's request, or unasked."""
    view = notes.view
    asked = {
        id(edit): attempt
        for attempt in view.request.attempts
        if attempt.kind == CORRECTION or says_undone(attempt.words)
        for edit in attempt.edits(view.path)
    }
    for edit in view.landed:
        previous = session.undone_by(edit) if edit.pairs else None
        if previous is None:
            continue
        what = _what(previous)
        attempt = asked.get(id(edit))
        if attempt is None:
            notes.add(REJECTED, edit.ordinal, f"reverted its own edit ({what})", 88)
        else:
            words = quoted(user_words(attempt.words, 110))
            notes.add(REJECTED, attempt.ordinal, f"undone on request: {what} — user: {words}", 96)


def undoes_earlier(attempt: Attempt, path: str, session: SessionView) -> bool:
    """Whether ``attempt`` writes back an earlier edit of ``path`` (what a correction undid)."""
    return any(
        session.undone_by(edit) is not None
        for edit in attempt.edits(path)
        if edit.error is None and edit.pairs
    )


def _what(previous: Edit) -> str:
    """What an undone edit had done, in names when it can."""
    if not previous.pairs:
        return f"the edit of message {previous.ordinal}"
    return names_phrase(change_of(previous.pairs), 4) or _new_names(previous)


def _new_names(edit: Edit) -> str:
    """The names an edit's written text holds and its replaced text did not, or its comment."""
    for old, new in edit.pairs:
        fresh = sorted(names_in(new) - names_in(old), key=lambda n: (new.find(n), n))
        if fresh:
            return "adding " + ", ".join(f"`{name}`" for name in fresh[:3])
        comments = comments_added(old, new)
        if comments:
            return shorten(comments[0], 60)
    return "an earlier edit"


def discards(notes: NoteList) -> None:
    """Edits of the file discarded by ``git checkout``/``restore``/``stash`` before a commit."""
    view = notes.view
    pending: list[Edit] = []
    for attempt in view.request.attempts:
        for event in attempt.events:
            if isinstance(event, Edit) and event.path == view.path and event.error is None:
                pending.append(event)
            elif isinstance(event, Shell) and event.run.kind == "commit" and event.run.commit:
                pending = []
            elif isinstance(event, Shell) and event.run.kind == "undo" and pending:
                targets = event.run.targets
                if not targets or any(view.path.endswith(t.lstrip("./")) for t in targets):
                    what = names_phrase(change_of(p for e in pending for p in e.pairs), 4)
                    command = short_command(event.run.command)
                    detail = f" ({what})" if what else ""
                    notes.add(REJECTED, event.ordinal, f"discarded with `{command}`{detail}", 93)
                    pending = []
