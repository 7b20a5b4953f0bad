"""Failures a file's notes record: edits that never landed, checks that failed because of it.

An edit refused or failed for a real reason (a hook, a permission) is noted
as it is; an edit tool that failed for the harness's own reasons ("file has
not been read yet") only when the change then never landed, or landed by a
shell command instead. A test, build, type check or lint that failed after
the file was edited is blamed on the files its output names, else on the
files just edited, with the fix when a later run passed. An error the user
pasted into a correction is noted with their words.
"""

from __future__ import annotations

import re

from karni_historian.condense.file_notes.changes import change_of, distinctive, names_in
from karni_historian.condense.file_notes.prompts import CORRECTION, pasted_error, user_words
from karni_historian.condense.file_notes.session import SHELL_WRITE, Attempt, Edit, Event, Shell
from karni_historian.condense.file_notes.view import (
    CHECKS,
    FAILED,
    FileView,
    NoteList,
    basename,
    quoted,
)
from karni_historian.cut import shorten

__all__ = ["failed_edits", "failed_runs", "pasted_failures", "short_command"]

_PROTOCOL = re.compile(
    r"not been read|has been modified since|modified since read|must read|to replace not found|"
    r"old_string not found|not found in file|found \d+ matches|not unique|no changes to make|"
    r"are identical|string not found|did not conform to the edit format",
    re.I,
)

_REFUSED = re.compile(
    r"permission|haven't granted|not granted|denied|doesn't want to proceed|rejected|not allowed",
    re.I,
)

_TAGS = re.compile(r"</?[a-z_]+>")

_CD_PREFIX = re.compile(r"^(?:cd \S+ && )+")

_FED = re.compile(r"^(?:yes|echo|printf|cat)\b[^|]*\|\s*")
_PIPE_TAIL = re.compile(r"\s*(?:2>&1\s*)?(?:\|.*)?$")

_QUOTED = re.compile(r"'([^'\s]{2,80})'|\"([^\"\s]{2,80})\"|`([^`\s]{2,80})`")


def short_command(command: str) -> str:
    """The command as a note quotes it: no ``cd`` before, no pipe after, 40 characters at most."""
    command = _FED.sub("", _CD_PREFIX.sub("", command))  # "yes | npx …" runs npx
    command = _PIPE_TAIL.sub("", command)
    return shorten(command, 40)


def failed_edits(notes: NoteList) -> None:
    """Edits refused or failed for a real reason, and a worker's edits that never landed."""
    view = notes.view
    for attempt in view.request.attempts:
        edits = attempt.edits(view.path)
        for position, edit in enumerate(edits):
            if edit.error is None:
                continue
            later = [e for e in edits[position + 1 :] if e.group == edit.group]
            if later and later[0].error is not None and _PROTOCOL.search(edit.error):
                continue  # the worker tried again: the last try of the run tells the story
            error = shorten(_TAGS.sub("", edit.error).strip(), 90)
            if _REFUSED.search(edit.error):
                notes.add(FAILED, edit.ordinal, f"{edit.tool} refused: {error}", 95)
            elif not _PROTOCOL.search(edit.error):
                notes.add(FAILED, edit.ordinal, f"{edit.tool} failed: {error}", 90)
            elif any(e.tool == SHELL_WRITE and e.error is None for e in later):
                notes.add(
                    FAILED,
                    edit.ordinal,
                    f"{edit.tool} failed ({error}); written by a shell command instead",
                    80,
                )
                return
            elif not any(e.error is None for e in later):
                instead = _written_instead(attempt, edit)
                tail = f"; wrote {instead} instead" if instead else ""
                notes.add(FAILED, edit.ordinal, f"{edit.tool} never landed ({error}){tail}", 85)
                return


def _written_instead(attempt: Attempt, failed: Edit) -> str | None:
    """The file the same worker wrote next, when it is another one (the change went there)."""
    after = False
    for event in attempt.events:
        if event is failed:
            after = True
        elif (
            after
            and isinstance(event, Edit)
            and event.group == failed.group
            and event.error is None
        ):
            return basename(event.path) if event.path != failed.path else None
    return None


