"""``scripts/demo``, run in a throwaway clone: it shows the example with and without history.

uv is replaced by a stub on PATH that accepts only ``sync`` (the clone's
``.venv`` is a link to the workspace's, already synced), so the demo's own
steps run for real without touching the shared environment.

The demo runs in the machine's time zone, as a user's would, and shows the
historian's times in it, as every brief does; the expected times are
computed in that zone by a process with the demo's environment, so the test
holds in any zone.
"""

from __future__ import annotations

import calendar
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from karni_it.clones import clone_of, status
from karni_it.environment import clean_env
from karni_it.workspace import ROOT

COMMAND = re.compile(r"^(eventsite|no-store|sessions)\$ (.*)$")
K008 = "K008 Before editing a file: karni context --with-history FILE."
SESSION = ROOT / "examples" / "sessions" / "claude-code-soft-delete.jsonl"
"""The bundled Claude Code session the demo feeds the historian."""


def local_minute(timestamp: str, env: dict[str, str]) -> str:
    """``YYYY-MM-DD HH:MM`` of a UTC ``…T…Z`` timestamp in the zone a process with ``env`` has.

    Asked of a new process, as the demo's commands are: this process's own
    idea of its zone may be stale (a test that sets ``TZ`` and calls
    ``time.tzset()`` leaves it behind when the variable is restored).
    """
    seconds = calendar.timegm(time.strptime(timestamp[:19], "%Y-%m-%dT%H:%M:%S"))
    code = f"import time; print(time.strftime('%Y-%m-%d %H:%M', time.localtime({seconds})))"
    shown = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return shown.stdout.strip()


def sections(stdout: str) -> list[tuple[str, str]]:
    """``("<project>$ <command>", its output)`` for each step the demo shows, in order."""
    found: list[tuple[str, list[str]]] = []
    for line in stdout.splitlines():
        if COMMAND.match(line):
            found.append((line, []))
        elif line.startswith("# "):
            if found and found[-1][1] and found[-1][1][-1] == "":
                found[-1][1].pop()
            found.append(("note", []))
        elif found:
            found[-1][1].append(line)
    return [(head, "\n".join(lines)) for head, lines in found if head != "note"]


@pytest.fixture(scope="module")
def demo(template_clone: Path, tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("demo")
    repo = clone_of(template_clone, folder)
    stub = folder / "bin"
    stub.mkdir()
    (stub / "uv").write_text(
        '#!/bin/sh\n[ "$1" = sync ] && exit 0\necho "uv stub: only sync" >&2; exit 2\n'
    )
    (stub / "uv").chmod(0o755)
    temp = folder / "tmp"
    temp.mkdir()
    env = clean_env(PATH=f"{stub}:/usr/bin:/bin", TMPDIR=str(temp))
    result = subprocess.run(
        ["bash", "scripts/demo"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=180,
    )
    return repo, temp, result, env


def test_demo_runs_and_leaves_the_repository_clean(demo) -> None:
    repo, temp, result, _ = demo
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert status(repo) == ""
    assert list(temp.iterdir()) == [], "the demo's temporary folder is removed"


def test_demo_shows_the_example_with_and_without_history(demo) -> None:
    _, _, result, env = demo
    steps = sections(result.stdout)
    assert [head for head, _ in steps] == [
        "eventsite$ karni context",
        "eventsite$ karni context --with-history apps/events/models.py",
        "no-store$ karni context --with-history apps/events/models.py",
        "eventsite$ karni rules",
        "eventsite$ karni doctor --quiet",
        "eventsite$ karni context --with-history apps/events/models.py",
        "sessions$ karni-historian ingest",
        "sessions$ karni-historian wrapup 1",
        "sessions$ karni context --with-history apps/events/models.py",
        "sessions$ karni-historian search --limit 2 cascade delete",
    ]
    plain, adr, no_store, rules, doctor, both, ingest, wrapup, historian, search = (
        output for _, output in steps
    )
    assert plain.startswith("APPS: events(apps/events/)")
    assert "HISTORY:" not in plain
    assert no_store == plain, "without a store, --with-history is the plain context"
    assert adr.startswith(plain + "\nHISTORY: apps/events/models.py (adr)\n")
    assert K008 in rules.splitlines()
    assert re.search(r"^  adr +karni-history-adr .* store detected$", doctor, re.MULTILINE)
    assert both.startswith(adr + "\nHISTORY: apps/events/models.py (gigai-chronicle)\n")
    assert "Hard delete with ON DELETE CASCADE" in both
    assert ingest == "ingested 1 of 1 transcript file(s): 49 new message(s) in 1 session(s)"
    assert "2 new compartment(s)" in wrapup and wrapup.endswith("the newest 1 stay raw")
    # The bundled Claude Code session: the historian's brief next to the ADR one, its
    # rejected approach first, then what was decided and the requests.
    assert historian.startswith(adr + "\nHISTORY: apps/events/models.py (historian)\n")
    own = historian.split("(historian)\n", 1)[1]
    assert own.startswith("Tried here and failed or undone (do not repeat):\n- adds `AliveManager`")
    assert "Decided:\n- `Event` now subclasses `SoftDeleteModel`" in own
    shaped = own.split("What shaped this file, newest first:\n", 1)[1].splitlines()[0]
    with SESSION.open(encoding="utf-8") as session:
        records = [json.loads(line) for line in session]
    correction = next(  # the request that last shaped the file: the user's correction
        r for r in records if "no, don't hide them" in json.dumps(r.get("message", {}))
    )
    assert shaped.startswith(f"1. {local_minute(correction['timestamp'], env)} ") and (
        " +0 \u22128 \u2014 \"no, don't hide them in the default manager" in shaped
    )
    hits = search.splitlines()
    assert len(hits) == 6, search  # two hits, three lines each
    assert hits[0].startswith("9c2f41d7-3b8e-4a6f-b1d0-5e7a2c9f8b34 ")
    assert "**cascade**" in hits[1].lower() and "**delete**" in hits[1].lower()
    assert hits[2].strip().startswith("karni-historian expand --session 9c2f41d7-")
