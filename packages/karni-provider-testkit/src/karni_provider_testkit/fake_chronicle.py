r"""A faithful double of Gigai Chronicle's ``chronicle`` command, for tests.

Gigai Chronicle cannot be installed here, so providers are tested against this
double. It follows ``chronicle-contract.md`` for the two commands a history
provider uses, ``chronicle context <file> [--limit N]`` and ``chronicle
knowledge [--type decision|todo] [--session ID]`` (``--json`` anywhere on the
command line):

- the walk-up from the working directory to the nearest entry named
  ``.chronicle`` (exit 3 and ``not a chronicle project (no .chronicle directory
  found)`` when there is none), ``<file>`` resolved against the working
  directory and made relative to the directory holding ``.chronicle``;
- commander's two-level argument parsing, Chronicle's checks in Chronicle's
  order (usage, project, path, limit or type) and their exit codes and stderr
  messages (usage errors 2, not a project 3, anything unexpected 1);
- opening the workspace: ``.chronicle/.local/machine.json`` is written, a
  ``ProjectOpened`` event is appended once per UTC day and a moved folder gives
  ``note: workspace moved (<old> → <new>)`` on stderr with exit 0; a
  ``.chronicle`` that is a plain file fails here with exit 1;
- one compact JSON line with keys in Chronicle's order, non-ASCII as raw UTF-8;
- the exact Markdown templates (empty pack, Project Memory block, knowledge
  fallback), prompt selection (the last N turns that touched the path, oldest
  first; a directory covers what is under it) and knowledge in store scan
  order (oldest first, one block per session), deduplicated.

Human (non-JSON) output follows the contract's templates; the wording of help
texts, the ``knowledge`` "nothing found" paragraph and commander's messages
beyond those the contract quotes are this double's own (the contract marks
them as inferred). ``chronicle knowledge --type decision`` returns the items
the fixture marks as decisions; the double does not re-run Chronicle's
extraction rules over prompt text. Only ``context``, ``knowledge`` and
``help`` exist; any other command is ``error: unknown command '<name>'`` and no
command at all is ``error: missing command …`` (both exit 2).

Running it
==========

``python -m karni_provider_testkit.fake_chronicle ARGS`` or the ``fake-chronicle``
console script. :meth:`FakeChronicle.install` writes an executable named
``chronicle``: a POSIX shell script that sets ``FAKE_CHRONICLE_HOME`` and
replaces itself (``exec``) with the current interpreter, so the pid the caller
sees is the double's own.

The store fixture: ``.chronicle/fake-chronicle.json``
=====================================================

What Chronicle would read from its event log and git checkpoint refs is
described by one JSON file inside the fake store. A bare ``.chronicle/``
directory without it is a valid, empty store (like a fresh ``chronicle
init``). Every key is optional::

    {
      "fakeChronicle": 1,
      "sessions": [{"id": "ses_01K…", "private": true}],
      "prompts": [
        {"eventId": "evt_01K…", "ts": "2026-07-20T09:12:05.331Z",
         "session": "ses_01K…", "text": "We should use Redis…",
         "files": {"src/session/store.ts": [48, 0], "logo.png": "bin"}}
      ],
      "knowledge": [
        {"kind": "decision", "text": "Going with Redis…", "eventId": "evt_01K…",
         "session": "ses_01K…", "ts": "2026-07-20T09:12:41.902Z",
         "role": "agent", "confidence": "high"}
      ],
      "memory": [
        {"id": "mem_2b7e41c09d3a", "kind": "decision", "status": "active",
         "content": "No, keep session state in PostgreSQL.", "sessions": ["ses_01K…"]}
      ]
    }

- ``prompts`` are the captured turns (checkpoints). ``files`` maps each
  repo-relative POSIX path the turn changed to ``[added, removed]`` lines, or
  ``"bin"`` for a binary change. Turns are ordered by ``eventId`` (ULIDs sort
  by time).
- ``sessions`` only needs listing to mark one ``private``: a privatised
  session's events are not scanned, so its prompts come out with ``ts``,
  ``session`` and ``text`` null and its knowledge is never returned.
- ``knowledge`` items are the extracted decisions and TODOs. Output order is
  the store's scan order: by session id, then by event id (fixture order
  among equal ones), whatever order the file lists them in.
- ``memory`` items are Project Memory: ``kind`` (``decision``,
  ``constraint``, ``known_issue``, ``failed_approach``, ``todo``; any other
  kind is never rendered), ``status`` (``active``, ``superseded``,
  ``rejected``, ``candidate``, ``resolved``, …), ``content`` and the related
  ``sessions``.

:class:`FakeStore` writes this file for you (``add_session``, ``add_prompt``,
``add_knowledge``, ``add_memory``); :meth:`FakeChronicle.example_store` copies
the store behind the contract's §1.6 and §2.5 examples.

Per-test behaviour: ``$FAKE_CHRONICLE_HOME/config.json``
========================================================

The installed script sets ``FAKE_CHRONICLE_HOME`` to the double's home
folder. ``config.json`` there (written by :meth:`FakeChronicle.configure`)
changes how every run behaves; all keys are optional::

    {"delay": 30, "exit_code": 3, "stderr": "⚠ E_FOREIGN_REPO: …\n",
     "stdout": "not json\n", "patch": {"context": {"markdown": "…"}},
     "drop": {"context": ["markdown"]}, "grandchild": true}

- ``delay``: seconds to sleep after recording the call (timeout tests);
- ``grandchild``: first start a child process that sleeps for ten minutes,
  holding the same stdout, to check that a client kills the whole group;
- ``stderr``: written to stderr first (warnings with exit 0);
- ``patch`` / ``drop``: keys set in (new keys go last) or removed from the
  ``--json`` reply of that command;
- ``stdout``: printed instead of the command's own stdout;
- ``exit_code``: the exit status, instead of the command's own.

The call log: ``$FAKE_CHRONICLE_HOME/calls.jsonl``
==================================================

Every run appends one JSON line before doing anything else:
``{"argv": [...], "cwd": "...", "pid": 123, "stdin": "eof", "grandchild": null}``.
``argv`` excludes the program name; ``stdin`` is ``"closed"`` (fd 0 not open),
``"eof"`` (end of file straight away, e.g. ``/dev/null``), ``"data"`` or
``"open"`` (a terminal or pipe with nothing to read yet).
:meth:`FakeChronicle.calls` reads it back as :class:`ChronicleCall` objects.

The ``fake_chronicle`` pytest fixture
=====================================

Registered by karni-provider-testkit's pytest plugin, so any test in an
environment with the testkit installed can ask for it. It yields a
:class:`FakeChronicle` whose ``chronicle`` script is installed and whose bin
folder is prepended to ``PATH`` (through ``monkeypatch``, so subprocesses such
as the real ``karni`` command find it too)::

    def test_brief(fake_chronicle, tmp_path):
        store = fake_chronicle.create_store(tmp_path)
        session = store.add_session()
        store.add_prompt("make events soft-deletable", {"apps/events/models.py": (12, 3)})
        store.add_memory("failed_approach", "Hard delete — reverted", sessions=[session])
        ...  # run `karni context --with-history apps/events/models.py` in tmp_path
        assert fake_chronicle.calls()[0].argv == [
            "context", "apps/events/models.py", "--json", "--limit", "5"]
"""

