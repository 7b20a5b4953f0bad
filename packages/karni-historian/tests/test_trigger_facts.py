"""``run``'s trigger facts measured from the stored rows match the decoded messages' count.

:func:`karni_historian.condense.trigger_facts.raw_token_counts` reads each
row's JSON instead of building its message; the tests compare it with
:func:`karni_historian.condense.message_text.raw_tokens` over
:func:`karni_historian.condense.window.stream_messages`, the longer way, on
random rows (references within and across batches, unresolved ones, duplicate
call ids, floats and long integers, paths shown project-relative), and the
trigger state built with it against the state of one pass over every message.
"""

from __future__ import annotations

import json
import random

import pytest
from karni_historian import fastjson
from karni_historian.condense import runner, trigger_facts
from karni_historian.condense.boundaries import completed_arcs
from karni_historian.condense.chunk import ChunkBuilder
from karni_historian.condense.message_text import raw_tokens
from karni_historian.condense.settings import Settings
from karni_historian.condense.trigger_facts import raw_token_counts
from karni_historian.condense.triggers import TriggerState, session_state, trigger_budget
from karni_historian.condense.window import stream_messages
from karni_historian.store import Store

_TEXTS = [
    "Add a feature to the parser.",
    "",
    'Ünïcode café — «quoted» "escaped" \\ and a tab\t.',
    "Committed 1a2b3c4d: the fix for the parser.",
    "emoji 🎉 and a newline\nthen more",
    "x" * 500,
]


def _tool_input(rng: random.Random, root: str) -> object:
    return rng.choice(
        [
            {"file_path": f"{root}/src/app_{rng.randint(0, 3)}.py"},
            {"command": "pytest -q", "description": "Run the tests"},
            {"path": "/elsewhere/notes.md", "pattern": "TODO"},
            {"timeout": 1.5, "command": "sleep 1"},  # measured as the JSON module writes it
            {"id": 123456789012345678901234567890},  # orjson reads it as a float
            {"nested": [{"a": [1, 2, {"b": None}]}, True]},
            ["a", "list", 3],
            "just text",
            None,
            {},
        ]
    )


def _tool_part(rng: random.Random, root: str, call_id: str) -> dict[str, object]:
    part: dict[str, object] = {"type": "tool", "name": "Edit", "input": _tool_input(rng, root)}
    if rng.random() < 0.7:
        part["output"] = rng.choice(_TEXTS)
    if call_id:
        part["call_id"] = call_id
    if rng.random() < 0.1:
        part["metadata"] = {"elapsed": 0.25}
    return part


def _reference(rng: random.Random, ordinal: int, calls: list[tuple[int, str]]) -> dict[str, object]:
    """A stored reference to one of ``calls``, a near one mostly; now and then an odd one."""
    target, call_id = rng.choice(calls[-3:] if rng.random() < 0.7 else calls)
    copy_of: object = target
    odd = rng.random()
    if odd < 0.1:
        copy_of = ordinal + 1000  # no such message: an unresolved reference
    elif odd < 0.15:
        copy_of = float(target)  # not a message number: read as a part of its own
    reference = {"type": "tool", "name": "Edit", "call_id": call_id, "copy_of": copy_of}
    if rng.random() < 0.2:
        reference["output"] = rng.choice(_TEXTS)  # what a reference read as a part would show
    return reference


def _random_rows(rng: random.Random, root: str, count: int) -> list[tuple[str, str]]:
    """``(role, parts_json)`` rows; results refer to calls before them, near or far."""
    rows: list[tuple[str, str]] = []
    calls: list[tuple[int, str]] = []
    for ordinal in range(1, count + 1):
        parts: list[dict[str, object]] = []
        role = rng.choice(["user", "assistant", "assistant", "system"])
        for _ in range(rng.randint(0, 3)):
            kind = rng.random()
            if kind < 0.45:
                text: dict[str, object] = {"type": "text", "text": rng.choice(_TEXTS)}
                if rng.random() < 0.1:
                    text["ignored"] = True
                parts.append(text)
            elif kind < 0.75:
                call_id = rng.choice(["", f"c{ordinal}", f"c{ordinal}", "dup"])
                parts.append(_tool_part(rng, root, call_id))
                if call_id:
                    calls.append((ordinal, call_id))
            elif calls:
                parts.append(_reference(rng, ordinal, calls))
        rows.append((role, json.dumps(parts, ensure_ascii=rng.random() < 0.3)))
    return rows


def _store_rows(root, rows: list[tuple[str, str]]) -> None:
    with Store.open(root, create=True) as store, store.transaction():
        store.ensure_session("s", "generic")
        for ordinal, (role, parts_json) in enumerate(rows, 1):
            store.write_message("s", ordinal, role, parts_json)


def _decoded_counts(store: Store, start: int, batch: int) -> list[tuple[int, int]]:
    return [(m.ordinal, raw_tokens(m)) for m in stream_messages(store, "s", start, batch)]


