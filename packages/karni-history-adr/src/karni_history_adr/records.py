"""Reading Architecture Decision Records, leniently.

Three common shapes are understood:

- MADR 3/4: YAML-like front matter (``status:``, ``date:``) before the title;
- MADR 2: ``* Status: accepted`` and ``* Date: 2024-01-31`` bullets under the title;
- adr-tools and Michael Nygard's template: ``# 1. Title``, an optional
  ``Date:`` line, and a ``## Status`` section whose lines may say
  ``Superseded by [5. Title](0005-title.md)`` or ``Supersedes ...``.

Only Markdown files whose name starts with a number (``0001-use-x.md``,
``adr-0001-use-x.md``) are records. Anything that cannot be read as a record
(no title, not UTF-8, too large, not a file) is skipped, never an error.
"""

from __future__ import annotations

import os

from karni_history_adr.discovery import adr_directories
from karni_history_adr.scanning import (
    first_reference,
    first_word,
    header_field,
    heading_text,
    iso_date,
    link_targets,
    name_number,
    title_number,
    title_text,
)

__all__ = [
    "MAX_RECORD_BYTES",
    "TERMINAL_STATUSES",
    "AdrRecord",
    "load_records",
    "parse_record",
    "record_number",
]

MAX_RECORD_BYTES = 256 * 1024
"""Larger files are skipped: a decision record is a page, not a log."""

TERMINAL_STATUSES = frozenset({"superseded", "deprecated", "rejected"})
"""Statuses of approaches that no longer stand."""


_FIELDS = ("number", "title", "status", "date", "file", "text", "superseded_by", "supersedes")
"""AdrRecord's fields, in the order its constructor takes them."""


class AdrRecord:
    """One decision record, as far as it could be read; read-only once built.

    A plain class rather than a dataclass: importing ``dataclasses`` would cost
    more than reading a project's records (docs/performance.md).
    """

    __slots__ = _FIELDS

    number: int
    """The record's number, from its file name (``0004-…`` → 4)."""

    title: str
    """The title without its number prefix: ``# 4. Soft-delete`` gives ``Soft-delete``."""

    status: str | None
    """The status's first word, lowercase (``accepted``, ``superseded``, …), or None."""

    date: str | None
    """The record's date as ``YYYY-MM-DD``, or None when it has none."""

    file: str
    """The record's project-relative POSIX path, e.g. ``doc/adr/0004-soft-delete-events.md``."""

    text: str
    """The whole record, used to find what it mentions."""

    superseded_by: tuple[int, ...]
    """Numbers of the records that replace this one."""

    supersedes: tuple[int, ...]
    """Numbers of the records this one replaces."""

    def __init__(
        self,
        number: int,
        title: str,
        status: str | None,
        date: str | None,
        file: str,
        text: str = "",
        superseded_by: tuple[int, ...] = (),
        supersedes: tuple[int, ...] = (),
    ) -> None:
        values = (number, title, status, date, file, text, superseded_by, supersedes)
        for name, value in zip(_FIELDS, values, strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"AdrRecord is read-only: cannot set `{name}`; use `replace`")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in _FIELDS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AdrRecord):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _FIELDS if name != "text")
        return f"AdrRecord({shown})"

    def replace(self, **changes: object) -> AdrRecord:
        """A copy of this record with ``changes`` (field name → new value)."""
        values: dict[str, object] = {name: getattr(self, name) for name in _FIELDS}
        unknown = set(changes) - set(values)
        if unknown:
            raise TypeError(f"AdrRecord has no field {sorted(unknown)[0]!r}")
        values.update(changes)
        return AdrRecord(**values)  # type: ignore[arg-type]

    @property
    def directory(self) -> str:
        """The ADR folder the record lives in."""
        return self.file.rsplit("/", 1)[0]

    @property
    def stands(self) -> bool:
        """Whether the decision still stands (not superseded, deprecated or rejected)."""
        return self.status not in TERMINAL_STATUSES


def record_number(file_name: str) -> int | None:
    """The number a record's file name starts with, or None if it is not a record's name.

    Names that start with a date (``2024-01-31-…``) or hold unprintable
    characters are not records' names.
    """
    if not file_name.isprintable():
        return None
    return name_number(file_name)


def _clean(text: str) -> str:
    """A title or status as one line, through karni-core's sanitiser (``docs/security.md``)."""
    from karni.agent.common.sanitize import clean_field

    return " ".join(clean_field(text).split())


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1].strip()
    return value


def _front_matter(lines: list[str]) -> tuple[dict[str, str], list[str]]:
    """The ``key: value`` pairs of leading ``---`` front matter, and the remaining lines."""
    if not lines or lines[0].strip() != "---":
        return {}, lines
    for index in range(1, min(len(lines), 200)):
        if lines[index].strip() in ("---", "..."):
            values: dict[str, str] = {}
            for line in lines[1:index]:
                key, sep, value = line.partition(":")
                if sep and key.strip() and not key.startswith((" ", "\t", "-", "#")):
                    values[key.strip().lower()] = _unquote(value)
            return values, lines[index + 1 :]
    return {}, lines


def _references(text: str) -> tuple[int, ...]:
    """Record numbers named by links (``(0005-x.md)``) or text (``ADR-0005``, ``5.``)."""
    numbers: list[int] = []
    for target in link_targets(text):
        number = record_number(target.rsplit("/", 1)[-1].split("#", 1)[0])
        if number is not None and number not in numbers:
            numbers.append(number)
    if not numbers:
        number = first_reference(text)
        if number is not None:
            numbers.append(number)
    return tuple(numbers)