from __future__ import annotations

import json
import os
import sys

__all__ = [
    "FIXTURE_NAME",
    "HOME_VARIABLE",
    "NOT_A_PROJECT",
    "VERSION",
    "ChronicleCall",
    "FakeChronicle",
    "FakeStore",
    "main",
    "pid_alive",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Iterator, Mapping, Sequence
    from pathlib import Path
    from typing import Any

VERSION = "0.2.0"
"""The version ``chronicle --version`` prints (the contract's stored package.json)."""

FIXTURE_NAME = "fake-chronicle.json"
"""The store fixture's file name inside ``.chronicle/``."""

HOME_VARIABLE = "FAKE_CHRONICLE_HOME"
"""Names the folder holding ``config.json`` and ``calls.jsonl``."""

NOT_A_PROJECT = "not a chronicle project (no .chronicle directory found)"
"""Chronicle's stderr line when no ``.chronicle`` is found (exit 3)."""

STORE_DIRNAME = ".chronicle"
EXAMPLE_FIXTURE = "fake_chronicle_example.json"

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_NOT_A_PROJECT = 0, 1, 2, 3

MINUS = "\u2212"
ELLIPSIS = "\u2026"
EMPTY_INTRO = (
    "_No captured history shaped this file yet — nothing to brief. Chronicle can only",
    "assemble context for work done while capture was running._",
)
PACK_INTRO = (
    "_Assembled from your own AI-development history so your next prompt starts with",
    "what was already asked and decided — paste this into your AI tool._",
)
FOOTER = (
    "---",
    "_Derived from the Chronicle record on this machine. Chronicle never calls a model;",
    "this is your context, assembled — nothing left your machine._",
)
PROMPTS_HEADING = "## What shaped this file"
MEMORY_HEADING = "## Why this file looks the way it does (Project Memory)"
KNOWLEDGE_HEADING = "## Decisions & TODOs from these sessions"
MEMORY_GROUPS = (
    "**Active decisions**",
    "**Constraints**",
    "**Known issues**",
    "**Failed / superseded approaches (do NOT repeat)**",
    "**Open TODOs**",
)
UNLISTED_MEMORY_KINDS = frozenset({"current_work", "handoff"})
DEFAULT_CONTEXT_LIMIT = "8"
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


# --------------------------------------------------------------------------- text


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def _when(ts: str | None) -> str:
    return "unknown" if ts is None else ts.replace("T", " ")[:16]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------- arguments


class UsageError(Exception):
    """A command-line usage error: exit 2 with the message on stderr."""


class Invocation:
    """The parsed command line."""

    def __init__(self) -> None:
        self.json = False
        self.command: str | None = None
        self.operands: list[str] = []
        self.options: dict[str, str | bool] = {}
        self.help = False
        self.version = False


# subcommand -> (argument names, {option: value placeholder or None for a flag})
COMMANDS: dict[str, tuple[tuple[str, ...], dict[str, str | None]]] = {
    "context": (("file",), {"--limit": "<n>", "--copy": None}),
    "knowledge": ((), {"--type": "<kind>", "--session": "<id>"}),
}
HELP_FLAGS = ("-h", "--help")


def _maybe_option(arg: str) -> bool:
    if len(arg) < 2 or not arg.startswith("-"):
        return False
    return not _is_negative_number(arg)


def _is_negative_number(arg: str) -> bool:
    body = arg[1:]
    return body.replace(".", "", 1).isdigit() and body[-1:].isdigit()


def parse_arguments(argv: Sequence[str]) -> Invocation:
    """Parse ``argv`` the way commander does for Chronicle's program.

    Program options (``--json``, ``--version``) are recognised anywhere before
    ``--``; everything after the first unknown option is handed to the
    subcommand, which parses its own options.

    Raises:
        UsageError: With commander's message, for exit 2.
    """
    result = Invocation()
    operands: list[str] = []
    unknown: list[str] = []
    destination = operands
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--":
            if destination is unknown:
                destination.append(arg)
            destination.extend(args)
            break
        if arg == "--json":
            result.json = True
            continue
        if arg in ("-V", "--version"):
            result.version = True
            return result
        if _maybe_option(arg):
            destination = unknown
        destination.append(arg)
    help_flag = any(arg in HELP_FLAGS for arg in _before_separator(unknown))
    if operands and operands[0] in COMMANDS:
        result.command = operands[0]
        result.help = help_flag
        if not help_flag:
            _parse_subcommand(result, operands[1:], unknown)
        return result
    if operands and operands[0] == "help":
        result.help = True
        topic = operands[1] if len(operands) > 1 else None
        result.command = topic if topic in COMMANDS else None
        return result
    if help_flag:
        result.help = True
        return result
    if operands:
        raise UsageError(f"error: unknown command '{operands[0]}'")
    if unknown:
        raise UsageError(f"error: unknown option '{unknown[0]}'")
    raise UsageError("error: missing command (usage: chronicle [options] [command])")


def _before_separator(args: list[str]) -> list[str]:
    return args[: args.index("--")] if "--" in args else args


def _parse_subcommand(result: Invocation, operands: list[str], args: list[str]) -> None:
    assert result.command is not None
    names, options = COMMANDS[result.command]
    operands = list(operands)
    unknown: list[str] = []
    destination = operands
    args = list(args)
    while args:
        arg = args.pop(0)
        if arg == "--":
            if destination is unknown:
                destination.append(arg)
            destination.extend(args)
            break
        name, _, inline = arg.partition("=")
        if _maybe_option(arg) and name in options:
            placeholder = options[name]
            if placeholder is None:
                if inline or "=" in arg:
                    destination = unknown
                    destination.append(arg)
                    continue
                result.options[name] = True
            elif "=" in arg:
                result.options[name] = inline
            else:
                if not args:
                    raise UsageError(f"error: option '{name} {placeholder}' argument missing")
                result.options[name] = args.pop(0)
            continue
        if _maybe_option(arg):
            destination = unknown
        destination.append(arg)
    if unknown and _maybe_option(unknown[0]):
        raise UsageError(f"error: unknown option '{unknown[0]}'")
    operands += unknown
    if len(operands) < len(names):
        raise UsageError(f"error: missing required argument '{names[len(operands)]}'")
    if len(operands) > len(names):
        expected = len(names)
        plural = "" if expected == 1 else "s"
        raise UsageError(
            f"error: too many arguments for '{result.command}'. "
            f"Expected {expected} argument{plural} but got {len(operands)}."
        )
    result.operands = operands


def _program_help() -> str:
    return (
        "Usage: chronicle [options] [command]\n\n"
        "Options:\n"
        "  -V, --version               output the version number\n"
        "  --json                      machine-readable output (stable, versioned)\n"
        "  -h, --help                  display help for command\n\n"
        "Commands:\n"
        "  context [options] <file>    assemble a paste-ready context pack for a file\n"
        "  knowledge [options]         decisions and TODOs extracted from the record\n"
        "  help [command]              display help for command\n"
    )


def _command_help(command: str) -> str:
    names, options = COMMANDS[command]
    usage = " ".join([f"chronicle {command} [options]", *(f"<{name}>" for name in names)])
    lines = [f"Usage: {usage}", "", "Options:"]
    for option, placeholder in options.items():
        lines.append(f"  {option}{' ' + placeholder if placeholder else ''}")
    lines.append("  -h, --help  display help for command")
    return "\n".join(lines) + "\n"


def js_number(value: str) -> float:
    """JavaScript's ``Number(value)`` for a string (NaN when it is not a number)."""
    text = value.strip(" \t\n\r\v\f\u00a0\ufeff\u2028\u2029")
    if not text:
        return 0.0
    lowered = text.lower()
    for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
        if lowered.startswith(prefix):
            try:
                return float(int(text[2:], base))
            except ValueError:
                return float("nan")
    if text in ("Infinity", "+Infinity", "-Infinity"):
        return float(text.replace("Infinity", "inf"))
    allowed = set("0123456789.eE+-")
    if not set(text) <= allowed or text.lower() in ("nan", "inf"):
        return float("nan")
    try:
        return float(text)
    except ValueError:
        return float("nan")


# --------------------------------------------------------------------------- the store


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


def _utc_now() -> tuple[str, str, int]:
    import time

    now = time.time()
    ms = int(now * 1000)
    seconds = time.gmtime(now)
    ts = time.strftime("%Y-%m-%dT%H:%M:%S", seconds) + f".{ms % 1000:03d}Z"
    return ts, ts[:10], ms


def ulid(ms: int, seed: str) -> str:
    """A 26-character Crockford ULID for ``ms``; its random part is derived from ``seed``."""
    import hashlib

    time_part = "".join(CROCKFORD[(ms >> shift) & 31] for shift in range(45, -5, -5))
    digest = int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:10], "big")
    random_part = "".join(CROCKFORD[(digest >> shift) & 31] for shift in range(75, -5, -5))
    return time_part + random_part


