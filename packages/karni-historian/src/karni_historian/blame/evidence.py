"""Which session and request wrote each line: the evidence, strongest first.

For each line ``git blame`` gives the commit that last changed it. The
historian then looks, in this order (``docs/historian/blame.md``):

1. **commit**: the commit is one a session's git command printed
   (``[main 1a2b3c4] subject``), or **rebased-commit**: the commit a rebase
   or cherry-pick made of one (same subject, author and author date; the
   original looked up in git, or, when git no longer has it, the same subject
   within :data:`REBASE_WINDOW` of the session's command). The request is the
   one of that session that wrote the line's text, else the one that made
   the commit;
2. **content**: the line lies in a block of lines exactly as a session's
   edit wrote them (whitespace at line ends aside), written before the
   commit: this survives squash merges and cherry-picks;
3. **edited**: the same, compared loosely (no whitespace, one quote style):
   the session edited those lines before the commit, and a formatter
   changed them since.

A block counts only when it holds a line that can tell its writer alone
(distinctive, and once in the file) or three distinctive lines. A line with
no evidence has no session: a wrong request is worse than none.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime

from karni_historian.blame.git import Commit, Porcelain, look_up_commits
from karni_historian.condense.file_notes.undone import PUT_BACK
from karni_historian.written_ranges import (
    decode_hashes,
    is_distinctive,
    line_hash,
    loose_line,
    normal_line,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from karni_historian.store import Store
    from karni_historian.store.attribution import RecordedCommit, Written

__all__ = [
    "COMMIT",
    "CONTENT",
    "EDITED",
    "REBASED",
    "REBASE_WINDOW",
    "Attribution",
    "attribute",
    "epoch",
]

COMMIT = "commit"
REBASED = "rebased-commit"
CONTENT = "content"
EDITED = "edited"

SLACK = 120
"""Seconds an edit may seem to follow the commit that holds it (clocks of two machines)."""

REBASE_WINDOW = 600
"""Seconds between a session's ``git commit`` and a same-subject commit's author date, when git
no longer has the session's commit to compare authors with."""


@dataclass(frozen=True)
class Attribution:
    """Who wrote one line: the session, the prompt that asked (``file_requests``' key), how."""

    session_id: str
    request: int
    evidence: str


@dataclass(frozen=True)
class _Writer:
    session_id: str
    request: int
    ordinal: int
    time: float | None