def _blamed(run: Shell, dirty: list[str], edited_names: set[str]) -> list[str]:
    """The files a failed check is blamed on: those its output names, else the files just edited."""
    named = {name for name in run.run.names}
    if named:
        hits = [path for path in dirty if basename(path) in named]
        if hits:
            return hits
        if named & edited_names:
            return []
    return dirty if len(dirty) <= 3 else []


def failed_runs(notes: NoteList, edited_names: set[str]) -> None:
    """Checks (tests, builds, type checks, lint) that failed after its edits, blamed on the file."""
    view = notes.view
    events = [e for a in view.request.attempts for e in a.events]
    dirty: dict[str | None, list[str]] = {}
    for index, event in enumerate(events):
        if isinstance(event, Edit) and event.error is None:
            dirty.setdefault(event.group, [])
            if event.path not in dirty[event.group]:
                dirty[event.group].append(event.path)
        elif isinstance(event, Shell) and event.run.failed:
            run = event.run
            pending = dirty.get(event.group, [])
            relevant = run.kind in CHECKS or (run.kind == "other" and view.name in run.names)
            if relevant and view.path in _blamed(event, pending, edited_names):
                notes.add(
                    FAILED, event.ordinal, _failure_text(view, event, events[index + 1 :]), 90
                )
        elif isinstance(event, Shell) and event.run.kind in CHECKS and event.run.failed is False:
            dirty[event.group] = []


def _failure_text(view: FileView, failure: Shell, later: list[Event]) -> str:
    summary = failure.run.summary
    summary = shorten(re.sub(rf"^\S*{re.escape(view.name)}\(\d+,\d+\):\s*", "", summary), 80)
    text = f"`{short_command(failure.run.command)}` failed: {summary}"
    fixes: list[tuple[str, str]] = []
    for event in later:
        if isinstance(event, Edit) and event.path == view.path and event.error is None:
            fixes += event.pairs
        elif (
            isinstance(event, Shell)
            and event.run.kind == failure.run.kind
            and event.group == failure.group
            and event.run.failed is not None
        ):
            if event.run.failed is False and fixes:
                return f"{text}; fixed: {_fix_phrase(failure.run.summary, fixes)}"
            if event.run.failed is False or not fixes:
                continue
    return text


def _fix_phrase(error: str, fixes: list[tuple[str, str]]) -> str:
    """How the edits after a failure fixed it: what the error named and they removed, else names."""
    for match in _QUOTED.finditer(error):
        token = next(group for group in match.groups() if group)
        if any(token in old for old, _ in fixes) and not any(token in new for _, new in fixes):
            return f"removed `{token}`"
    change = change_of(fixes)
    removed = [name for name in change.removed if distinctive(name)][:3]
    added = [name for name in change.added if distinctive(name)][:3]
    parts = [f"removed {', '.join(f'`{n}`' for n in removed)}"] if removed else []
    parts += [f"added {', '.join(f'`{n}`' for n in added)}"] if added else []
    if not parts:
        added_line = _first_new_line(fixes)
        if added_line:
            return f"added `{added_line}`"
        touched = sorted(set().union(*(names_in(old) for old, _ in fixes)))[:3]
        parts = [f"changed {', '.join(f'`{n}`' for n in touched)}"] if touched else []
    return "; ".join(parts) or "a later edit"


def _first_new_line(fixes: list[tuple[str, str]]) -> str:
    """The first short line the fixing edits wrote that their replaced text did not have."""
    for old, new in fixes:
        before = {line.strip() for line in old.splitlines()}
        for line in new.splitlines():
            line = line.strip()
            if line and line not in before and len(line) <= 60:
                return line
    return ""


def pasted_failures(notes: NoteList) -> None:
    """Errors the user pasted into a correction, for the file they name or its fix edits."""
    view = notes.view
    for attempt in view.request.attempts:
        if attempt.kind != CORRECTION:
            continue
        error = pasted_error(attempt.words)
        if not error:
            continue
        named = view.name in attempt.words
        if named or attempt.edits(view.path):
            words = user_words(attempt.words, 120)
            notes.add(FAILED, attempt.ordinal, f"{shorten(error, 90)} — user: {quoted(words)}", 94)
