"""What each request wrote in each file: the messages that edited it, its commits, its line ranges.

The evidence ``blame`` and shared history (``docs/how-to/team-history.md``)
keep of a session's edits, worked out from its requests
(:func:`~karni_historian.condense.file_notes.session.read_requests`): per
file and request (the one ``file_requests`` names: the prompt that asked; a
correction asks anew, a continuation does not), the messages whose edits
landed, the commits that landed them (a successful ``git commit`` lands
every edit made since the one before), and the hash of each line range the
edits wrote (:mod:`karni_historian.line_hashes`).
"""

from __future__ import annotations

from karni_historian.condense.file_notes.prompts import CORRECTION
from karni_historian.condense.file_notes.session import Edit, Shell
from karni_historian.line_hashes import written_ranges

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from karni_historian.condense.file_notes.session import Request

__all__ = ["Written", "written_by_request"]


class Written:
    """What one request wrote in one file.

    Attributes:
        edits: The messages whose edits of the file landed, in order.
        commits: The short hashes of the commits that landed them, in order.
        ranges: Each written range's hash and its line count, first written first.
    """

    __slots__ = ("commits", "edits", "ranges")

    def __init__(self) -> None:
        """An empty record."""
        self.edits: list[int] = []
        self.commits: list[str] = []
        self.ranges: dict[str, int] = {}


def written_by_request(requests: Iterable[Request]) -> dict[tuple[str, int], Written]:
    """``(path, request)`` → what that request wrote there, over a session's requests."""
    found: dict[tuple[str, int], Written] = {}
    dirty: set[tuple[str, int]] = set()
    for request in requests:
        asking = request.ordinal
        for attempt in request.attempts:
            if attempt.kind == CORRECTION:
                asking = attempt.ordinal
            for event in attempt.events:
                if isinstance(event, Edit) and event.error is None:
                    key = (event.path, asking)
                    entry = found.setdefault(key, Written())
                    if event.ordinal not in entry.edits:
                        entry.edits.append(event.ordinal)
                    for _old, new in event.pairs:
                        for _start, lines, digest in written_ranges(new):
                            entry.ranges.setdefault(digest, lines)
                    dirty.add(key)
                elif isinstance(event, Shell) and event.run.commit and event.run.failed is not True:
                    for key in sorted(dirty):
                        if event.run.commit[0] not in found[key].commits:
                            found[key].commits.append(event.run.commit[0])
                    dirty.clear()
    return found
