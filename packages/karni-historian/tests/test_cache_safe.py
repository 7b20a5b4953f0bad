"""Cache-safe history: ``render`` keeps the rebuilt block byte for byte between rebuilds."""

import json

import pytest
from conftest import add_memory, write_session
from karni_historian.brief.render import compartment_element, render_history
from karni_historian.cli import main
from karni_historian.store import Store


def add_messages(root, first, last):
    write_session(
        root,
        first,
        last,
        lambda n: f"Message {n}: we changed module_{n}.py and ran the tests again",
    )


@pytest.fixture
def project(model_project):
    add_messages(model_project, 1, 30)
    return model_project


def karni_historian(project, capsys, *args):
    code = main(["--project", str(project), *args])
    out, err = capsys.readouterr()
    return code, out, err


def rebuild(project, capsys):
    code, out, _ = karni_historian(project, capsys, "status", "--json")
    assert code == 0
    return json.loads(out)["rebuild"]


def compartments(project):
    with Store.open(project) as store:
        return [stored.compartment for stored in store.compartments("s")]


def test_new_compartments_are_appended_after_the_unchanged_block(project, capsys):
    code, _, err = karni_historian(project, capsys, "-v", "wrapup", "10")
    assert code == 0
    assert "a history rebuild is pending (first render)" in err
    first = karni_historian(project, capsys, "render")[1]
    assert first == render_history(compartments(project), 19500) + "\n"
    assert rebuild(project, capsys)["last_reason"] == "first render"
    assert rebuild(project, capsys)["pending"] is None

    before = len(compartments(project))
    add_messages(project, 31, 50)
    code, _, err = karni_historian(project, capsys, "-v", "wrapup", "2")
    assert code == 0
    assert "no history rebuild pending" in err
    assert "run `karni-historian render --rebuild` to recalculate the tiers now" in err
    new = compartments(project)[before:]
    assert new
    second = karni_historian(project, capsys, "render")[1]
    elements = "\n\n".join(compartment_element(c, 1) for c in new)
    assert second == (
        first[:-1] + "\n\n<session-history-since>\n<new-compartments>\n"
        f"{elements}\n</new-compartments>\n</session-history-since>\n"
    )
    assert karni_historian(project, capsys, "render")[1] == second  # stable between turns

    code, third, _ = karni_historian(project, capsys, "render", "--rebuild")
    assert third == render_history(compartments(project), 19500) + "\n"
    status = rebuild(project, capsys)
    assert status["last_reason"] == "asked for (render --rebuild)"
    assert status["last_at"]
    code, out, _ = karni_historian(project, capsys, "status")
    assert "- History rebuilt: " in out and "(asked for (render --rebuild)); none pending" in out


def test_edited_memory_and_a_changed_model_warrant_a_rebuild(project, capsys):
    karni_historian(project, capsys, "wrapup", "10")
    add_memory(project, "known at the rebuild")
    karni_historian(project, capsys, "render")
    add_memory(project, "promoted since")
    assert rebuild(project, capsys)["pending"] is None  # a new fact is no edit
    with Store.open(project) as store, store.transaction():
        store.connection.execute(
            "UPDATE memories SET content = 'edited' WHERE content = 'known at the rebuild'"
        )
    assert rebuild(project, capsys)["pending"] == "project memory was edited"
    karni_historian(project, capsys, "render")
    assert rebuild(project, capsys)["last_reason"] == "project memory was edited"

    (project / ".karni" / "config.toml").write_text(
        '[historian.claude_code]\nmodel = {model = "ollama/qwen3"}\n'
    )
    assert rebuild(project, capsys)["pending"] == (
        "the historian model or a setting that shapes the block changed"
    )


def test_a_changed_budget_and_an_oversized_additive_block_rebuild(project, capsys):
    karni_historian(project, capsys, "wrapup", "25")
    karni_historian(project, capsys, "render")
    block = karni_historian(project, capsys, "render", "--budget", "400")[1]
    assert rebuild(project, capsys)["last_reason"] == (
        "the historian model or a setting that shapes the block changed"
    )
    add_messages(project, 31, 60)
    karni_historian(project, capsys, "wrapup", "2")
    out = karni_historian(project, capsys, "render", "--budget", "400")[1]
    assert "<session-history-since>" not in out
    assert out != block
    assert rebuild(project, capsys)["last_reason"].startswith(
        "the additive block outgrew its share of the history budget"
    )


def test_the_wrapup_note_streams_the_compartments_and_agrees_with_status(project, capsys):
    """``pending_rebuild`` (wrapup's note) reads compartments a batch at a time, never all."""
    from karni_historian.brief.cache import BlockShape, pending_rebuild, preview_block

    karni_historian(project, capsys, "wrapup", "25")
    karni_historian(project, capsys, "render", "--budget", "400")
    add_messages(project, 31, 60)
    karni_historian(project, capsys, "wrapup", "2")
    with Store.open(project) as store:
        dates, model = saved_dates_and_model(store)
        reasons = []
        for budget in (400, 19500):
            shape = BlockShape(budget, dates, model)
            reasons.append(preview_block(store, "s", shape)[1])
            store.compartments = None  # the streamed reader must not need the list
            try:
                assert pending_rebuild(store, "s", shape) == reasons[-1]
            finally:
                del store.compartments
    assert reasons[0].startswith("the additive block outgrew its share")
    assert reasons[1] == "the historian model or a setting that shapes the block changed"


def saved_dates_and_model(store):
    fields = dict(part.split("=", 1) for part in store.last_rebuild("s").shape.split(" "))
    return fields["dates"] == "1", fields["model"]
