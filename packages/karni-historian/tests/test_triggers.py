"""``karni-historian run`` condenses only when a trigger fires (docs/historian/triggers.md)."""

from __future__ import annotations

import pytest
from karni_historian.condense.triggers import (
    TriggerDecision,
    TriggerState,
    evaluate_trigger,
    trigger_budget,
)
from karni_historian.model import TextPart
from karni_historian.store import Store, parts_to_json


def conversation(root, turns, *, words=5, commit_every=0):
    """``turns`` prompt/answer pairs; every ``commit_every``-th answer reports a commit."""
    with Store.open(root, create=True) as store, store.transaction():
        store.ensure_session("s", "generic")
        for turn in range(turns):
            prompt = f"Please change part {turn}: " + " ".join(f"w{i}" for i in range(words))
            answer = f"Changed part {turn}. " + " ".join(f"d{i}" for i in range(words))
            if commit_every and turn % commit_every == 0:
                answer += f" Committed {turn + 1:07x}a as the fix for part {turn}."
            store.write_message("s", 2 * turn + 1, "user", parts_to_json([TextPart(prompt)]))
            store.write_message("s", 2 * turn + 2, "assistant", parts_to_json([TextPart(answer)]))


def covered(root):
    with Store.open(root) as store:
        return store.last_compartment_end("s")


def test_no_trigger_no_condensing(root, historian):
    conversation(root, 12)
    code, out, err = historian("run")
    assert code == 0
    assert out == (
        "session s: no trigger fired (context use ~0%, below 63%; 0 commit cluster(s) in "
        "~166 settled tokens (3 need 6500 tokens, a tail 19500)); nothing condensed, "
        "pass --force to condense now\n"
    )
    assert err == ""
    assert covered(root) == 0


def test_force_condenses_without_a_trigger(root, historian):
    conversation(root, 12)
    code, out, err = historian("run", "--force")
    assert code == 0
    assert out.startswith("session s: ") and out.endswith("messages 1-14 condensed\n")
    assert err == ""
    assert covered(root) == 14


def test_tail_size_fires_on_a_long_settled_tail(root, historian):
    conversation(root, 60, words=400)  # about 60k tokens of chunk text
    code, out, err = historian("run")
    assert code == 0
    assert out.endswith("messages 1-110 condensed\n")
    assert err == (
        "karni-historian: session s: trigger tail_size fired: "
        "the settled tail is larger than one scan\n"
    )
    assert covered(root) == 110  # the newest five prompts and their answers stay raw


def test_commit_clusters_fire(root, historian):
    conversation(root, 12, words=400, commit_every=2)
    code, _out, err = historian("run")
    assert code == 0
    assert err.startswith("karni-historian: session s: trigger commit_clusters fired: 4 commit ")
    assert covered(root) == 14


def test_three_commits_are_not_enough_without_a_compartment_of_text(root, historian):
    conversation(root, 12, commit_every=2)
    code, out, err = historian("run")
    assert (code, err) == (0, "")
    assert "; 4 commit cluster(s) in ~" in out
    assert covered(root) == 0


def test_pressure_fires_near_a_small_context_limit(root, historian, configure):
    configure(root, "context_limit = 1000")
    conversation(root, 12, words=40)
    code, out, _err = historian("run", "--dry-run")
    assert "(trigger force_band: context use reached 85% (counted up to there))" in out
    code, _out, err = historian("run")
    assert code == 0
    assert err == (
        "karni-historian: session s: trigger force_band fired: "
        "context use reached 85% (counted up to there)\n"
    )
    assert covered(root) == 14


def test_dry_run_prints_the_decision_and_writes_nothing(root, historian):
    conversation(root, 60, words=400)
    code, out, err = historian("run", "--dry-run")
    assert (code, err) == (0, "")
    assert out == (
        "session s: would condense messages 1-110 with local/extractive "
        "(trigger tail_size: the settled tail is larger than one scan)\n"
    )
    assert covered(root) == 0
    with Store.open(root) as store:
        assert store.runs() == []


def test_dry_run_without_a_trigger_and_with_force(root, historian):
    conversation(root, 12)
    _code, out, _err = historian("run", "--dry-run")
    assert out.startswith("session s: would not condense messages 1-14: no trigger fired (")
    _code, out, _err = historian("run", "--dry-run", "--force")
    assert out == "session s: would condense messages 1-14 with local/extractive (forced)\n"
    assert covered(root) == 0


def test_nothing_settled_is_said_before_any_trigger(root, historian):
    conversation(root, 4)
    _code, out, _err = historian("run", "--force")
    assert out == (
        "session s: nothing settled to condense — the newest five prompts and their "
        "answers stay raw\n"
    )


@pytest.mark.parametrize(
    ("limit", "thr", "expected"),
    [
        (1_000_000, 40, 20_000),
        (200_000, 65, 6_500),
        (128_000, 65, 5_000),
        (2_000_000, 80, 50_000),
        (0, 65, 5_000),
        (float("nan"), 65, 5_000),
        (128_000, float("nan"), 5_000),
    ],
)
def test_trigger_budget_is_five_percent_of_the_usable_context(limit, thr, expected):
    assert trigger_budget(limit, thr) == expected


def reason(state: TriggerState) -> str:
    decision = evaluate_trigger(state, 200_000, 65)  # trigger budget 6,500
    assert isinstance(decision, TriggerDecision)
    assert decision.fire == (decision.reason not in ("below_proactive_floor", "below_min_chunk"))
    return decision.reason


def test_trigger_order():
    assert reason(TriggerState(usage_pct=86)) == "force_band"
    assert reason(TriggerState(usage_pct=86, commit_clusters=5, chunk_tokens=9_000)) == (
        "force_band"
    )
    assert reason(TriggerState(usage_pct=10, commit_clusters=3, chunk_tokens=6_500)) == (
        "commit_clusters"
    )
    assert reason(TriggerState(usage_pct=10, commit_clusters=3, chunk_tokens=6_499)) == (
        "below_proactive_floor"
    )
    assert reason(TriggerState(usage_pct=10, chunk_tokens=19_500)) == "tail_size"
    assert reason(TriggerState(usage_pct=10, chunk_tokens=19_499)) == "below_proactive_floor"
    assert reason(TriggerState(usage_pct=10, has_more=True, chunk_tokens=1)) == "tail_size"
    assert reason(TriggerState(usage_pct=64, settled_messages=3)) == "below_min_chunk"
    assert reason(TriggerState(usage_pct=64, settled_messages=12)) == "projected_headroom"
    assert reason(TriggerState(usage_pct=64, settled_raw_tokens=6_000)) == "projected_headroom"
    assert reason(TriggerState(usage_pct=62.9, settled_messages=12)) == "below_proactive_floor"
