"""Composed blocks, locked byte for byte."""

from __future__ import annotations

from pathlib import Path

from karni.agent.history import compose

ROOT = Path("/project")

CHRONICLE_BRIEF = """## Why this file looks the way it does (Project Memory)
**Failed / superseded approaches (do NOT repeat)**
- Hard delete with ON DELETE CASCADE — reverted: it destroyed payment history
## What shaped this file
1. 2026-09-30 14:02 +12 −3 — "make events soft-deletable instead of hard delete"
"""


def test_chronicle_example_block(kinds, snapshot_text):
    provider = kinds.Static(name="gigai-chronicle", brief=CHRONICLE_BRIEF)
    assert compose(ROOT, "apps/events/models.py", providers=[provider]) == snapshot_text


def test_truncated_two_provider_block(kinds, snapshot_text):
    decisions = "\n".join(
        f"- decision {i}: keep soft delete on Event, never cascade payments" for i in range(30)
    )
    prompts = "\n".join(
        f'{i}. 2026-10-{i + 1:02d} 10:00 — "tweak events list {i}"' for i in range(30)
    )
    providers = [
        kinds.Static(
            name="gigai-chronicle", brief=prompts, command="chronicle context apps/events/models.py"
        ),
        kinds.Static(name="adr", brief=decisions),
    ]
    assert compose(ROOT, "apps/events/models.py", providers=providers) == snapshot_text


def test_project_block(kinds, snapshot_text):
    providers = [
        kinds.Static(name="adr", project="0007 Use soft delete for events (accepted, 2026-09-30)"),
        kinds.NoProjectContext(),
    ]
    assert compose(ROOT, providers=providers) == snapshot_text
