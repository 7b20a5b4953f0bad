"""``blame``: what ``git blame`` says about each line of a file, plus which request wrote it.

``git blame`` names the commit that last changed a line; the historian adds
the session and the request that produced it when it has evidence
(:mod:`.evidence`: the session's own commit, the commit a rebase made of it,
or the text the session wrote), and what later became of that approach
(reverted or superseded, from the file's notes). Lines without evidence say
"no known session". :mod:`.git` runs git, :mod:`.report` prints the result
as text, JSON or an Agent Trace record. See ``docs/historian/blame.md``.
"""

from __future__ import annotations

from karni_historian.blame.evidence import Attribution, attribute
from karni_historian.blame.git import BlamedLine, Porcelain, blame_lines, head_revision
from karni_historian.blame.report import (
    BlameRange,
    BlameReport,
    Later,
    RequestInfo,
    SessionInfo,
)
from karni_historian.condense.file_notes import EXTRACTION_VERSION
from karni_historian.condense.file_notes.undone import TAKEN_BACK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni_historian.store import Store

__all__ = ["blame_file"]


def blame_file(
    store: Store,
    root: str,
    path: str,
    lines: tuple[int, int] | None = None,
    *,
    revision: bool = False,
) -> BlameReport:
    """The blame of ``path`` (project-relative) in the project at ``root``.

    Args:
        store: The project's store.
        root: The project root (inside a git repository).
        path: The file, relative to ``root``, POSIX.
        lines: Only these lines (1-based, inclusive), as ``git blame -L``.
        revision: Also look up ``HEAD`` and the file's path in the repository
            (what an Agent Trace record names).

    Raises:
        BlameError: git cannot blame the file (see :mod:`.git`).
    """
    porcelain = blame_lines(root, path, lines)
    found = attribute(store, root, path, porcelain)
    ranges = _ranges(porcelain, found)
    _describe(store, path, ranges)
    report = BlameReport(path, ranges, store.sessions_behind(EXTRACTION_VERSION))
    if revision:
        report.revision, prefix = head_revision(root)
        report.repository_path = prefix + path
    return report


def _ranges(porcelain: Porcelain, found: list[Attribution | None]) -> list[BlameRange]:
    """Consecutive lines with the same commit and attribution, as ranges."""
    ranges: list[BlameRange] = []
    keys: list[tuple[str, Attribution | None]] = []
    previous: BlamedLine | None = None
    for line, attribution in zip(porcelain.lines, found, strict=True):
        key = (line.sha, attribution)
        contiguous = previous is not None and line.number == previous.number + 1
        if ranges and contiguous and keys[-1] == key:
            ranges[-1].end = line.number
            ranges[-1].texts.append(line.text)
        else:
            item = BlameRange(line.number, line.number, porcelain.commits[line.sha], [line.text])
            if attribution is not None:
                item.evidence = attribution.evidence
                item.request = RequestInfo(attribution.request, None, None)
                item.session = SessionInfo(attribution.session_id, "", None, None)
            ranges.append(item)
            keys.append(key)
        previous = line
    return ranges


def _describe(store: Store, path: str, ranges: list[BlameRange]) -> None:
    """Fill in each attributed range's session, request words and later fate from the store."""
    attributed = [item for item in ranges if item.session is not None and item.request is not None]
    if not attributed:
        return
    facts = store.session_facts(item.session.id for item in attributed if item.session)

    sessions = {item.session.id for item in attributed if item.session}
    asked = {**store.commit_requests(sessions), **store.file_requests_of(path)}
    notes = store.undone_notes_of(path)
    for item in attributed:
        assert item.session is not None and item.request is not None
        session_id, ordinal = item.session.id, item.request.ordinal
        source, title, model = facts.get(session_id, ("", None, None))
        item.session = SessionInfo(session_id, source, title, model)
        timestamp, text = asked.get((session_id, ordinal), (None, None))
        item.request = RequestInfo(ordinal, text, timestamp)
        item.later = [
            Later("reverted" if note.startswith(TAKEN_BACK) else "superseded", note)
            for sid, request, at, note in notes
            if sid == session_id and request <= ordinal < at
        ]