def parse_record(file: str, text: str) -> AdrRecord | None:
    """Read one record; None when it is not a readable decision record.

    Args:
        file: The record's project-relative POSIX path; its name gives the number.
        text: The file's content.

    Returns:
        The record, or None when the name has no number or the text no title.
    """
    number = record_number(file.rsplit("/", 1)[-1])
    if number is None:
        return None
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    meta, body = _front_matter(lines)
    found = _title(body, number)
    if found is None:
        return None
    title, title_index = found
    status_lines, header_fields = _status_section_and_header(body[title_index + 1 :])
    status, superseded_by, supersedes = _status(
        meta.get("status") or header_fields.get("status"), status_lines
    )
    return AdrRecord(
        number=number,
        title=title,
        status=status,
        date=_date(meta.get("date") or header_fields.get("date") or ""),
        file=file,
        text=text,
        superseded_by=superseded_by,
        supersedes=supersedes,
    )


def _title(body: list[str], number: int) -> tuple[str, int] | None:
    """The first ``# Title`` (without the record's own number) and its line index."""
    for index, line in enumerate(body):
        title = title_text(line)
        if title is not None and title.strip():
            prefix = title_number(title)
            if prefix is not None and prefix[0] == number:
                title = title[prefix[1] :]
            title = _clean(title)
            return (title, index) if title else None
    return None


def _status_section_and_header(lines: list[str]) -> tuple[list[str], dict[str, str]]:
    """The first ``## Status`` section's lines, and the fields between the title and a heading.

    The fields are ``Status:`` and ``Date:`` lines (MADR 2 bullets included).
    """
    status_lines: list[str] = []
    header_fields: dict[str, str] = {}
    in_header = True  # between the title and the first section heading
    in_status = False
    seen_status = False
    for line in lines:
        heading = heading_text(line)
        if heading is not None:
            in_header = False
            in_status = not seen_status and heading.strip().lower() in (
                "status",
                "status:",
            )
            seen_status = seen_status or in_status
            continue
        if in_status and line.strip():
            status_lines.append(line.strip())
        elif in_header:
            field = header_field(line)
            if field is not None:
                header_fields.setdefault(field[0], field[1].strip())
    return status_lines, header_fields


def _status(
    raw_status: str | None, section: list[str]
) -> tuple[str | None, tuple[int, ...], tuple[int, ...]]:
    """The status word and the records this one is superseded by and supersedes."""
    status_lines = [raw_status, *section] if raw_status else list(section)
    status_lines = [_clean(line.lstrip("*_-+ ").strip()) for line in status_lines]
    status_lines = [line for line in status_lines if line]
    superseded_by: list[int] = []
    supersedes: list[int] = []
    for line in status_lines:
        lowered = line.lower()
        if lowered.startswith("superseded by"):
            superseded_by.extend(n for n in _references(line[13:]) if n not in superseded_by)
        elif lowered.startswith("supersedes"):
            supersedes.extend(n for n in _references(line[10:]) if n not in supersedes)
    status = first_word(status_lines[0]) if status_lines else None
    if superseded_by:
        status = "superseded"
    return status, tuple(superseded_by), tuple(supersedes)


def _date(raw_date: str) -> str | None:
    """The first ``YYYY-MM-DD`` in the date field, or None."""
    found = iso_date(raw_date)
    return "-".join(found) if found else None


def _read(root: str, path: str) -> str | None:
    """The record's text with universal newlines; None when unreadable, not UTF-8 or too large.

    A record that is a link (or lies in a linked folder) leading out of the
    project is not read: ``docs/adr/0004-x.md`` pointing at ``~/notes/private.md``
    is someone's file, not the project's (:func:`karni.agent.common.paths.leads_inside`).
    """
    from karni.agent.common.files import read_regular_file
    from karni.agent.common.paths import leads_inside

    real = leads_inside(root, path)
    if real is None:
        return None
    try:
        data = read_regular_file(real, MAX_RECORD_BYTES, follow_symlinks=False)
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except (OSError, UnicodeError, ValueError):
        return None


def _link_supersessions(records: list[AdrRecord]) -> list[AdrRecord]:
    """Mark a record superseded when a later one says it supersedes it.

    adr-tools writes both sides of the link, but hand-written records often
    only say ``Supersedes`` on the new one.
    """
    replaced_by: dict[tuple[str, int], list[int]] = {}
    for record in records:
        for old in record.supersedes:
            replaced_by.setdefault((record.directory, old), []).append(record.number)
    linked = []
    for record in records:
        newer = replaced_by.get((record.directory, record.number))
        if newer and record.status not in TERMINAL_STATUSES:
            record = record.replace(status="superseded", superseded_by=tuple(newer))
        elif newer and not record.superseded_by and record.status == "superseded":
            record = record.replace(superseded_by=tuple(newer))
        linked.append(record)
    return linked


def load_records(project_root: str | os.PathLike[str]) -> list[AdrRecord]:
    """Every readable record in the project's ADR folders, sorted by folder and number."""
    root = os.fspath(project_root)
    records: list[AdrRecord] = []
    for folder in adr_directories(root):
        try:
            with os.scandir(os.path.join(root, folder)) as listing:
                names = sorted(entry.name for entry in listing if entry.is_file())
        except OSError:
            continue
        for name in names:
            if record_number(name) is None:
                continue
            text = _read(root, os.path.join(root, folder, name))
            record = parse_record(f"{folder}/{name}", text) if text is not None else None
            if record is not None:
                records.append(record)
    return _link_supersessions(records)
