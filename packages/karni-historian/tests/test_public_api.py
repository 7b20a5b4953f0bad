"""The small public Python API the issue names: signatures, defaults, errors and typing."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import karni_historian
import pytest
from karni_historian import budget, errors, ingest, store, templates
from karni_historian.brief import decay, render
from karni_historian.condense import chunk, compartment_xml, runner


def test_the_documented_calls_take_their_documented_arguments() -> None:
    # Called by keyword, as the README names the parameters: a rename breaks these calls.
    assert decay.tier(index=19, importance=50, pressure=1.0) == 3
    assert decay.tier(index=19, importance=75, pressure=1.0) == 2  # importance doubles it
    assert decay.tier(index=19, importance=50, pressure=4.0) == 5  # pressure shortens it
    assert decay.pressure(items=[(i, 50) for i in range(1, 51)], budget=0) == 1.0
    assert templates.expand(template="${output.n}", input=None, output='{"n": 4.0}') == "4"
    block = render.render_history(
        compartments=[karni_historian.Compartment(1, 2, "T", p1="long", p4="")], budget=20
    )
    assert block == '<session-history>\n<compartment start="1" end="2" title="T" />\n' + (
        "</session-history>"
    )
    for fn in (decay.tier, decay.pressure, templates.expand, render.render_history):
        assert fn.__doc__ and "Args:" in fn.__doc__ and "Returns:" in fn.__doc__


def test_the_documented_pipeline_runs_end_to_end(tmp_path) -> None:
    # store.Store, ingest.ingest, runner.wrapup with a historian= callable, chunk and XML.
    from karni_historian.condense.compartment_writer import emit

    (tmp_path / "manage.py").write_text("")
    transcript = tmp_path / "t.jsonl"
    lines = [
        {"session": "s", "role": "user" if i % 2 == 0 else "assistant", "text": f"m{i}"}
        for i in range(6)
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    seen = []

    def historian(chunk, messages):
        seen.append(chunk.text)
        body = [karni_historian.Compartment(chunk.start, chunk.end, "All", p1="all", p4="")]
        return emit(body)

    historian.name = "test/one"
    with store.Store.open(tmp_path, create=True) as db:
        report = ingest.ingest(db, tmp_path, [str(transcript)])
        assert report.messages_added == 6
        outcome = runner.wrapup(db, "s", 2, historian=historian)
        assert (outcome.status, outcome.covered_to) == ("ok", 4)
        assert seen == ["[1] U: m0\n[2] A: m1\n[3] U: m2\n[4] A: m3"]
        built = chunk.build_chunk(db.messages("s"), offset=1, eligible_end=7, budget_tokens=100)
        parsed = compartment_xml.parse(historian(built, []))
        assert [c.end for c in compartment_xml.validate(parsed, built).compartments] == [6]


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
    from karni_historian.budget import history_budget_tokens

    with pytest.raises(errors.HistorianError, match="history_budget_percentage"):
        history_budget_tokens(200_000, 65, 0.9)


def test_package_is_typed() -> None:
    package = Path(karni_historian.__file__).parent
    assert (package / "py.typed").is_file()
    pyproject = (package.parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"Typing :: Typed"' in pyproject