def _write_atomic(path: str, text: str) -> None:
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    os.replace(temporary, path)


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
    ts, today, ms = _utc_now()
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
            lines.append(_dumps(event) + "\n")
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
    _write_atomic(machine_path, json.dumps(machine, ensure_ascii=False, indent=2) + "\n")
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


# --------------------------------------------------------------------------- knowledge and packs


def _private_sessions(data: Mapping[str, Any]) -> set[str]:
    return {
        session["id"]
        for session in data.get("sessions", [])
        if isinstance(session, dict) and session.get("private") and "id" in session
    }


def knowledge_items(
    data: Mapping[str, Any],
    *,
    sessions: set[str] | None = None,
    kind: str | None = None,
) -> list[dict[str, Any]]:
    """Knowledge in store scan order, limited to ``sessions`` and ``kind``, deduplicated."""
    private = _private_sessions(data)
    scanned = [
        item
        for item in data.get("knowledge", [])
        if isinstance(item, dict) and item.get("session") not in private
    ]
    scanned.sort(key=lambda item: (item.get("session") or "", item.get("eventId") or ""))
    seen: set[tuple[str, str]] = set()
    items = []
    for item in scanned:
        if sessions is not None and item.get("session") not in sessions:
            continue
        if kind is not None and item.get("kind") != kind:
            continue
        full = _collapse(str(item.get("text", "")))
        key = (str(item.get("kind")), full.lower())
        if len(full) < 4 or key in seen:
            continue
        seen.add(key)
        items.append(
            {
                "kind": item.get("kind"),
                "text": _truncate(full, 200),
                "eventId": item.get("eventId"),
                "session": item.get("session"),
                "ts": item.get("ts"),
                "role": item.get("role", "human"),
                "confidence": item.get("confidence", "high"),
            }
        )
    return items


