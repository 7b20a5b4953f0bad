"""Turning records into the lines an agent reads.

One line per record (number, title, status, date), so Karni's ~300-token cap
keeps many of them. Approaches that no longer stand come first, under a
heading that says not to repeat them, each naming what replaced it; then the
standing decisions. Within each group the newest record (highest number, as
ADR tools number records in order) comes first.
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Sequence

    from karni_history_adr.records import AdrRecord

__all__ = [
    "ACCEPTED_HEADING",
    "NOT_AGAIN_HEADING",
    "STANDING_HEADING",
    "format_context",
    "format_project",
    "record_line",
]

NOT_AGAIN_HEADING = "**Superseded, deprecated or rejected decisions (do NOT repeat)**"
STANDING_HEADING = "**Decisions that concern this file (newest first)**"
ACCEPTED_HEADING = "**Accepted decisions (newest first)**"


def _newest_first(records: Sequence[AdrRecord]) -> list[AdrRecord]:
    return sorted(records, key=lambda record: (record.number, record.date or ""), reverse=True)


def _label(record: AdrRecord) -> str:
    return f"ADR {record.number}: {record.title}"


def record_line(record: AdrRecord, all_records: Sequence[AdrRecord] = ()) -> str:
    """One record as ``- ADR 4: Title (status, date)``, naming its replacement if any."""
    details = []
    if record.superseded_by:
        by_number = {r.number: r for r in all_records if r.directory == record.directory}
        replacements = []
        for number in record.superseded_by:
            replacement = by_number.get(number)
            replacements.append(_label(replacement) if replacement else f"ADR {number}")
        details.append("superseded by " + "; ".join(replacements))
    elif record.status:
        details.append(record.status)
    if record.date:
        details.append(record.date)
    suffix = f" ({', '.join(details)})" if details else ""
    return f"- {_label(record)}{suffix}"


def format_context(
    matching: Sequence[AdrRecord],
    all_records: Sequence[AdrRecord],
    *,
    with_files: bool = False,
) -> str | None:
    """The brief for one file: records that no longer stand first, then the standing ones.

    Args:
        matching: The records that mention the file.
        all_records: Every record, to name the replacements.
        with_files: Add each record's file on an indented line (for ``show``).

    Returns:
        The brief, or None when ``matching`` is empty.
    """
    if not matching:
        return None
    lines: list[str] = []
    groups = (
        (NOT_AGAIN_HEADING, [r for r in matching if not r.stands]),
        (STANDING_HEADING, [r for r in matching if r.stands]),
    )
    for heading, records in groups:
        if not records:
            continue
        lines.append(heading)
        for record in _newest_first(records):
            lines.append(record_line(record, all_records))
            if with_files:
                lines.append(f"  {record.file}")
    return "\n".join(lines)


def format_project(records: Sequence[AdrRecord], *, with_files: bool = False) -> str | None:
    """The project brief: the accepted decisions, newest first; None if there are none."""
    accepted = [record for record in records if record.status == "accepted"]
    if not accepted:
        return None
    lines = [ACCEPTED_HEADING]
    for record in _newest_first(accepted):
        lines.append(f"- {_label(record)}" + (f" ({record.date})" if record.date else ""))
        if with_files:
            lines.append(f"  {record.file}")
    return "\n".join(lines)
