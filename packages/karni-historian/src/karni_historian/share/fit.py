"""A shared document under the size cap: the oldest, lowest tiers give way first.

A shared file holds at most :data:`~karni_historian.ingest.shared_format.MAX_FILE_BYTES`
(a repository must never fill up with one session's history, and a reader
refuses a larger file). A document over it loses, in this order, until it
fits: the most detailed tier (``p1``) of its compartments, oldest first,
then ``p2``, then ``p3``; then whole compartments, oldest first; then the
files' notes, the lightest and oldest first; then the requests that shaped
the files, oldest first; then the facts, oldest first. What is dropped is
taken in batches sized by what it saves, then the document is measured
again, so a large session is not serialised once per step.
"""

from __future__ import annotations

import json

from karni_historian.ingest.shared_format import MAX_FILE_BYTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

__all__ = ["dumps", "fit"]


def dumps(document: dict[str, Any]) -> str:
    """The file's text: sorted keys, one-space indent, UTF-8 as it is, LF, a final newline.

    A lone surrogate (a transcript's broken escape) becomes ``?``: the file is valid UTF-8.
    """
    text = json.dumps(document, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    return text.encode("utf-8", "replace").decode("utf-8")


def _size(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8", "replace"))


def _steps(document: dict[str, Any]) -> Iterator[tuple[int, Callable[[], None]]]:
    """``(bytes it saves, step)`` of each reduction, in the order they are taken."""
    compartments = document["compartments"]
    for tier in ("p1", "p2", "p3"):
        for compartment in compartments:
            if compartment.get(tier):
                yield _size(compartment[tier]), _setter(compartment, tier)
    while compartments:  # each step is taken as soon as it is handed out
        yield _size(compartments[0]), compartments.pop(0).clear
    files = document["files"]
    notes = sorted(
        (
            (note["weight"], note["request"], path, note)
            for path, e in files.items()
            for note in e["notes"]
        ),
        key=lambda item: (item[0], item[1], item[2]),
    )
    for _weight, _request, path, note in notes:
        yield _size(note), _remover(files[path]["notes"], note)
    requests = sorted(
        (
            (r["time"] or "", r["request"], path, r)
            for path, e in files.items()
            for r in e["requests"]
        ),
        key=lambda item: (item[0], item[1], item[2]),
    )
    for _time, _request, path, request in requests:
        yield _size(request), _remover(files[path]["requests"], request)
    facts = document["facts"]
    while facts:
        yield _size(facts[0]), facts.pop(0).clear


def _setter(compartment: dict[str, Any], tier: str) -> Callable[[], None]:
    def drop() -> None:
        compartment[tier] = None

    return drop


def _remover(items: list[dict[str, Any]], item: dict[str, Any]) -> Callable[[], None]:
    def drop() -> None:
        for index, other in enumerate(items):
            if other is item:
                del items[index]
                return

    return drop


def fit(document: dict[str, Any], limit: int = MAX_FILE_BYTES) -> str:
    """The document's text within ``limit`` bytes, reduced in place when it must be."""
    text = dumps(document)
    steps = _steps(document)
    while len(text.encode("utf-8")) > limit:
        excess = len(text.encode("utf-8")) - limit
        saved = 0
        for size, step in steps:
            step()
            saved += size
            if saved >= excess:
                break
        else:
            document["files"] = {
                path: e for path, e in document["files"].items() if e["requests"] or e["notes"]
            }
            return dumps(document)
        text = dumps(document)
    return text
