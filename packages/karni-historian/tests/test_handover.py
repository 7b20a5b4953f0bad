"""The project brief handed to harnesses: the same bytes between ordinary turns.

What Karni asks the provider for at a session start (Claude Code) or before
every turn (the OpenCode plugin's system prompt, the Pi extension's) is the
last rebuild's text byte for byte, then what was learnt since; it is rebuilt
only when that is warranted (``docs/historian/cache-safe.md``).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import add_memory, write_session
from karni_historian.brief.briefs import project_brief
from karni_historian.brief.handover import RECORD_FILE, SINCE_HEADING
from karni_historian.brief.lines import anchor_line
from karni_historian.brief.provider import HistorianProvider
from karni_historian.cli import main
from karni_historian.store import Store

ROOM = 1200


def add_messages(root, first, last):
    write_session(root, first, last, lambda n: f"Message {n}: we changed module_{n}.py today")


def wrapup(project, capsys, keep):
    assert main(["--project", str(project), "wrapup", str(keep)]) == 0
    capsys.readouterr()


@pytest.fixture
def project(model_project, capsys):
    add_messages(model_project, 1, 30)
    wrapup(model_project, capsys, 10)
    return model_project


def handed(project, room=ROOM):
    return HistorianProvider().project_context(Path(project), room=room)


def fresh(project, room=ROOM):
    """The brief as rebuilt: a quarter of the room is left for what is learnt since."""
    with Store.open(project) as store:
        return project_brief(store, max_titles=30, room_chars=room - room // 4)


def record(project):
    return json.loads((project / ".karni" / "local" / RECORD_FILE).read_text())


def test_two_turns_with_a_compartment_between_keep_the_prefix(project, capsys):
    first = handed(project)
    assert first == fresh(project)
    assert record(project)["reason"] == "first handover"
    assert handed(project) == first  # nothing new: the same bytes

    with Store.open(project) as store:
        before = {stored.id for stored in store.newest_episodes()}
    add_messages(project, 31, 36)
    wrapup(project, capsys, 2)
    add_memory(project, "refunds never delete a payment", "CONSTRAINTS")
    with Store.open(project) as store:
        new = [s for s in reversed(store.newest_episodes()) if s.id not in before]
    assert new
    second = handed(project)
    assert second == "\n".join(
        [
            first,
            SINCE_HEADING,
            "- refunds never delete a payment (constraints)",
            *(anchor_line(stored, 1) for stored in new),
        ]
    )
    assert second != fresh(project)  # the newest-first titles were not re-sorted
    assert handed(project) == second  # and the next turn hands the same again
    assert len(second) <= ROOM


def test_edited_memory_rebuilds(project):
    add_memory(project, "money is stored in cents", "CONSTRAINTS")
    first = handed(project)
    with Store.open(project) as store, store.transaction():
        store.connection.execute("UPDATE memories SET content = 'money is stored in pennies'")
    rebuilt = handed(project)
    assert rebuilt == fresh(project) != first
    assert "money is stored in pennies" in rebuilt
    assert record(project)["reason"] == "project memory was edited"


def test_a_changed_room_or_rebuilt_episodes_rebuild(project):
    handed(project)
    assert handed(project, room=900) == fresh(project, room=900)
    assert record(project)["reason"] == "the room or the number of titles changed"
    with Store.open(project) as store, store.transaction():  # as `recomp` rewrites one
        store.connection.execute(
            "UPDATE compartments SET title = 'Soft delete, redone' WHERE id = 3"
        )
    assert handed(project, room=900) == fresh(project, room=900)
    assert record(project)["reason"] == "episodes of the handed brief were rebuilt"


def test_an_additive_part_past_its_share_rebuilds(project, capsys):
    first = handed(project, room=700)
    add_messages(project, 31, 90)
    wrapup(project, capsys, 2)
    rebuilt = handed(project, room=700)
    assert SINCE_HEADING not in rebuilt
    assert rebuilt == fresh(project, room=700) != first
    assert record(project)["reason"] == "the additive part outgrew its share of the room"


def test_a_record_that_is_a_symlink_is_neither_read_nor_written(project, tmp_path):
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"shape": "room=1200 titles=30", "text": "FORGED"}')
    (project / ".karni" / "local" / RECORD_FILE).symlink_to(elsewhere)
    assert handed(project) == fresh(project)
    assert elsewhere.read_text().startswith('{"shape"') and "FORGED" in elsewhere.read_text()


def test_the_session_start_hook_hands_the_same_bytes(project, capsys):
    """Through `karni hook`, as Claude Code runs it at a session start."""
    event = {"session_id": "s", "cwd": str(project), "source": "startup"}
    environment = {**os.environ, "KARNI_TRUST_PROJECT": "1"}

    def session_start():
        result = subprocess.run(
            [sys.executable, "-m", "karni.cli", "hook", "claude-code", "SessionStart"],
            cwd=project,
            input=json.dumps(event),
            capture_output=True,
            text=True,
            timeout=120,
            env=environment,
        )
        assert result.returncode == 0
        return json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]

    first = session_start()
    assert "HISTORY: project (historian)" in first
    add_messages(project, 31, 36)
    wrapup(project, capsys, 2)
    second = session_start()
    assert second.startswith(first.rstrip("\n") + "\n" + SINCE_HEADING + "\n")
