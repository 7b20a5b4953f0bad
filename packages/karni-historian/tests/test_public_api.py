"""The small public Python API the issue names: signatures, defaults, errors and typing."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import karni_historian
import pytest
from karni_historian import (
    budget,
    chunk,
    compartment_xml,
    decay,
    errors,
    ingest,
    render,
    store,
    templates,
)


def params(fn) -> list[str]:
    return list(inspect.signature(fn).parameters)


def test_signatures_and_return_types() -> None:
    assert params(decay.tier) == ["index", "importance", "pressure"]
    assert inspect.signature(decay.tier).return_annotation == "int"
    assert params(decay.pressure) == ["items", "budget"]
    assert inspect.signature(decay.pressure).return_annotation == "float"
    assert params(templates.expand) == ["template", "input", "output"]
    assert inspect.signature(templates.expand).return_annotation == "str"
    assert params(render.render_history)[:2] == ["compartments", "budget"]
    assert inspect.signature(render.render_history).return_annotation == "str"
    for fn in (decay.tier, decay.pressure, templates.expand, render.render_history):
        assert fn.__doc__ and "Args:" in fn.__doc__ and "Returns:" in fn.__doc__


def test_the_public_calls_work_as_documented() -> None:
    assert [decay.tier(i, 50, 1.0) for i in (1, 6, 19, 33, 64)] == [1, 2, 3, 4, 5]
    assert decay.pressure([(i, 50) for i in range(1, 51)], 2000) == pytest.approx(1.9385)
    assert templates.expand("${input.q} → [${output}]", {"q": "Which?"}, None) == "Which? → []"
    block = render.render_history([karni_historian.Compartment(1, 2, "T", p1="body")], 1000)
    assert block == '<session-history>\n<compartment start="1" end="2" title="T">\nbody\n' + (
        "</compartment>\n</session-history>"
    )


def test_compartment_fields_and_defaults() -> None:
    from karni_historian.model import Compartment

    assert karni_historian.Compartment is Compartment
    assert "Compartment" in karni_historian.__all__
    fields = {f.name: f.default for f in dataclasses.fields(Compartment)}
    assert fields == {
        "start": dataclasses.MISSING,
        "end": dataclasses.MISSING,
        "title": dataclasses.MISSING,
        "p1": "",
        "p2": "",
        "p3": "",
        "p4": "",
        "importance": 50,
        "start_date": None,
        "end_date": None,
        "episode_type": None,
        "legacy": False,
        "content": "",
    }
    with pytest.raises(AttributeError):
        karni_historian.NotAThing  # noqa: B018


def test_template_error_message_and_place() -> None:
    with pytest.raises(templates.TemplateError) as caught:
        templates.expand("${input.x", {}, None)
    assert str(caught.value) == "Invalid tool expansion template at character 10"
    assert caught.value.position == 10


def test_error_hierarchy_and_documented_homes() -> None:
    documented = {
        budget.ConfigurationError: errors.ConfigurationError,
        templates.TemplateError: errors.TemplateError,
        compartment_xml.HistorianOutputError: errors.HistorianOutputError,
        chunk.ChunkCoverageError: errors.ChunkCoverageError,
        store.StoreError: errors.StoreError,
        ingest.IngestError: errors.IngestError,
    }
    for home, canonical in documented.items():
        assert home is canonical
        assert issubclass(home, errors.HistorianError)
        assert home.__doc__
    assert issubclass(errors.TemplateError, errors.ConfigurationError)
    for value_error in (
        errors.ConfigurationError,
        errors.HistorianOutputError,
        errors.ChunkCoverageError,
    ):
        assert issubclass(value_error, ValueError)
    from karni_historian.brief.budget import history_budget_tokens

    with pytest.raises(errors.HistorianError, match="history_budget_percentage"):
        history_budget_tokens(200_000, 65, 0.9)


def test_package_is_typed() -> None:
    package = Path(karni_historian.__file__).parent
    assert (package / "py.typed").is_file()
    pyproject = (package.parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"Typing :: Typed"' in pyproject
