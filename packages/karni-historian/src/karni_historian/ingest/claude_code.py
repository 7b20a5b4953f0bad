"""Claude Code session files: where they are, and how to recognise their records.

Claude Code writes one JSONL file per session under
``<config>/projects/<project key>/<session id>.jsonl``, where the config folder
is ``$CLAUDE_CONFIG_DIR`` or ``~/.claude`` and the key is the project's
absolute path with every character outside ``[A-Za-z0-9]`` replaced by ``-``
(``docs/historian/harnesses.md``). Subagents write their own files, in
``<session id>/subagents/`` or (older builds) as ``agent-*.jsonl`` beside the
session files; they are found here but read into their parent session.

The records themselves are read by
:class:`~karni_historian.ingest.claude_code_records.ClaudeCodeReader`.
"""

from __future__ import annotations

import json
import os

from karni.agent.common.files import open_regular_file

from karni_historian.ingest.claude_code_agents import agent_files
from karni_historian.ingest.claude_code_records import ClaudeCodeAgentReader, ClaudeCodeReader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "KIND",
    "ClaudeCodeAgentReader",
    "ClaudeCodeReader",
    "config_roots",
    "find_agent_files",
    "find_files",
    "project_key",
    "sniff",
]

KIND = "claude-code"


def config_roots() -> list[str]:
    """The folders that may hold ``projects/``, most specific first.

    ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``, then ``$XDG_CONFIG_HOME/claude``.
    """
    home = os.path.expanduser("~")
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    roots = [configured] if configured else [os.path.join(home, ".claude")]
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    roots.append(os.path.join(xdg, "claude"))
    unique: list[str] = []
    for root in roots:
        if root not in unique:
            unique.append(root)
    return unique


def project_key(path: str) -> str:
    """The folder name Claude Code gives the project at ``path`` (absolute).

    Every UTF-16 code unit outside ``[A-Za-z0-9]`` becomes ``-`` (so an
    astral character gives two). Keys longer than 200 characters are cut to
    200 here; Claude Code appends a hash, matched by :func:`find_files`.
    """
    out: list[str] = []
    for char in path:
        if char.isascii() and char.isalnum():
            out.append(char)
        else:
            out.append("--" if ord(char) > 0xFFFF else "-")
    return "".join(out)


def _session_files(folder: str) -> list[str]:
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [
        os.path.join(folder, name)
        for name in sorted(names)
        if name.endswith(".jsonl")
        and not name.startswith("agent-")
        and name != "journal.jsonl"
        and os.path.isfile(os.path.join(folder, name))
    ]


def _recorded_cwd(path: str) -> str | None:
    """The ``cwd`` of the first record of a session file that has one (first 50 lines)."""
    try:
        with open_regular_file(path) as handle:
            for count, line in enumerate(handle):
                if count >= 50:
                    break
                try:
                    record = json.loads(line.lstrip(b"\x00"))
                except ValueError:
                    continue
                cwd = record.get("cwd") if isinstance(record, dict) else None
                if isinstance(cwd, str):
                    return cwd
    except OSError:
        return None
    return None


def _inside(cwd: str | None, paths: set[str]) -> bool:
    if cwd is None:
        return False
    cwd = os.path.normpath(cwd)
    return any(cwd == path or cwd.startswith(path.rstrip(os.sep) + os.sep) for path in paths)


def find_files(root: str) -> list[str]:
    """The main session files of the project at ``root``, sorted, across config roots.

    The project's own folder is ``projects/<key>``; sessions started in a
    subfolder of the project live in folders whose key extends it (``<key>-…``)
    and are included when their records' ``cwd`` lies inside the project, as
    are long keys that Claude Code shortened with a hash. Subagent files
    (``agent-*.jsonl``, ``<session>/subagents/``) are not sessions of their own
    and are left out.
    """
    paths = {os.path.abspath(root), os.path.realpath(root)}
    files: list[str] = []
    for config in config_roots():
        projects = os.path.join(config, "projects")
        try:
            names = sorted(os.listdir(projects))
        except OSError:
            continue
        for path in sorted(paths):
            key = project_key(path)
            if len(key) <= 200:
                files.extend(_session_files(os.path.join(projects, key)))
            prefix = key[:200] + "-"
            for name in names:
                if not name.startswith(prefix):
                    continue
                candidates = _session_files(os.path.join(projects, name))
                if candidates and _inside(_recorded_cwd(candidates[0]), paths):
                    files.extend(candidates)
    unique: list[str] = []
    for file in files:
        if file not in unique:
            unique.append(file)
    return unique


def sniff(record: dict[str, Any]) -> bool:
    """Whether a parsed line looks like a Claude Code record."""
    return (
        "sessionId" in record
        or "parentUuid" in record
        or record.get("type") in ("file-history-snapshot", "ai-title", "custom-title", "summary")
    )


def find_agent_files(session_files: list[str]) -> list[str]:
    """The subagent files beside or under the given session files, sorted, each once."""
    found: list[str] = []
    folders: list[str] = []
    for path in session_files:
        session_id = os.path.splitext(os.path.basename(path))[0]
        found.extend(agent_files(path, session_id))
        if os.path.dirname(path) not in folders:
            folders.append(os.path.dirname(path))
    for folder in folders:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        found.extend(
            os.path.join(folder, name)
            for name in names
            if name.startswith("agent-") and name.endswith(".jsonl")
        )
    unique: list[str] = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return unique
