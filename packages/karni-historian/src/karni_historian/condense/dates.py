"""Dates on compartments: the local calendar day of their first and last message.

Transcripts carry ISO 8601 timestamps; a compartment shows the day in the
machine's local time zone (``YYYY-MM-DD``), so an evening session is not dated
tomorrow. A timestamp without a zone is taken as local already.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime

    from karni_historian.model import Compartment, Message

__all__ = ["dated", "local_date"]


def local_date(timestamp: str | None) -> str | None:
    """The local ``YYYY-MM-DD`` of an ISO 8601 timestamp, or None."""
    from datetime import datetime

    return _local_date(timestamp, datetime)


def _local_date(timestamp: str | None, moments: type[datetime]) -> str | None:
    """:func:`local_date` with the ``datetime`` class already imported."""
    if not timestamp:
        return None
    try:
        moment = moments.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.date().isoformat()
    return moment.astimezone().date().isoformat()


def dated(
    compartments: Sequence[Compartment], by_ordinal: Mapping[int, Message]
) -> list[Compartment]:
    """The compartments with ``start_date`` and ``end_date`` from their messages."""
    from datetime import datetime

    from karni_historian.model import Compartment

    days: dict[str | None, str | None] = {}

    def day(message: Message | None) -> str | None:
        if message is None:
            return None
        stamp = message.timestamp
        if stamp not in days:
            days[stamp] = _local_date(stamp, datetime)
        return days[stamp]

    result: list[Compartment] = []
    for c in compartments:
        result.append(
            Compartment(
                start=c.start,
                end=c.end,
                title=c.title,
                p1=c.p1,
                p2=c.p2,
                p3=c.p3,
                p4=c.p4,
                importance=c.importance,
                start_date=day(by_ordinal.get(c.start)),
                end_date=day(by_ordinal.get(c.end)),
                episode_type=c.episode_type,
                legacy=c.legacy,
                content=c.content,
            )
        )
    return result
