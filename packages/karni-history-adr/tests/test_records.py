"""Reading records of every common shape, leniently."""

from __future__ import annotations

from pathlib import Path

import pytest
from karni_history_adr.records import AdrRecord, load_records, parse_record, record_number


def _table(records: list[AdrRecord]) -> str:
    lines = []
    for r in records:
        lines.append(
            f"{r.number} | {r.status} | {r.date} | by={list(r.superseded_by)} "
            f"supersedes={list(r.supersedes)} | {r.title} | {r.file}"
        )
    return "\n".join(lines) + "\n"


def test_adr_tools_records(adr_tools_project: Path, snapshot_text: object) -> None:
    assert _table(load_records(adr_tools_project)) == snapshot_text


def test_madr_records(madr_project: Path, snapshot_text: object) -> None:
    assert _table(load_records(madr_project)) == snapshot_text


def test_malformed_records_are_skipped_not_errors(adr_tools_project: Path) -> None:
    numbers = [record.number for record in load_records(adr_tools_project)]
    # 8: no title; 9: not UTF-8; 11: a folder; 12: too large; 13: an unprintable name;
    # README.md and template.md: no number.
    assert numbers == [1, 2, 3, 4, 5, 6, 7, 10]


def test_record_numbers_come_from_file_names() -> None:
    assert record_number("0042-use-x.md") == 42
    assert record_number("adr-0007-use-x.md") == 7
    assert record_number("ADR_12_use_x.markdown") == 12
    assert record_number("README.md") is None
    assert record_number("0001-use-x.txt") is None
    assert record_number("2024-01-01-notes.md") is None  # dated, not numbered
    assert record_number("0003-\x1b[2Jclear.md") is None


def test_a_newer_records_supersedes_marks_the_older_one() -> None:
    old = "# 1. Old\n\n## Status\n\nAccepted\n"
    new = "# 2. New\n\n## Status\n\nAccepted\n\nSupersedes ADR-0001\n"
    from karni_history_adr.records import _link_supersessions

    records = _link_supersessions(
        [parse_record("doc/adr/0001-old.md", old), parse_record("doc/adr/0002-new.md", new)]
    )
    assert [(r.number, r.status, r.superseded_by) for r in records] == [
        (1, "superseded", (2,)),
        (2, "accepted", ()),
    ]


def test_status_words_are_normalised() -> None:
    text = "# 3. X\n\n## Status\n\n**Deprecated** since 2025\n"
    record = parse_record("doc/adr/0003-x.md", text)
    assert record is not None and record.status == "deprecated" and record.date is None


def test_a_title_only_record_is_kept_without_status() -> None:
    record = parse_record("docs/adr/0001-x.md", "# Just a title\n")
    assert record is not None
    assert (record.number, record.title, record.status, record.date) == (
        1,
        "Just a title",
        None,
        None,
    )


def test_empty_and_titleless_texts_are_not_records() -> None:
    assert parse_record("doc/adr/0001-x.md", "") is None
    assert parse_record("doc/adr/0001-x.md", "## Status\n\nAccepted\n") is None
    assert parse_record("doc/adr/0001-x.md", "#\n") is None
    assert parse_record("doc/adr/notes.md", "# Title\n") is None


def test_a_record_is_read_only_and_replace_copies_it() -> None:
    record = AdrRecord(4, "Soft-delete", "accepted", None, "doc/adr/0004-soft-delete.md", "body")
    changed = record.replace(status="superseded", superseded_by=(5,))
    assert (changed.status, changed.superseded_by, changed.text) == ("superseded", (5,), "body")
    assert record.status == "accepted"
    assert changed != record
    assert record == record.replace()
    assert "body" not in repr(record)
    with pytest.raises(AttributeError, match="read-only"):
        record.status = "rejected"  # type: ignore[misc]
    with pytest.raises(TypeError, match="no field 'colour'"):
        record.replace(colour="red")