def _churn(files: Mapping[str, Any], path: str) -> str | None:
    matched = [
        change
        for name, change in files.items()
        if name == path or name.startswith(path.rstrip("/") + "/")
    ]
    if not matched:
        return None
    if any(change == "bin" for change in matched):
        return "bin"
    added = sum(int(change[0]) for change in matched)
    removed = sum(int(change[1]) for change in matched)
    return f"+{added} {MINUS}{removed}"


def shaping_prompts(data: Mapping[str, Any], path: str, limit: int) -> list[dict[str, Any]]:
    """The last ``limit`` turns that touched ``path``, oldest first, as PromptItems."""
    private = _private_sessions(data)
    turns = sorted(
        (turn for turn in data.get("prompts", []) if isinstance(turn, dict)),
        key=lambda turn: turn.get("eventId") or "",
    )
    chosen: list[dict[str, Any]] = []
    for turn in reversed(turns):
        churn = _churn(turn.get("files") or {}, path)
        if churn is None:
            continue
        hidden = turn.get("session") in private
        text = turn.get("text")
        chosen.append(
            {
                "eventId": turn.get("eventId"),
                "ts": None if hidden else turn.get("ts"),
                "session": None if hidden else turn.get("session"),
                "text": None if hidden or not (text or "").strip() else text,
                "churn": churn,
            }
        )
        if len(chosen) >= limit:
            break
    chosen.reverse()
    return chosen


def _memory_group(item: Mapping[str, Any]) -> int | None:
    kind, status = item.get("kind"), item.get("status")
    if kind == "decision" and status == "active":
        return 0
    if kind == "constraint" and status != "rejected":
        return 1
    if kind == "known_issue" and status != "resolved":
        return 2
    if kind == "failed_approach" or (kind == "decision" and status in ("superseded", "rejected")):
        return 3
    if kind == "todo" and status != "resolved":
        return 4
    return None


def related_memory(data: Mapping[str, Any], sessions: set[str]) -> list[dict[str, Any]]:
    """Project Memory items related to ``sessions``, in memory order (kind, then id)."""
    items = [
        item
        for item in data.get("memory", [])
        if isinstance(item, dict)
        and item.get("kind") not in UNLISTED_MEMORY_KINDS
        and sessions.intersection(item.get("sessions") or [])
    ]
    items.sort(key=lambda item: (str(item.get("kind")), str(item.get("id"))))
    return items


def _prompt_line(number: int, prompt: Mapping[str, Any]) -> str:
    text = prompt.get("text")
    shown = "(prompt text unavailable)" if text is None else f'"{_truncate(_collapse(text), 100)}"'
    return f"{number}. {_when(prompt.get('ts'))}  {prompt['churn']}  — {shown}"


