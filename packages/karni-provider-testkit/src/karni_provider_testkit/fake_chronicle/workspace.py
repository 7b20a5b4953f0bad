"""The double's store on disk: finding it, opening it, reading its fixture.

Chronicle walks up from its working directory to the nearest entry named
``.chronicle`` and treats the directory holding it as the repository root;
file arguments are made relative to that root. Opening the workspace has
side effects even for read-only commands (``machine.json``, a daily
``ProjectOpened`` event, a ``WorkspaceMoved`` note), which the double
reproduces. What Chronicle would read from its event log and checkpoint refs
comes from one fixture file, ``.chronicle/fake-chronicle.json``.
"""

from __future__ import annotations

import json
import os

from karni.agent.common.files import write_atomic

from karni_provider_testkit.fake_chronicle.formats import VERSION, dumps, ulid, utc_now

__all__ = [
    "FIXTURE_NAME",
    "STORE_DIRNAME",
    "find_repo_root",
    "load_fixture",
    "open_workspace",
    "repo_relative",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STORE_DIRNAME = ".chronicle"
"""The name of Chronicle's store directory."""

FIXTURE_NAME = "fake-chronicle.json"
"""The store fixture's file name inside ``.chronicle/``."""


def find_repo_root(start: str) -> str | None:
    """Chronicle's ``findChronicleDir``: the parent of the nearest ``.chronicle`` entry."""
    current = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(current, STORE_DIRNAME)):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def repo_relative(file: str, cwd: str, repo_root: str) -> str | None:
    """``file`` resolved against ``cwd`` and made relative to ``repo_root`` (POSIX).

    Returns:
        None when it lies outside ``repo_root`` or equals it.
    """
    absolute = os.path.normpath(os.path.join(cwd, file))
    relative = os.path.relpath(absolute, repo_root)
    if relative in (os.curdir, os.pardir) or relative.startswith(os.pardir + os.sep):
        return None
    return relative.replace(os.sep, "/")


def open_workspace(repo_root: str) -> list[str]:
    """Chronicle's side effects on opening a workspace; returns its stderr warnings.

    Raises:
        OSError: When ``.chronicle/.local`` cannot be created (``.chronicle``
            is a plain file, permissions), which Chronicle reports with exit 1.
    """
    local = os.path.join(repo_root, STORE_DIRNAME, ".local")
    try:
        os.makedirs(local, exist_ok=True)
    except NotADirectoryError:
        raise OSError(f"ENOTDIR: not a directory, mkdir '{local}'") from None
    except FileExistsError:
        raise OSError(f"EEXIST: file already exists, mkdir '{local}'") from None
    machine_path = os.path.join(local, "machine.json")
    try:
        with open(machine_path, encoding="utf-8") as handle:
            machine = json.load(handle)
        if not isinstance(machine, dict):
            machine = {}
    except (OSError, ValueError):
        machine = {}
    ts, today, ms = utc_now()
    workspace = machine.get("workspace") or "wks_" + ulid(ms, repo_root)
    warnings: list[str] = []
    events: list[tuple[str, dict[str, Any]]] = []
    last_path = machine.get("lastKnownPath")
    if isinstance(last_path, str) and last_path != repo_root:
        warnings.append(f"note: workspace moved ({last_path} → {repo_root})")
        events.append(("WorkspaceMoved", {"from": last_path, "to": repo_root}))
    if machine.get("lastProjectOpenedDay") != today:
        events.append(("ProjectOpened", {}))
    if events:
        ops = os.path.join(local, "ops", today[:4], today[5:7])
        os.makedirs(ops, exist_ok=True)
        lines = []
        for index, (kind, payload) in enumerate(events):
            event = {
                "v": 1,
                "id": "evt_" + ulid(ms, f"{repo_root}{kind}{ms}{index}"),
                "ts": ts,
                "type": kind,
                "actor": {"kind": "system"},
                "git": {"head": None, "branch": None, "dirty": []},
                "payload": payload,
                "meta": {
                    "provider": f"chronicle-cli@{VERSION}",
                    "workspace": workspace,
                    "schema": f"{kind}/1",
                    "visibility": "local",
                },
            }
            lines.append(dumps(event) + "\n")
        with open(os.path.join(ops, "ops.jsonl"), "a", encoding="utf-8") as handle:
            handle.write("".join(lines))
    machine.update(
        {
            "workspace": workspace,
            "lastKnownPath": repo_root,
            "repository": {"root": repo_root},
            "lastProjectOpenedDay": today,
        }
    )
    write_atomic(machine_path, json.dumps(machine, ensure_ascii=False, indent=2) + "\n")
    return warnings


def load_fixture(repo_root: str) -> dict[str, Any]:
    """The store fixture of ``repo_root``; empty for a bare ``.chronicle/``.

    Raises:
        OSError: When the fixture cannot be read or is not a JSON object.
    """
    path = os.path.join(repo_root, STORE_DIRNAME, FIXTURE_NAME)
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return {}
    except ValueError as error:
        raise OSError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise OSError(f"{path}: expected a JSON object")
    return data
