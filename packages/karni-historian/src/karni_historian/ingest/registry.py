"""The transcript readers the historian has, and which one reads which file.

One module per harness finds its files and turns their records into messages
(``docs/historian/harnesses.md``); this module is the one place that lists
them: what ``ingest`` reads without ``--from``, how a file given with
``--from`` is recognised (by its first lines), and which reader reads a
recognised file. OpenCode's stores, Gemini CLI's older one-object session
files and Aider's Markdown chat histories are not JSON line files; each is read
by its own function (see :data:`STORE_KINDS`).
"""

from __future__ import annotations

import importlib
import os

from karni_historian.ingest import (
    aider,
    chronicle,
    claude_code,
    codex,
    gemini,
    omp,
    opencode,
    pi,
)
from karni_historian.ingest.claude_code_agents import AGENT_KIND

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni_historian.ingest.sink import Sink
    from karni_historian.store import Store

__all__ = [
    "STORE_KINDS",
    "cursor_is_stale",
    "default_sources",
    "expand",
    "reader_for",
    "sniff_record",
    "store_reader",
]

_STORE_READERS = {
    "opencode": ("karni_historian.ingest.opencode", "ingest_source"),
    "gemini-json": ("karni_historian.ingest.gemini", "ingest_json"),
    "aider": ("karni_historian.ingest.aider", "ingest_file"),
}

STORE_KINDS = frozenset(_STORE_READERS)
"""Kinds read by a function of their own rather than line by line."""

_READERS = {
    "chronicle": ("karni_historian.ingest.chronicle", "ChronicleReader"),
    "pi": ("karni_historian.ingest.pi", "PiReader"),
    "omp": ("karni_historian.ingest.omp", "OmpReader"),
    "codex": ("karni_historian.ingest.codex", "CodexReader"),
    "gemini": ("karni_historian.ingest.gemini", "GeminiReader"),
    "claude-code": ("karni_historian.ingest.claude_code_records", "ClaudeCodeReader"),
    "claude-code-agent": ("karni_historian.ingest.claude_code_records", "ClaudeCodeAgentReader"),
    "generic": ("karni_historian.ingest.generic", "GenericReader"),
}


def default_sources(root: str) -> list[tuple[str, str]]:
    """``(path, kind)`` of the project's transcripts found without ``--from``.

    Subagent files come after the session files, so that a subagent linked to
    its Task call is read when that call's result is, in its place.
    OMP's files come before Pi's: OMP may share Pi's folder, and a file found
    by both is read once, as the first kind found.
    """
    sessions = claude_code.find_files(root)
    sources = [(path, claude_code.KIND) for path in sessions]
    sources += [(path, AGENT_KIND) for path in claude_code.find_agent_files(sessions)]
    sources += [(path, codex.KIND) for path in codex.find_files(root)]
    sources += gemini.find_files(root)
    sources += [(path, omp.KIND) for path in omp.find_files(root)]
    sources += [(path, pi.KIND) for path in pi.find_files(root)]
    sources += [(path, opencode.KIND) for path in opencode.find_sources()]
    sources += [(path, aider.KIND) for path in aider.find_files(root)]
    sources += [(path, chronicle.KIND) for path in chronicle.find_files(root)]
    return sources


def expand(path: str) -> list[tuple[str, str | None]]:
    """The transcripts in a ``--from`` path: ``(path, kind)``, the kind None until sniffed.

    A folder is walked for ``*.jsonl`` files, Gemini CLI's older
    ``session-*.json`` files and Aider's ``*.chat.history.md``; an OpenCode
    database or ``storage`` folder (or a data folder holding one) is one
    source; Claude Code subagent files are listed after the rest, as subagents.
    """
    if opencode.is_source(path):
        return [(os.path.abspath(path), opencode.KIND)]
    if os.path.isfile(path):
        return [(os.path.abspath(path), _kind_by_name(path))]
    found: list[tuple[str, str | None]] = []
    agents: list[tuple[str, str | None]] = []
    for directory, subdirectories, names in os.walk(path):
        if opencode.is_source(directory):
            found.append((os.path.abspath(directory), opencode.KIND))
            subdirectories[:] = []
            continue
        subdirectories[:] = sorted(d for d in subdirectories if d not in ("blobs", "tool-results"))
        for name in sorted(names):
            full = os.path.abspath(os.path.join(directory, name))
            if name.endswith(".db") and opencode.is_source(full):
                found.append((full, opencode.KIND))
            elif name.endswith((".json", ".md")) and os.path.isfile(full):
                kind = _kind_by_name(full)
                if kind is not None:
                    found.append((full, kind))
            elif not name.endswith(".jsonl") or name == "journal.jsonl":
                continue
            elif not os.path.isfile(full):
                continue  # a FIFO or a device is never opened
            elif name.startswith("agent-"):
                agents.append((full, AGENT_KIND))
            elif os.path.basename(directory) != "subagents":
                found.append((full, _kind_by_name(full)))
    return found + agents


def _kind_by_name(path: str) -> str | None:
    """The kind of a file told by its name and place, or None when its lines must tell."""
    if path.endswith(".md"):
        return aider.KIND if aider.is_history(path) else None
    if path.endswith(".json"):
        return gemini.JSON_KIND if gemini.is_json_session(path) else None
    if path.endswith(".jsonl") and omp.is_omp_path(path):
        return omp.KIND
    return None


def sniff_record(record: dict[str, Any]) -> str | None:
    """The kind of transcript a parsed line belongs to, or None when no reader knows it."""
    # bench row "karni-historian ingest" runs without it
    from karni_historian.ingest import chronicle, claude_code, codex, gemini, generic, omp, pi

    if chronicle.sniff(record):
        return chronicle.KIND
    if omp.sniff(record):
        return omp.KIND
    if pi.sniff(record):
        return pi.KIND
    if gemini.sniff(record):
        return gemini.KIND
    if codex.sniff(record):
        return codex.KIND
    if claude_code.sniff(record):
        return claude_code.KIND
    if generic.sniff(record):
        return generic.KIND
    return None


def reader_for(kind: str, sink: Sink, path: str) -> Any:
    """A new reader of ``kind`` for the file at ``path``."""
    module, name = _READERS.get(kind, _READERS["generic"])
    return getattr(importlib.import_module(module), name)(sink, path)


def store_reader(kind: str) -> Any:
    """The function that reads a source of one of :data:`STORE_KINDS`: ``(sink, path, report)``."""
    module, name = _STORE_READERS[kind]
    return getattr(importlib.import_module(module), name)


def cursor_is_stale(store: Store, path: str, kind: str | None) -> bool:
    """Whether a file was rewritten in place, so its cursor no longer points into it."""
    if kind == "omp":
        return omp.cursor_is_stale(store, path)
    if kind != "pi":
        return False

    return pi.cursor_is_stale(store, path)