def context_markdown(
    file: str,
    prompts: list[dict[str, Any]],
    knowledge: list[dict[str, Any]],
    memory: list[dict[str, Any]],
) -> str:
    """The ``markdown`` of a context pack, exactly as Chronicle renders it."""
    lines = [f"# Context for {file}", ""]
    if not prompts:
        return "\n".join([*lines, *EMPTY_INTRO]) + "\n"
    lines += [*PACK_INTRO, "", PROMPTS_HEADING, ""]
    lines += [_prompt_line(number, prompt) for number, prompt in enumerate(prompts, 1)]
    if memory:
        groups: list[list[str]] = [[] for _ in MEMORY_GROUPS]
        for item in memory:
            group = _memory_group(item)
            if group is not None:
                groups[group].append(f"- {_truncate(_collapse(str(item.get('content'))), 240)}")
        if any(groups):
            lines += ["", MEMORY_HEADING, ""]
            for title, bullets in zip(MEMORY_GROUPS, groups, strict=True):
                if bullets:
                    lines += [title, *bullets, ""]
    elif knowledge:
        lines += ["", KNOWLEDGE_HEADING, ""]
        lines += [
            f"- **[{item['kind']}]** {item['text']}  _({item['role']}, {_when(item['ts'])})_"
            for item in knowledge
        ]
    return "\n".join([*lines, "", *FOOTER]) + "\n"


def context_pack(data: Mapping[str, Any], file: str, limit: int) -> dict[str, Any]:
    """The ``chronicle context --json`` payload for the repo-relative ``file``."""
    prompts = shaping_prompts(data, file, limit)
    sessions = {prompt["session"] for prompt in prompts if prompt["session"]}
    knowledge = knowledge_items(data, sessions=sessions) if prompts else []
    memory = related_memory(data, sessions) if prompts else []
    return {
        "apiVersion": 1,
        "command": "context",
        "file": file,
        "empty": not prompts,
        "prompts": prompts,
        "knowledge": knowledge,
        "markdown": context_markdown(file, prompts, knowledge, memory),
    }


def knowledge_listing(items: list[dict[str, Any]], kinds: Sequence[str]) -> str:
    """``chronicle knowledge`` human output (the contract's §2.6 template)."""
    if not items:
        return (
            "No decisions or TODOs found in the Chronicle record yet.\n"
            "They are extracted from captured prompts and responses: lines such as\n"
            '"decided to …", "let\'s use …" or "TODO: …".\n'
            "Capture a session, then run this again.\n"
        )
    lines: list[str] = []
    for kind in kinds:
        chosen = [item for item in items if item["kind"] == kind]
        if not chosen:
            continue
        if lines:
            lines.append("")
        lines += [f"{kind}s ({len(chosen)}):", ""]
        for item in chosen:
            origin = f"{item['role']} · {_when(item['ts'])} · {item['confidence']}"
            lines += [f"  {item['text']}", f"     {origin} · chronicle inspect {item['eventId']}"]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- running a command


class Outcome:
    """What one run prints and returns."""

    def __init__(
        self,
        code: int = EXIT_OK,
        stdout: str = "",
        stderr: str = "",
        payload: dict[str, Any] | None = None,
    ) -> None:
        self.code = code
        self.stdout = stdout
        self.stderr = stderr
        self.payload = payload


def _fail(code: int, message: str) -> Outcome:
    return Outcome(code, "", message + "\n")


def run(argv: Sequence[str], cwd: str) -> Outcome:
    """Run the double's ``chronicle`` for ``argv`` in ``cwd``."""
    try:
        invocation = parse_arguments(argv)
    except UsageError as error:
        return _fail(EXIT_USAGE, str(error))
    if invocation.version:
        return Outcome(stdout=VERSION + "\n")
    if invocation.help:
        command = invocation.command
        return Outcome(stdout=_command_help(command) if command else _program_help())
    repo_root = find_repo_root(cwd)
    if repo_root is None:
        return _fail(EXIT_NOT_A_PROJECT, NOT_A_PROJECT)
    try:
        if invocation.command == "context":
            return _run_context(invocation, cwd, repo_root)
        return _run_knowledge(invocation, repo_root)
    except OSError as error:
        return _fail(EXIT_FAILURE, " ".join(str(error).split()))


def _run_context(invocation: Invocation, cwd: str, repo_root: str) -> Outcome:
    typed = invocation.operands[0]
    file = repo_relative(typed, cwd, repo_root)
    if file is None:
        return _fail(EXIT_USAGE, f'context: "{typed}" is outside this repository')
    raw_limit = str(invocation.options.get("--limit", DEFAULT_CONTEXT_LIMIT))
    limit = js_number(raw_limit)
    if not (limit == limit and limit != float("inf") and limit.is_integer() and limit >= 1):
        return _fail(EXIT_USAGE, f'context: --limit must be a positive integer, got "{raw_limit}"')
    warnings = open_workspace(repo_root)
    pack = context_pack(load_fixture(repo_root), file, int(limit))
    stderr = "".join(line + "\n" for line in warnings)
    if invocation.json:
        return Outcome(stdout=_dumps(pack) + "\n", stderr=stderr, payload=pack)
    if invocation.options.get("--copy"):
        stderr += "note: fake-chronicle has no clipboard; nothing was copied\n"
    return Outcome(stdout=pack["markdown"], stderr=stderr)