@pytest.mark.parametrize("accelerated", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_row_counts_match_the_decoded_messages(tmp_path, monkeypatch, seed, accelerated):
    if not accelerated:
        monkeypatch.setattr(fastjson, "_orjson_loads", None)  # as without the speedups extra
    (tmp_path / "manage.py").write_text("")
    rng = random.Random(seed)
    _store_rows(tmp_path, _random_rows(rng, str(tmp_path), 120))
    with Store.open(tmp_path) as store:
        for start, batch in ((1, 1000), (1, 7), (1, 1), (37, 5), (119, 3), (500, 10)):
            expected = _decoded_counts(store, start, batch)
            assert list(raw_token_counts(store, "s", start, batch)) == expected
        assert len(_decoded_counts(store, 1, 1000)) == 120


_ODD_ROWS = [
    [{"type": "tool", "name": "Bash", "input": {}, "call_id": 7}],  # not text: SQLite's reading
    [{"type": "tool", "name": "Bash", "input": {}, "call_id": 0}],
    [{"type": "tool", "name": "Bash", "input": {}, "call_id": False}],
    [{"type": "tool", "name": "Bash", "input": {}, "call_id": None}],
    [{"type": "tool", "name": "Bash", "input": {}, "call_id": {"an": "object"}}],  # read as JSON
]


@pytest.mark.parametrize("accelerated", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_counts_hold_with_call_ids_no_call_has(tmp_path, monkeypatch, seed, accelerated):
    if not accelerated:
        monkeypatch.setattr(fastjson, "_orjson_loads", None)
    (tmp_path / "manage.py").write_text("")
    rng = random.Random(seed)
    rows = _random_rows(rng, str(tmp_path), 120)
    escaped = '[{"type":"tool","name":"Bash","input":{},"call\\u005fid":"e1"}]'
    rows.insert(rng.randint(0, 119), ("assistant", escaped))  # a call id the store never reads
    rows.insert(rng.randint(0, 119), ("user", json.dumps(_ODD_ROWS[seed % len(_ODD_ROWS)])))
    _store_rows(tmp_path, rows)
    with Store.open(tmp_path) as store:
        for start, batch in ((1, 1000), (1, 7), (60, 5)):
            expected = _decoded_counts(store, start, batch)
            assert list(raw_token_counts(store, "s", start, batch)) == expected


@pytest.mark.parametrize("seed", range(3))
def test_the_plans_arcs_are_those_of_the_messages(tmp_path, seed):
    (tmp_path / "manage.py").write_text("")
    rng = random.Random(seed)
    _store_rows(tmp_path, _conversation_rows(rng, 40))
    with Store.open(tmp_path) as store:
        plan = runner.plan_run(store, "s")
        assert plan.arcs == completed_arcs(store.messages("s"))
        assert plan.arcs  # the conversation has answered calls
        assert plan.target == 106  # the newest five prompts stay raw


@pytest.mark.parametrize("limit", [300, 2_000, 20_000, 200_000])
@pytest.mark.parametrize("seed", range(3))
def test_a_decision_that_stops_at_the_force_band_decides_as_the_whole_count(
    tmp_path, seed, limit, monkeypatch
):
    (tmp_path / "manage.py").write_text("")
    _store_rows(tmp_path, _conversation_rows(random.Random(seed), 40))
    measured = []
    row = trigger_facts._RowMeasure.row
    monkeypatch.setattr(
        trigger_facts._RowMeasure, "row", lambda self, *a: measured.append(a[0]) or row(self, *a)
    )
    with Store.open(tmp_path) as store:
        plan = runner.plan_run(store, "s", Settings(context_limit=limit))
        exact = plan.decision()
        counted = len(measured)
        early = plan.decision(exact=False)
    assert (early.fire, early.reason) == (exact.fire, exact.reason)
    if early != exact:  # only the usage, counted up to the band, reads otherwise
        assert exact.reason == "force_band"
        assert early.detail == "context use reached 85% (counted up to there)"
    if limit == 200_000:  # far below the band: the whole count either way
        assert early == exact and len(measured) == 2 * counted
    if limit == 300:  # the first messages reach the band: the rest is never counted
        assert exact.reason == "force_band" and len(measured) - counted < counted / 10


def test_a_path_inside_the_project_is_measured_as_shown(tmp_path):
    (tmp_path / "manage.py").write_text("")
    inside = {"type": "tool", "name": "Read", "input": {"file_path": f"{tmp_path}/src/a.py"}}
    outside = {"type": "tool", "name": "Read", "input": {"file_path": "/etc/hosts"}}
    _store_rows(tmp_path, [("assistant", json.dumps([part])) for part in (inside, outside)])
    with Store.open(tmp_path) as store:
        counts = list(raw_token_counts(store, "s", 1))
        assert counts == _decoded_counts(store, 1, 1000)
    # {"file_path": "src/a.py"} is 25 characters (8 tokens); the stored path is longer.
    assert counts[0] == (1, 8)
    assert counts[1] == (2, -(-len(json.dumps(outside["input"])) * 2 // 7))


def test_a_reference_counts_its_call_again(tmp_path):
    (tmp_path / "manage.py").write_text("")
    call = {"type": "tool", "name": "Bash", "input": {"command": "ls"}, "output": "a" * 70}
    call["call_id"] = "c1"
    result = {"type": "tool", "name": "Bash", "call_id": "c1", "copy_of": 1}
    missing = {"type": "tool", "name": "Bash", "call_id": "c9", "copy_of": 1}
    rows = [("assistant", json.dumps([call])), ("user", json.dumps([result, missing]))]
    _store_rows(tmp_path, rows)
    with Store.open(tmp_path) as store:
        for batch in (1, 1000):  # the call in the result's batch, and in the one before
            counts = list(raw_token_counts(store, "s", 1, batch))
            assert counts == _decoded_counts(store, 1, batch)
    # {"command": "ls"} is 17 characters (5 tokens), the output 20 tokens; "null" is 2.
    assert counts == [(1, 25), (2, 25 + 2)]


def test_a_batch_that_forgets_its_calls_resolves_from_the_call_row(tmp_path):
    """A batch remembers a few thousand calls, the last part of each id; then it starts over."""
    (tmp_path / "manage.py").write_text("")
    first = {"type": "tool", "name": "Bash", "input": {"command": "ls"}, "call_id": "x"}
    last = {**first, "output": "a" * 700}  # the same call id again, in the same message
    many = [{"type": "tool", "name": "Bash", "input": {}, "call_id": f"m{n}"} for n in range(4100)]
    result = {"type": "tool", "name": "Bash", "call_id": "x", "copy_of": 1}
    rows = [("assistant", json.dumps([first, last])), ("user", json.dumps([result]))]
    _store_rows(tmp_path, [*rows, ("assistant", json.dumps(many)), ("user", json.dumps([result]))])
    with Store.open(tmp_path) as store:
        counts = list(raw_token_counts(store, "s", 1))
        assert counts == _decoded_counts(store, 1, 1000)
    assert counts[1] == (2, 5 + 200)  # the last part named x, remembered
    assert counts[3] == (4, 5)  # forgotten: the first part named x in the call's message


def _conversation_rows(rng: random.Random, turns: int) -> list[tuple[str, str]]:
    rows = []
    for turn in range(turns):
        prompt = f"Please change part {turn}: " + "word " * rng.randint(1, 400)
        answer = f"Changed part {turn}."
        if rng.random() < 0.3:
            answer += f" Committed {turn + 1:07x}a for it."
        call = {"type": "tool", "name": "Bash", "input": {"command": "make"}, "call_id": f"c{turn}"}
        call["output"] = "ok " * rng.randint(0, 300)
        result = {"type": "tool", "name": "Bash", "call_id": f"c{turn}", "copy_of": 3 * turn + 2}
        rows.append(("user", json.dumps([{"type": "text", "text": prompt}])))
        rows.append(("assistant", json.dumps([{"type": "text", "text": answer}, call])))
        rows.append(("user", json.dumps([result])))
    return rows


def _one_pass_state(messages, offset, target, settings) -> TriggerState:
    """The trigger state as one pass over every message measures it."""
    budget = trigger_budget(settings.context_limit, settings.execute_threshold_percentage)
    builder = ChunkBuilder(
        offset=offset,
        eligible_end=target,
        budget_tokens=max(6_000, 3 * budget),
        expand_tools=settings.expand_tools,
    )
    scanning = True
    for message in messages:
        scanning = scanning and builder.read(message)
    settled = [m for m in messages if m.ordinal < target]
    chunk = builder.chunk()
    return TriggerState(
        usage_pct=sum(raw_tokens(m) for m in messages) * 100 / settings.context_limit,
        commit_clusters=chunk.commit_clusters,
        chunk_tokens=chunk.token_estimate,
        has_more=chunk.has_more,
        settled_raw_tokens=sum(raw_tokens(m) for m in settled),
        settled_messages=len(settled),
    )


class _Counted:
    """An iterator that says how far it was read."""

    def __init__(self, messages):
        self.messages = iter(messages)
        self.last = 0

    def __iter__(self):
        return self

    def __next__(self):
        message = next(self.messages)
        self.last = message.ordinal
        return message


@pytest.mark.parametrize("seed", range(4))
def test_trigger_state_matches_one_pass_over_every_message(tmp_path, seed):
    (tmp_path / "manage.py").write_text("")
    rng = random.Random(seed)
    _store_rows(tmp_path, _conversation_rows(rng, 60))
    settings = Settings(context_limit=rng.choice([20_000, 200_000, 2_000_000]))
    with Store.open(tmp_path) as store:
        for offset, target in ((1, 171), (1, 40), (25, 100), (90, 91), (100, 50), (1, 500)):
            messages = list(stream_messages(store, "s", offset))
            longer = _one_pass_state(messages, offset, target, settings)
            scan = _Counted(stream_messages(store, "s", offset))
            counts = raw_token_counts(store, "s", offset)
            assert session_state(counts, scan, offset, target, settings) == longer
            assert scan.last <= max(offset, target - 1)  # the scan stops at the settled end
