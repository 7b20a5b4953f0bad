"""The model records' fast ``__init__`` sets every field as the dataclass's own would.

:func:`karni_historian.slot_init.slot_init` builds the ``__init__`` from the
class's fields; these tests pin each field of each record (a field added
later is checked too: the lists come from ``dataclasses.fields``).
"""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import random

import pytest
from karni_historian import model
from karni_historian.slot_init import slot_init

_RECORDS = [model.TextPart, model.ToolPart, model.Message, model.Compartment, model.Fact]


def _reference(cls: type, values: dict[str, object]) -> object:
    """The record as the dataclass's generated ``__init__`` builds it: ``object.__setattr__``."""
    record = object.__new__(cls)
    for name, value in values.items():
        object.__setattr__(record, name, value)
    return record


def test_every_frozen_record_of_the_model_has_the_fast_init() -> None:
    records = [
        value
        for value in vars(model).values()
        if dataclasses.is_dataclass(value) and isinstance(value, type)
    ]
    assert sorted(r.__name__ for r in records) == sorted(r.__name__ for r in _RECORDS)
    for cls in records:
        assert cls.__init__.__code__.co_filename == f"<slot_init {cls.__qualname__}>"


@pytest.mark.parametrize("cls", _RECORDS, ids=lambda cls: cls.__name__)
def test_the_signature_is_the_fields_with_their_defaults(cls: type) -> None:
    parameters = list(inspect.signature(cls).parameters.values())
    fields = dataclasses.fields(cls)
    assert [p.name for p in parameters] == [f.name for f in fields]
    for parameter, field in zip(parameters, fields, strict=True):
        expected = (
            inspect.Parameter.empty if field.default is dataclasses.MISSING else field.default
        )
        assert parameter.default == expected
        assert parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD


@pytest.mark.parametrize("cls", _RECORDS, ids=lambda cls: cls.__name__)
def test_every_field_is_set_positionally_by_keyword_and_by_default(cls: type) -> None:
    rng = random.Random(cls.__name__)
    fields = dataclasses.fields(cls)
    for _ in range(20):
        values = {f.name: rng.choice([f"v{rng.random()}", rng.randint(0, 9), None]) for f in fields}
        positional = cls(*values.values())
        by_keyword = cls(**values)
        reference = _reference(cls, values)
        assert positional == by_keyword == reference
        assert repr(positional) == repr(reference)
        assert hash(positional) == hash(reference)
        for name, value in values.items():
            assert getattr(positional, name) == value
    required = {f.name: f"r{f.name}" for f in fields if f.default is dataclasses.MISSING}
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    assert cls(**required) == _reference(
        cls, {f.name: {**required, **defaults}[f.name] for f in fields}
    )


@pytest.mark.parametrize("cls", _RECORDS, ids=lambda cls: cls.__name__)
def test_the_records_stay_frozen_comparable_and_picklable(cls: type) -> None:
    fields = dataclasses.fields(cls)
    record = cls(*(f"x{i}" for i in range(len(fields))))
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, fields[0].name, "changed")
    assert pickle.loads(pickle.dumps(record)) == record
    assert dataclasses.replace(record, **{fields[0].name: "y"}) != record


def test_missing_or_unknown_arguments_fail_as_with_the_dataclass() -> None:
    with pytest.raises(TypeError):
        model.ToolPart()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        model.TextPart("a", ignored=True, extra=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        model.Fact("a", "b", "c")  # type: ignore[call-arg]


def test_a_field_slot_init_cannot_set_as_the_dataclass_does_is_refused() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Factory:
        items: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Derived:
        shown: str = dataclasses.field(init=False, default="")

    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class KeywordOnly:
        name: str

    for cls in (Factory, Derived, KeywordOnly):
        with pytest.raises(TypeError, match="not a plain field"):
            slot_init(cls)


def test_a_class_with_a_post_init_is_refused() -> None:
    """The fast ``__init__`` never calls ``__post_init__``: such a class keeps the dataclass's."""

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        value: int

        def __post_init__(self) -> None:
            if self.value < 0:
                raise ValueError("negative")

    with pytest.raises(TypeError, match="__post_init__"):
        slot_init(Checked)


def test_a_new_field_is_set_too() -> None:
    @slot_init
    @dataclasses.dataclass(frozen=True, slots=True)
    class Grown:
        first: int
        second: str = "s"
        added_later: tuple[int, ...] = ()

    grown = Grown(1, added_later=(2,))
    assert (grown.first, grown.second, grown.added_later) == (1, "s", (2,))
    assert grown == _reference(Grown, {"first": 1, "second": "s", "added_later": (2,)})