def _run_knowledge(invocation: Invocation, repo_root: str) -> Outcome:
    kind = invocation.options.get("--type")
    if kind is not None and kind not in ("decision", "todo"):
        return _fail(EXIT_USAGE, f'knowledge: --type must be "decision" or "todo", got "{kind}"')
    warnings = open_workspace(repo_root)
    session = invocation.options.get("--session")
    items = knowledge_items(
        load_fixture(repo_root),
        sessions=None if session is None else {str(session)},
        kind=None if kind is None else str(kind),
    )
    stderr = "".join(line + "\n" for line in warnings)
    if invocation.json:
        payload = {"apiVersion": 1, "command": "knowledge", "count": len(items), "items": items}
        return Outcome(stdout=_dumps(payload) + "\n", stderr=stderr, payload=payload)
    kinds = ("decision", "todo") if kind is None else (str(kind),)
    return Outcome(stdout=knowledge_listing(items, kinds), stderr=stderr)


# --------------------------------------------------------------------------- per-test behaviour


def _load_config(home: str | None) -> dict[str, Any]:
    if not home:
        return {}
    try:
        with open(os.path.join(home, "config.json"), encoding="utf-8") as handle:
            config = json.load(handle)
    except FileNotFoundError:
        return {}
    return config if isinstance(config, dict) else {}


def _stdin_state() -> str:
    try:
        os.fstat(0)
    except OSError:
        return "closed"
    try:
        import select

        readable, _, _ = select.select([0], [], [], 0)
    except (OSError, ValueError):
        return "open"
    if not readable:
        return "open"
    try:
        return "data" if os.read(0, 1) else "eof"
    except OSError:
        return "open"


def _start_grandchild() -> int:
    import subprocess

    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"], stdin=subprocess.DEVNULL
    )
    return child.pid