def epoch(timestamp: str | None) -> float | None:
    """Seconds since the epoch of an ISO 8601 time (UTC if it names no zone); None if unreadable."""
    if not timestamp:
        return None
    try:
        moment = datetime.fromisoformat(timestamp.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def attribute(store: Store, root: str, path: str, porcelain: Porcelain) -> list[Attribution | None]:
    """Each blamed line's writer, in the order of ``porcelain.lines``."""
    texts = [line.text for line in porcelain.lines]
    written = _standing(store.written_to(path), store.undone_notes_of(path))
    candidates = _content(texts, written)
    owners = _commit_owners(store, root, porcelain.commits)
    found: list[Attribution | None] = []
    for line, here in zip(porcelain.lines, candidates, strict=True):
        commit = porcelain.commits.get(line.sha)
        found.append(_decide(commit, owners.get(line.sha), here))
    return _blank_lines_joined(porcelain, found)


def _standing(written: list[Written], notes: list[tuple[str, int, int, str]]) -> list[Written]:
    """The writes whose text was not taken back by the user or by git before a later message.

    Whatever such a write shared with the text before it is that earlier
    text's again once it is put back (a rewrite keeps most lines as they
    were), so it names nobody; the request's writes after the undo still count.
    """
    taken: dict[tuple[str, int], int] = {}
    for session_id, request, ordinal, text in notes:
        if text.startswith(PUT_BACK):
            key = (session_id, request)
            taken[key] = max(taken.get(key, 0), ordinal)
    return [w for w in written if w.ordinal >= taken.get((w.session_id, w.request), 0)]


def _blank_lines_joined(
    porcelain: Porcelain, found: list[Attribution | None]
) -> list[Attribution | None]:
    """Blank lines without a writer take the one of the line below them, in the same commit.

    An edit's written range leaves out the blank lines at its ends (they tell
    nothing); the blank lines above a function belong with it.
    """
    lines = porcelain.lines
    for index in range(len(lines) - 2, -1, -1):
        below = found[index + 1]
        if (
            found[index] is None
            and below is not None
            and not lines[index].text.strip()
            and lines[index].sha == lines[index + 1].sha
            and lines[index].number + 1 == lines[index + 1].number
        ):
            found[index] = below
    return found


def _decide(
    commit: Commit | None,
    owner: tuple[RecordedCommit, str] | None,
    candidates: list[tuple[_Writer, bool]],
) -> Attribution | None:
    """One line's attribution from its commit's owner and the sessions that wrote its text."""
    limit = None if commit is None or not commit.committed else commit.time + SLACK
    eligible = [
        (w, exact) for w, exact in candidates if limit is None or w.time is None or w.time <= limit
    ]
    if owner is not None:
        recorded, kind = owner
        own = [c for c in eligible if c[0].session_id == recorded.session_id]
        if own:
            return Attribution(recorded.session_id, _best(own).request, kind)
        if not eligible:
            return Attribution(recorded.session_id, recorded.request, kind)
    if not eligible:
        return None
    best = _best(eligible)
    exact = any(exact for w, exact in eligible if w == best)
    return Attribution(best.session_id, best.request, CONTENT if exact else EDITED)


def _best(candidates: list[tuple[_Writer, bool]]) -> _Writer:
    """The writer to credit: an exact match before a loose one, then the latest write."""
    return max(candidates, key=lambda c: (c[1], c[0].time or 0.0, c[0].ordinal))[0]


def _content(texts: list[str], written: list[Written]) -> list[list[tuple[_Writer, bool]]]:
    """For each line, the writers whose written blocks hold it, exactly (True) or loosely."""
    found: list[list[tuple[_Writer, bool]]] = [[] for _ in texts]
    if not written or not texts:
        return found
    distinct = [is_distinctive(text) for text in texts]
    for exact, normalise in ((True, normal_line), (False, loose_line)):
        today = [line_hash(normalise(text)) for text in texts]
        counts = Counter(today)
        index: dict[str, list[int]] = {}
        for position, value in enumerate(today):
            index.setdefault(value, []).append(position)
        for entry in written:
            writer = _Writer(entry.session_id, entry.request, entry.ordinal, epoch(entry.timestamp))
            hashes = decode_hashes(entry.lines if exact else entry.loose)
            for start, end in _blocks(hashes, today, index):
                anchors = [i for i in range(start, end) if distinct[i]]
                if len(anchors) >= 3 or any(counts[today[i]] == 1 for i in anchors):
                    for i in range(start, end):
                        if exact or not any(w == writer for w, _ in found[i]):
                            found[i].append((writer, exact))
    return found


def _blocks(
    hashes: list[str], today: list[str], index: dict[str, list[int]]
) -> Iterator[tuple[int, int]]:
    """The maximal runs of today's lines equal to a run of ``hashes``, as ``(start, end)``."""
    for k, value in enumerate(hashes):
        for i in index.get(value, ()):
            if k > 0 and i > 0 and today[i - 1] == hashes[k - 1]:
                continue  # inside a run found from its start
            n = 1
            while i + n < len(today) and k + n < len(hashes) and today[i + n] == hashes[k + n]:
                n += 1
            yield i, i + n


def _prefixes(sha: str) -> Iterable[str]:
    """The short forms a session may have printed of ``sha``."""
    return [sha[:n] for n in range(7, 13)] + [sha]


def _commit_owners(
    store: Store, root: str, commits: dict[str, Commit]
) -> dict[str, tuple[RecordedCommit, str]]:
    """Each blamed commit a session made (or that a rebase made of one), with how it is known."""
    real = [c for c in commits.values() if c.committed]
    recorded = store.commits_named(
        (p for c in real for p in _prefixes(c.sha)), (c.summary for c in real if c.summary)
    )
    owners: dict[str, tuple[RecordedCommit, str]] = {}
    for commit in real:
        direct = [r for r in recorded if len(r.hash) >= 7 and commit.sha.startswith(r.hash)]
        if len({r.session_id for r in direct}) == 1:
            owners[commit.sha] = (direct[-1], COMMIT)
    claimed = {r.hash for r in recorded if any(s.startswith(r.hash) for s in commits)}
    loose = [r for r in recorded if r.hash not in claimed]
    if not loose:
        return owners
    known = look_up_commits(root, (r.hash for r in loose))
    for commit in real:
        if commit.sha in owners:
            continue
        twins = [r for r in loose if r.subject == commit.summary and _same(commit, r, known)]
        if len({r.session_id for r in twins}) == 1:
            owners[commit.sha] = (twins[-1], REBASED)
    return owners


def _same(
    commit: Commit, recorded: RecordedCommit, known: dict[str, tuple[str, str, int, str]]
) -> bool:
    """Whether ``commit`` is what a rebase made of the recorded one."""
    original = known.get(recorded.hash)
    if original is not None:
        author, mail, when, subject = original
        return (author, mail, when, subject) == (
            commit.author,
            commit.mail,
            commit.time,
            commit.summary,
        )
    made = epoch(recorded.timestamp)
    return made is not None and abs(commit.time - made) <= REBASE_WINDOW
