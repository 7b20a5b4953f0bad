"""Dates on compartments: the local calendar day of their first and last message.

Transcripts carry ISO 8601 timestamps; a compartment shows the day in the
machine's local time zone (``YYYY-MM-DD``), so an evening session is not dated
tomorrow. A timestamp without a zone is taken as local already.

Converting an instant to local time (``astimezone()``) costs about a
microsecond, twice per compartment; :class:`LocalDays` asks the zone's offset
once per UTC hour instead, at both ends of the hour, and adds it to each UTC
instant of an hour where the two agree (an hour holding a change of offset
converts each instant).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from karni_historian.model import Compartment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from datetime import datetime, timedelta

    from karni_historian.model import Compartment, Message

__all__ = ["LocalDays", "dated", "local_date"]


def local_date(timestamp: str | None) -> str | None:
    """The local ``YYYY-MM-DD`` of an ISO 8601 timestamp, or None."""
    return _local_date(timestamp, datetime)


def _local_date(
    timestamp: str | None,
    moments: type[datetime],
    utc_offset: Callable[[datetime], timedelta | None] | None = None,
) -> str | None:
    """:func:`local_date` with the ``datetime`` class already imported.

    ``utc_offset``, when given, is asked for the local offset of a UTC
    instant first (:meth:`LocalDays._steady_offset`); None from it means
    convert as usual.
    """
    if not timestamp:
        return None
    try:
        moment = moments.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.date().isoformat()
    if utc_offset is not None and not moment.utcoffset():
        offset = utc_offset(moment)
        if offset is not None:
            return (moment + offset).date().isoformat()
    return moment.astimezone().date().isoformat()


_REMEMBERED = 4096
"""Timestamps (and hours) a :class:`LocalDays` remembers; it starts over when full."""


class LocalDays:
    """:func:`local_date` for many timestamps, the zone's offset looked up once per UTC hour."""

    def __init__(self) -> None:
        """Start with nothing converted."""
        self._moments = datetime
        self._rest_of_hour = timedelta(hours=1) - timedelta(microseconds=1)
        self._days: dict[str | None, str | None] = {}
        self._offsets: dict[tuple[int, int, int, int], timedelta | None] = {}

    def day(self, timestamp: str | None) -> str | None:
        """The local ``YYYY-MM-DD`` of ``timestamp``, as :func:`local_date` gives it."""
        days = self._days
        if timestamp not in days:
            if len(days) >= _REMEMBERED:
                days.clear()
            days[timestamp] = _local_date(timestamp, self._moments, self._steady_offset)
        return days[timestamp]

    def _steady_offset(self, moment: datetime) -> timedelta | None:
        """The local offset throughout ``moment``'s UTC hour; None when it changes in it."""
        hour = (moment.year, moment.month, moment.day, moment.hour)
        if hour not in self._offsets:
            if len(self._offsets) >= _REMEMBERED:
                self._offsets.clear()
            first = moment.replace(minute=0, second=0, microsecond=0)
            offset = first.astimezone().utcoffset()
            last = (first + self._rest_of_hour).astimezone().utcoffset()
            self._offsets[hour] = offset if offset == last else None
        return self._offsets[hour]


def dated(
    compartments: Sequence[Compartment],
    by_ordinal: Mapping[int, Message],
    days: LocalDays | None = None,
) -> list[Compartment]:
    """The compartments with ``start_date`` and ``end_date`` from their messages.

    ``days``: the converter to use (one kept across calls remembers more).
    """
    local = (days or LocalDays()).day

    def day(message: Message | None) -> str | None:
        return None if message is None else local(message.timestamp)

    # Every field by position, in the class's order: a third cheaper than by
    # keyword, once per compartment of a run (tests/test_dates.py checks each field).
    return [
        Compartment(
            c.start,
            c.end,
            c.title,
            c.p1,
            c.p2,
            c.p3,
            c.p4,
            c.importance,
            day(by_ordinal.get(c.start)),
            day(by_ordinal.get(c.end)),
            c.episode_type,
            c.legacy,
            c.content,
        )
        for c in compartments
    ]
