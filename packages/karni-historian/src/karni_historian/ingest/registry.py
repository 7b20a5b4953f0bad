"""The transcript readers the historian has, and which one reads which file.

One module per harness finds its files and turns their records into messages
(``docs/historian/harnesses.md``); this module is the one place that lists
them: what ``ingest`` reads without ``--from``, how a file given with
``--from`` is recognised (by its first lines), and which reader reads a
recognised file. OpenCode's stores are not line files; they are read whole by
:func:`karni_historian.ingest.opencode.ingest_source` (see :data:`STORE_KINDS`).
"""

from __future__ import annotations

import os

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
]

STORE_KINDS = frozenset({"opencode"})
"""Kinds read as a whole store rather than line by line."""

_READERS = {
    "chronicle": ("karni_historian.ingest.chronicle", "ChronicleReader"),
    "pi": ("karni_historian.ingest.pi", "PiReader"),
    "claude-code": ("karni_historian.ingest.claude_code_records", "ClaudeCodeReader"),
    "claude-code-agent": ("karni_historian.ingest.claude_code_records", "ClaudeCodeAgentReader"),
    "generic": ("karni_historian.ingest.generic", "GenericReader"),
}


def default_sources(root: str) -> list[tuple[str, str]]:
    """``(path, kind)`` of the project's transcripts found without ``--from``.

    Subagent files come after the session files, so that a subagent linked to
    its Task call is read when that call's result is, in its place.
    """
    from karni_historian.ingest import chronicle, claude_code, opencode, pi
    from karni_historian.ingest.claude_code_agents import AGENT_KIND

    sessions = claude_code.find_files(root)
    sources = [(path, claude_code.KIND) for path in sessions]
    sources += [(path, AGENT_KIND) for path in claude_code.find_agent_files(sessions)]
    sources += [(path, pi.KIND) for path in pi.find_files(root)]
    sources += [(path, opencode.KIND) for path in opencode.find_sources()]
    sources += [(path, chronicle.KIND) for path in chronicle.find_files(root)]
    return sources


def expand(path: str) -> list[tuple[str, str | None]]:
    """The transcripts in a ``--from`` path: ``(path, kind)``, the kind None until sniffed.

    A folder is walked for ``*.jsonl`` files; an OpenCode database or
    ``storage`` folder (or a data folder holding one) is one source; Claude
    Code subagent files are listed after the rest, as subagents.
    """
    from karni_historian.ingest import opencode
    from karni_historian.ingest.claude_code_agents import AGENT_KIND

    if opencode.is_source(path):
        return [(os.path.abspath(path), opencode.KIND)]
    if os.path.isfile(path):
        return [(os.path.abspath(path), None)]
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
            elif not name.endswith(".jsonl") or name == "journal.jsonl":
                continue
            elif not os.path.isfile(full):
                continue  # a FIFO or a device is never opened
            elif name.startswith("agent-"):
                agents.append((full, AGENT_KIND))
            elif os.path.basename(directory) != "subagents":
                found.append((full, None))
    return found + agents


def sniff_record(record: dict[str, Any]) -> str | None:
    """The kind of transcript a parsed line belongs to, or None when no reader knows it."""
    from karni_historian.ingest import chronicle, claude_code, generic, pi

    if chronicle.sniff(record):
        return chronicle.KIND
    if pi.sniff(record):
        return pi.KIND
    if claude_code.sniff(record):
        return claude_code.KIND
    if generic.sniff(record):
        return generic.KIND
    return None


def reader_for(kind: str, sink: Sink, path: str) -> Any:
    """A new reader of ``kind`` for the file at ``path``."""
    import importlib

    module, name = _READERS.get(kind, _READERS["generic"])
    return getattr(importlib.import_module(module), name)(sink, path)


def cursor_is_stale(store: Store, path: str, kind: str | None) -> bool:
    """Whether a file was rewritten in place, so its cursor no longer points into it."""
    if kind != "pi":
        return False
    from karni_historian.ingest import pi

    return pi.cursor_is_stale(store, path)
