"""The garbage collector held back while the pipeline churns through messages.

Ingest and a historian run make and drop millions of small objects (decoded
records, message parts) that hold no reference cycles. The cyclic collector
would walk them every 700 allocations and, on its full passes, walk every
object that existed before too (together about 10 % of a run's time and 2 %
of an ingest's, measured). :func:`quiet_collector` freezes what exists
(so full passes leave it out) and collects the youngest generation less
often, then restores the collector; memory stays flat, as the objects are
freed by reference counting as soon as they are let go. See
``docs/historian/ingest.md``.
"""

from __future__ import annotations

import gc

__all__ = ["YOUNG_COLLECTION_THRESHOLD", "quiet_collector"]

YOUNG_COLLECTION_THRESHOLD = 50_000
"""Allocations between two collections of the youngest generation, at least."""


def quiet_collector() -> _QuietCollector:
    """A ``with`` block during which the collector runs less (see the module)."""
    return _QuietCollector()


class _QuietCollector:
    __slots__ = ("_thresholds",)

    def __init__(self) -> None:
        self._thresholds = (0, 0, 0)

    def __enter__(self) -> None:
        self._thresholds = gc.get_threshold()
        young, *older = self._thresholds
        gc.set_threshold(max(young, YOUNG_COLLECTION_THRESHOLD), *older)
        gc.freeze()

    def __exit__(self, *exc: object) -> None:
        gc.unfreeze()
        gc.set_threshold(*self._thresholds)