def _record(home: str, entry: dict[str, Any]) -> None:
    os.makedirs(home, exist_ok=True)
    line = (_dumps(entry) + "\n").encode("utf-8")
    descriptor = os.open(
        os.path.join(home, "calls.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644
    )
    try:
        os.write(descriptor, line)
    finally:
        os.close(descriptor)


def _apply_config(outcome: Outcome, command: str | None, config: Mapping[str, Any]) -> None:
    payload = outcome.payload
    if payload is not None and command is not None:
        patch = (config.get("patch") or {}).get(command) or {}
        drop = (config.get("drop") or {}).get(command) or []
        if patch or drop:
            payload.update(patch)
            for key in drop:
                payload.pop(key, None)
            outcome.stdout = _dumps(payload) + "\n"
    if isinstance(config.get("stdout"), str):
        outcome.stdout = config["stdout"]
    if config.get("exit_code") is not None:
        outcome.code = int(config["exit_code"])


def _write(stream: Any, text: str) -> None:
    if text:
        stream.buffer.write(text.encode("utf-8"))
        stream.buffer.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the double as the ``chronicle`` command; returns the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    home = os.environ.get(HOME_VARIABLE)
    config = _load_config(home)
    cwd = os.getcwd()
    grandchild = _start_grandchild() if config.get("grandchild") else None
    if home:
        entry = {
            "argv": arguments,
            "cwd": cwd,
            "pid": os.getpid(),
            "stdin": _stdin_state(),
            "grandchild": grandchild,
        }
        _record(home, entry)
    if config.get("delay"):
        import time

        time.sleep(float(config["delay"]))
    _write(sys.stderr, str(config.get("stderr") or ""))
    outcome = run(arguments, cwd)
    try:
        command = parse_arguments(arguments).command
    except UsageError:
        command = None
    _apply_config(outcome, command, config)
    _write(sys.stderr, outcome.stderr)
    _write(sys.stdout, outcome.stdout)
    return outcome.code


# --------------------------------------------------------------------------- the Python helper


class ChronicleCall:
    """One recorded run of the double."""

    __slots__ = ("argv", "cwd", "grandchild", "pid", "stdin")

    def __init__(
        self, argv: list[str], cwd: str, pid: int, stdin: str, grandchild: int | None = None
    ) -> None:
        """Hold one line of the call log.

        Args:
            argv: The arguments, without the program name.
            cwd: The working directory of the run.
            pid: The double's process id.
            stdin: ``closed``, ``eof``, ``data`` or ``open`` (see the module docs).
            grandchild: The pid of the sleeping child it started, if configured.
        """
        self.argv = argv
        self.cwd = cwd
        self.pid = pid
        self.stdin = stdin
        self.grandchild = grandchild

    def __repr__(self) -> str:
        """Show the call like a constructor."""
        return f"ChronicleCall(argv={self.argv!r}, cwd={self.cwd!r}, pid={self.pid})"

    def __eq__(self, other: object) -> bool:
        """Calls are equal when every recorded field is."""
        if not isinstance(other, ChronicleCall):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    __hash__ = None  # type: ignore[assignment]


def _iso(ms: int) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def _ms(ts: str) -> int:
    import calendar
    import time

    seconds = calendar.timegm(time.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S"))
    return seconds * 1000 + int(ts[20:23] or 0)


FIRST_TS = "2026-07-20T09:00:00.000Z"


class FakeStore:
    """A fake ``.chronicle/`` store and its fixture file.

    Each ``add_*`` call rewrites ``.chronicle/fake-chronicle.json`` atomically.
    Timestamps default to one minute after the latest one in the store, and
    ids are ULIDs derived from the timestamp, so a test that adds the same
    things gets the same ids.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        """Wrap the store whose ``.chronicle/`` sits in ``root``."""
        from pathlib import Path

        self.root = Path(root)
        self.chronicle_dir = self.root / STORE_DIRNAME
        self.fixture_path = self.chronicle_dir / FIXTURE_NAME

    def data(self) -> dict[str, Any]:
        """The fixture as stored (an empty description when there is none yet)."""
        if not self.fixture_path.exists():
            return {"fakeChronicle": 1}
        return json.loads(self.fixture_path.read_text(encoding="utf-8"))

    def write(self, data: Mapping[str, Any]) -> None:
        """Replace the fixture with ``data`` (see the module docs for its format)."""
        text = json.dumps(dict(data), ensure_ascii=False, indent=2) + "\n"
        _write_atomic(str(self.fixture_path), text)

    def _next_ts(self, data: Mapping[str, Any]) -> str:
        stamps = [
            item["ts"]
            for key in ("sessions", "prompts", "knowledge")
            for item in data.get(key, [])
            if isinstance(item, dict) and isinstance(item.get("ts"), str)
        ]
        return _iso(_ms(max(stamps)) + 60_000) if stamps else FIRST_TS

    def add_session(
        self, session_id: str | None = None, *, private: bool = False, ts: str | None = None
    ) -> str:
        """Add a session; ``private`` marks it privatised (its events are not scanned)."""
        data = self.data()
        ts = ts or self._next_ts(data)
        count = len(data.get("sessions", []))
        session_id = session_id or "ses_" + ulid(_ms(ts), f"session {count} {ts}")
        data.setdefault("sessions", []).append({"id": session_id, "private": private, "ts": ts})
        self.write(data)
        return session_id

    def add_prompt(
        self,
        text: str | None,
        files: Mapping[str, tuple[int, int] | Sequence[int] | str],
        *,
        session: str | None = None,
        ts: str | None = None,
        event_id: str | None = None,
    ) -> str:
        """Add a captured turn that changed ``files``; returns its event id.

        Args:
            text: The prompt body (None or blank: the text is unavailable).
            files: Repo-relative POSIX path -> ``(added, removed)`` or ``"bin"``.
            session: Its session; default the last one added (one is created
                when there is none).
            ts: Its timestamp, ``YYYY-MM-DDTHH:MM:SS.mmmZ``.
            event_id: Its ``evt_`` id; by default a ULID for ``ts``.
        """
        if session is None:
            sessions = self.data().get("sessions", [])
            session = sessions[-1]["id"] if sessions else self.add_session()
        data = self.data()
        ts = ts or self._next_ts(data)
        count = len(data.get("prompts", []))
        event_id = event_id or "evt_" + ulid(_ms(ts), f"prompt {count} {ts}")
        changes = {
            path: change if isinstance(change, str) else [int(change[0]), int(change[1])]
            for path, change in files.items()
        }
        prompt = {"eventId": event_id, "ts": ts, "session": session, "text": text}
        data.setdefault("prompts", []).append({**prompt, "files": changes})
        self.write(data)
        return event_id

    def add_knowledge(
        self,
        kind: str,
        text: str,
        *,
        event_id: str | None = None,
        session: str | None = None,
        ts: str | None = None,
        role: str | None = None,
        confidence: str = "high",
    ) -> None:
        """Add a decision or TODO extracted from an event.

        By default it comes from the last prompt added (its event, session and
        time, role ``human``); with another ``event_id`` (an agent response)
        pass the session, and the time defaults to a minute after the latest.
        """
        data = self.data()
        prompts = data.get("prompts", [])
        source = next(
            (p for p in reversed(prompts) if event_id in (None, p["eventId"])),
            None,
        )
        if source is not None:
            event_id = event_id or source["eventId"]
            session = session or source["session"]
            ts = ts or source["ts"]
            role = role or "human"
        ts = ts or self._next_ts(data)
        event_id = event_id or "evt_" + ulid(_ms(ts), f"response {text}")
        item = {
            "kind": kind,
            "text": text,
            "eventId": event_id,
            "session": session,
            "ts": ts,
            "role": role or "agent",
            "confidence": confidence,
        }
        data.setdefault("knowledge", []).append(item)
        self.write(data)

    def add_memory(
        self,
        kind: str,
        content: str,
        *,
        status: str = "active",
        sessions: Sequence[str] | None = None,
        memory_id: str | None = None,
    ) -> str:
        """Add a Project Memory item related to ``sessions`` (default: the last one)."""
        import hashlib

        data = self.data()
        if sessions is None:
            known = data.get("sessions", [])
            sessions = [known[-1]["id"]] if known else []
        count = len(data.get("memory", []))
        digest = hashlib.sha256(f"{count} {kind} {content}".encode()).hexdigest()
        memory_id = memory_id or f"mem_{digest[:12]}"
        item = {
            "id": memory_id,
            "kind": kind,
            "status": status,
            "content": content,
            "sessions": list(sessions),
        }
        data.setdefault("memory", []).append(item)
        self.write(data)
        return memory_id


class FakeChronicle:
    """The double's home: its installed ``chronicle``, configuration and call log.

    Args:
        home: A folder of its own (created if needed); keep it outside any
            fake store, or the double's walk-up could find the wrong store.
    """

    CONFIG_KEYS = frozenset(
        {"delay", "exit_code", "stderr", "stdout", "patch", "drop", "grandchild"}
    )

    def __init__(self, home: str | os.PathLike[str]) -> None:
        """Use ``home`` for the bin folder, ``config.json`` and ``calls.jsonl``."""
        from pathlib import Path

        self.home = Path(home)
        self.home.mkdir(parents=True, exist_ok=True)
        self.bin_dir = self.home / "bin"
        self.config_path = self.home / "config.json"
        self.log_path = self.home / "calls.jsonl"

    def install(
        self, bin_dir: str | os.PathLike[str] | None = None, name: str = "chronicle"
    ) -> Path:
        """Write an executable ``name`` that runs the double with this interpreter.

        Returns:
            The script's path (in ``bin_dir``, default ``home/bin``).
        """
        import shlex
        from pathlib import Path

        folder = Path(bin_dir) if bin_dir is not None else self.bin_dir
        folder.mkdir(parents=True, exist_ok=True)
        script = folder / name
        text = (
            "#!/bin/sh\n"
            "# Gigai Chronicle's double, written by karni_provider_testkit.FakeChronicle.\n"
            f"{HOME_VARIABLE}={shlex.quote(str(self.home))}\n"
            f"export {HOME_VARIABLE}\n"
            f"exec {shlex.quote(sys.executable)} -P -m karni_provider_testkit.fake_chronicle"
            ' "$@"\n'
        )
        _write_atomic(str(script), text)
        script.chmod(0o755)
        return script

    def path_with_bin(self, path: str | None = None) -> str:
        """``PATH`` (default: the current one) with the double's bin folder first."""
        current = os.environ.get("PATH", "") if path is None else path
        return os.pathsep.join(part for part in (str(self.bin_dir), current) if part)

    def create_store(self, folder: str | os.PathLike[str]) -> FakeStore:
        """Create an empty store (``folder/.chronicle/`` as ``chronicle init`` would)."""
        store = FakeStore(folder)
        store.chronicle_dir.mkdir(parents=True, exist_ok=True)
        config = store.chronicle_dir / "config.json"
        if not config.exists():
            identity = {"id": "prj_" + ulid(_ms(FIRST_TS), str(folder)), "name": "fake"}
            text = json.dumps({"version": 1, "project": identity}, indent=2) + "\n"
            _write_atomic(str(config), text)
            _write_atomic(str(store.chronicle_dir / ".gitignore"), ".cache/\n.local/\n")
        return store

    def example_store(self, folder: str | os.PathLike[str]) -> FakeStore:
        """Create the store behind the contract's examples (§1.6 (a)–(c), §2.5).

        ``context src/session/cache.ts`` gives example (a),
        ``context src/session/store.ts`` example (b) and
        ``context src/api/client.py`` example (c), each with ``--limit 5``.
        """
        from pathlib import Path

        store = self.create_store(folder)
        source = Path(__file__).with_name(EXAMPLE_FIXTURE)
        store.write(json.loads(source.read_text(encoding="utf-8")))
        return store

    def configure(self, **options: Any) -> None:
        """Change how the next runs behave (the keys of ``config.json``; see the module docs).

        A value of None removes that setting.

        Raises:
            TypeError: For a key the double does not know.
        """
        unknown = sorted(set(options) - self.CONFIG_KEYS)
        if unknown:
            raise TypeError(
                f"FakeChronicle.configure: unknown setting {unknown[0]!r}; "
                f"use one of {sorted(self.CONFIG_KEYS)}"
            )
        config = self.config()
        for key, value in options.items():
            if value is None:
                config.pop(key, None)
            else:
                config[key] = value
        _write_atomic(str(self.config_path), json.dumps(config, ensure_ascii=False) + "\n")

    def config(self) -> dict[str, Any]:
        """The current settings."""
        return _load_config(str(self.home))

    def reset(self) -> None:
        """Forget every setting and every recorded call."""
        for path in (self.config_path, self.log_path):
            path.unlink(missing_ok=True)

    def calls(self) -> list[ChronicleCall]:
        """Every run recorded since the last :meth:`reset`, oldest first."""
        if not self.log_path.exists():
            return []
        calls = []
        for line in self.log_path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            calls.append(
                ChronicleCall(
                    entry["argv"], entry["cwd"], entry["pid"], entry["stdin"], entry["grandchild"]
                )
            )
        return calls

    def run(
        self, *arguments: str, cwd: str | os.PathLike[str], timeout: float = 30.0
    ) -> subprocess.CompletedProcess[bytes]:
        """Run the installed ``chronicle`` (see :meth:`install`) and capture its output."""
        import subprocess

        return subprocess.run(
            [str(self.bin_dir / "chronicle"), *arguments],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` is still running (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def _make_fixture() -> Any:
    import pytest

    @pytest.fixture
    def fake_chronicle(tmp_path_factory: Any, monkeypatch: Any) -> Iterator[FakeChronicle]:
        """A :class:`FakeChronicle` with ``chronicle`` installed and first on ``PATH``."""
        double = FakeChronicle(tmp_path_factory.mktemp("fake-chronicle-home"))
        double.install()
        monkeypatch.setenv("PATH", double.path_with_bin())
        yield double

    return fake_chronicle


def __getattr__(name: str) -> Any:
    # The fixture needs pytest, which the double, run as a program, must not pay for.
    if name == "fake_chronicle":
        fixture = _make_fixture()
        globals()[name] = fixture
        return fixture
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    sys.exit(main())
