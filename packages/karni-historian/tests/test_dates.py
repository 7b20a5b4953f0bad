"""``dated``: the compartments as they were, with the dates of their end messages."""

from dataclasses import fields, replace

from karni_historian.condense.dates import LocalDays, dated
from karni_historian.model import Compartment, Message


def test_dated_keeps_every_other_field():
    # dated builds each compartment by position: a field it forgot, or one
    # added to Compartment later, would come back as its default here.
    values = {
        f.name: (f"{f.name}-value" if f.type in ("str", "str | None") else f.default)
        for f in fields(Compartment)
    }
    values.update(start=3, end=7, importance=77, legacy=True)
    original = Compartment(**values)
    assert all(getattr(original, f.name) != f.default for f in fields(Compartment))
    messages = {
        3: Message(3, "user", (), timestamp="2026-03-02T10:00:00.000Z"),
        7: Message(7, "assistant", (), timestamp="2026-03-04T10:00:00.000Z"),
    }
    days = LocalDays()
    (result,) = dated([original], messages, days)
    assert result == replace(
        original,
        start_date=days.day("2026-03-02T10:00:00.000Z"),
        end_date=days.day("2026-03-04T10:00:00.000Z"),
    )
    (unknown,) = dated([original], {})
    assert unknown == replace(original, start_date=None, end_date=None)
