"""wrapup, run and recomp read a session in bounded batches and condense it exactly as in one."""

from __future__ import annotations

import time

import pytest
from karni_historian.condense import recomp, runner, window
from karni_historian.condense.boundaries import completed_arcs
from karni_historian.condense.models.redaction import env_file_values
from karni_historian.condense.settings import Settings
from karni_historian.ingest import ingest
from karni_historian.ingest.claude_code import project_key
from karni_historian.model import TextPart, ToolPart
from karni_historian.store import Store, parts_to_json

SESSION = "4b1c9e2a-7f3d-4c5e-8a6b-2d9e0f1a3b5c"
BATCH = 7


@pytest.fixture
def make_project(tmp_path, monkeypatch, long_session, user_folders):
    """A function making a project with the long Claude Code session ingested."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()

    def make(name):
        root = tmp_path / name
        root.mkdir()
        (root / "manage.py").write_text("")
        folder = tmp_path / "claude" / "projects" / project_key(str(root))
        folder.mkdir(parents=True)
        (folder / f"{SESSION}.jsonl").write_text(long_session.long_session(str(root)))
        with Store.open(root, create=True) as store:
            ingest(store, root)
        return root

    yield make
    monkeypatch.undo()  # TZ as it was before, then the zone read again
    time.tzset()


class Reads:
    """Counts the messages each store query returns while a small batch is in force."""

    def __init__(self, monkeypatch):
        self.sizes: list[int] = []
        monkeypatch.setattr(window, "BATCH_MESSAGES", BATCH)
        monkeypatch.setattr(window, "LOOKAHEAD_MESSAGES", 3)
        for name in ("message_batch", "messages"):
            original = getattr(Store, name)
            monkeypatch.setattr(Store, name, self._counting(original))

    def _counting(self, original):
        def counted(store, *args, **kwargs):
            rows = original(store, *args, **kwargs)
            self.sizes.append(len(rows))
            return rows

        return counted


def published(root):
    with Store.open(root, readonly=True) as store:
        return [stored.compartment for stored in store.compartments(SESSION)], store.facts()


def row(stored):
    return stored.id, stored.sequence, stored.compartment


def wrapup(root, keep=1):
    with Store.open(root) as store:
        return runner.wrapup(store, SESSION, keep)


def test_wrapup_in_small_batches_condenses_the_same(make_project, monkeypatch):
    whole = make_project("whole")
    assert wrapup(whole).status == "ok"
    batched = make_project("batched")
    reads = Reads(monkeypatch)
    outcome = wrapup(batched)
    assert outcome.status == "ok" and outcome.covered_to == 248
    assert published(batched) == published(whole)
    assert len(published(whole)[0]) > 1
    # Every query returned at most a batch, and the 249 messages took many of them.
    assert max(reads.sizes) <= BATCH
    assert sum(reads.sizes) >= 248 and len(reads.sizes) >= 248 // BATCH


def prompts_and_edits(root, turns=40):
    """A generic session of ``turns`` prompts, each answered by an edit and its result."""
    with Store.open(root, create=True) as store, store.transaction():
        store.ensure_session("s", "generic")
        ordinal = 0
        for turn in range(turns):
            call = ToolPart("Edit", {"file_path": f"{root}/app/views.py"}, call_id=f"c{turn}")
            result = ToolPart("Edit", call.input, "ok", call_id=f"c{turn}")
            for role, parts in (
                ("user", [TextPart(f"Turn {turn}: rename item_{turn} in app/views.py")]),
                ("assistant", [TextPart(f"Renaming item_{turn}."), call]),
                ("user", [result]),
                ("assistant", [TextPart(f"Done: item_{turn} is now entry_{turn}.")]),
            ):
                ordinal += 1
                stamp = f"2026-03-02T10:{turn:02d}:00Z"
                store.write_message("s", ordinal, role, parts_to_json(parts), timestamp=stamp)


def test_run_in_small_batches_condenses_the_same(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))

    def run(name):
        root = tmp_path / name
        root.mkdir()
        (root / "manage.py").write_text("")
        prompts_and_edits(root)
        with Store.open(root) as store:
            plan = runner.plan_run(store, "s")
            decision = plan.decision()
            outcome = runner.run(store, "s", plan=plan)
            compartments = [stored.compartment for stored in store.compartments("s")]
        return plan.target, decision, outcome.status, compartments

    whole = run("whole")
    reads = Reads(monkeypatch)
    batched = run("batched")
    assert batched == whole
    assert whole[0] == 141 and whole[2] == "ok"  # the newest five prompts stay raw
    assert max(reads.sizes) <= BATCH and len(reads.sizes) >= 160 // BATCH


def test_recomp_in_small_batches_rebuilds_the_same(make_project, monkeypatch):
    def rebuild(root):
        wrapup(root)
        with Store.open(root) as store:
            first = store.compartments(SESSION)[0].compartment
            outcome = recomp.recomp(store, SESSION, None, Settings())
            assert outcome.status == "ok"
            # A partial range leaves the compartments outside it in their rows.
            kept = row(store.compartments(SESSION)[0])
            second = store.compartments(SESSION)[1].compartment
            recomp.recomp(store, SESSION, (second.start, second.end), Settings())
            assert row(store.compartments(SESSION)[0]) == kept
            assert [s.sequence for s in store.compartments(SESSION)] == list(
                range(len(store.compartments(SESSION)))
            )
        return first

    whole = make_project("whole")
    first = rebuild(whole)
    batched = make_project("batched")
    reads = Reads(monkeypatch)
    assert rebuild(batched) == first
    assert published(batched) == published(whole)
    assert max(reads.sizes) <= BATCH


def test_the_window_holds_a_bounded_stretch(tmp_path, monkeypatch):
    """A model historian still sees an early .env read, and nothing else from before the chunk."""
    (tmp_path / "manage.py").write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(window, "LOOKAHEAD_MESSAGES", 8)
    results = {95: "t50", 97: "t61"}
    secret = ToolPart("Read", {"file_path": ".env"}, "     1→DB_PASSWORD=hunter2secret\n")
    with Store.open(tmp_path, create=True) as store:
        with store.transaction():
            store.ensure_session("s", "generic")
            for ordinal in range(1, 101):
                parts = [secret] if ordinal == 2 else [TextPart(f"message {ordinal}")]
                role = "user"
                if ordinal in (50, 61):  # calls answered long after the window
                    role, parts = "assistant", [ToolPart("Task", {}, call_id=f"t{ordinal}")]
                if ordinal in results:
                    parts = [ToolPart("Task", {}, "done", call_id=results[ordinal])]
                store.write_message("s", ordinal, role, parts_to_json(parts))
        view = window.MessageWindow(store, "s", 1, 60, batch=5)
        seen = [m.ordinal for m in view.iter_from(60, 70)]
        assert seen == list(range(60, 71))
        view.forget_before(65)
        given = view.for_historian(66)
        assert given[0].ordinal == 2 and env_file_values(given) == ["hunter2secret"]
        # Both ends of the arcs open at the chunk's end come along, in order.
        assert completed_arcs(given) == [(50, 95), (61, 97)]
        ends = [m.ordinal for m in given[:3]] + [m.ordinal for m in given[-2:]]
        assert ends == [2, 50, 61, 95, 97]
        ordinals = [m.ordinal for m in given[3:-2]]
        assert ordinals[0] == 65 and ordinals == list(range(65, ordinals[-1] + 1))
        assert 66 + 8 <= ordinals[-1] < 66 + 8 + 5  # the lookahead, rounded up to a batch
        assert view.for_historian(66, env_reads=False)[0].ordinal == 65
        assert view.queries == (ordinals[-1] - 60) // 5 + 1
