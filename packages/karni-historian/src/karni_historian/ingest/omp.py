r"""Oh My Pi (``omp``) session files: Pi's format, kept in OMP's own folder.

Oh My Pi is a fork of Pi and writes Pi's JSONL session format (header, then
an entry tree), so :class:`OmpReader` is Pi's reader with OMP's differences:

- **Where.** The agent folder is ``$OMP_CODING_AGENT_DIR`` (else
  ``~/.omp/agent``; with ``$OMP_PROFILE``, ``~/.omp/profiles/<profile>/agent``),
  sessions under ``sessions/<folder>/<time>_<id>.jsonl``. The folder is Pi's
  ``--<path>--`` for older versions; current ones name a folder under the home
  folder ``-<path from home>`` and one under the temporary folder
  ``-tmp-<path>``, with ``/``, ``\`` and ``:`` replaced by ``-`` either way.
  OMP also honours ``$PI_CODING_AGENT_DIR``: a file there is OMP's when it
  carries OMP's marks (below).
- **The first line.** Current versions put a fixed-width title slot
  (``{"type": "title", "v": 1, "title", …, "pad"}``) before the header and
  rewrite it in place when the title changes, so the header is found in the
  first lines and a changed title never makes the file look rewritten.
- **Titles** come from the slot, ``title_change`` entries and the header's
  ``title``.
- **Subagents.** A ``task`` subagent writes a session file of its own, in a
  folder beside its parent's, starting with a ``session_init`` entry; its
  messages go to the parent session (``parentSession``, an id or a file path),
  its calls marked with its session id, and its task is not a prompt.
- OMP's own entries (``ttsr_injection``, ``mode_change``, ``model_usage``, …)
  are skipped like Pi's extension entries.

Sessions are recorded as harness ``omp``, so ``[historian.omp]`` (or, when
the project has no such block, ``[historian.pi]``) chooses their historian.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile

from karni.agent.common.paths import project_relative

from karni_historian.ingest import pi
from karni_historian.ingest.pi import PiReader, _texts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni_historian.ingest.sink import SessionWriter, Sink
    from karni_historian.store import Store

__all__ = [
    "KIND",
    "OMP_ENTRY_TYPES",
    "OmpReader",
    "agent_dirs",
    "cursor_is_stale",
    "find_files",
    "folder_names",
    "is_omp_path",
    "read_head",
    "sniff",
]

KIND = "omp"

OMP_ENTRY_TYPES = frozenset(
    {
        "title",
        "title_change",
        "ttsr_injection",
        "session_init",
        "mode_change",
        "model_usage",
        "credential_pin",
        "reset_boundary",
        "archive",
        "service_tier_change",
        "subagent_spawn",
        "settings_snapshot",
    }
)
"""Entry types only Oh My Pi writes."""

_HEAD_LINES = 8
_LINE_LIMIT = 1 << 16
_WALK_DEPTH = 1
_WALK_FILES = 20_000


def agent_dirs() -> list[str]:
    """OMP's agent folders: ``$OMP_CODING_AGENT_DIR`` or ``~/.omp/agent``, and a profile's."""
    configured = os.environ.get("OMP_CODING_AGENT_DIR")
    folders = [os.path.expanduser(configured or "~/.omp/agent")]
    profile = os.environ.get("OMP_PROFILE")
    if profile and "/" not in profile and profile not in (".", ".."):
        folders.append(os.path.expanduser(f"~/.omp/profiles/{profile}/agent"))
    return list(dict.fromkeys(folders))


def _section(path: str) -> str:
    return path.replace("/", "-").replace("\\", "-").replace(":", "-")


def folder_names(cwd: str) -> list[str]:
    """The session folder names OMP versions give sessions started in ``cwd`` (absolute)."""
    names = ["--" + _section(cwd.lstrip("/\\")) + "--"]
    for base, prefix in ((os.path.expanduser("~"), "-"), (tempfile.gettempdir(), "-tmp-")):
        base = os.path.realpath(base)
        relative = os.path.relpath(cwd, base) if cwd.startswith(base) else None
        if relative is not None and not relative.startswith(".."):
            names.append(prefix.rstrip("-") if relative == "." else prefix + _section(relative))
    return names


def read_head(path: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None, bytes]:
    """``(title slot, session header, header line)`` of an OMP or Pi session file."""
    slot: dict[str, Any] | None = None
    try:
        with open(path, "rb") as handle:
            for _ in range(_HEAD_LINES):
                line = handle.readline(_LINE_LIMIT)
                if not line:
                    break
                try:
                    record = json.loads(line.lstrip(b"\x00"))
                except ValueError:
                    return slot, None, b""
                if not isinstance(record, dict):
                    return slot, None, b""
                if record.get("type") == "title" and slot is None:
                    slot = record
                elif record.get("type") == "session":
                    return slot, record, line
                else:
                    return slot, None, b""
    except OSError:
        pass
    return slot, None, b""


def _marked(path: str) -> bool:
    """Whether a Pi-format file carries OMP's marks (a title slot or OMP-only entries)."""
    try:
        with open(path, "rb") as handle:
            for _ in range(50):
                line = handle.readline(_LINE_LIMIT)
                if not line:
                    return False
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and record.get("type") in OMP_ENTRY_TYPES:
                    return True
    except OSError:
        return False
    return False


def _jsonl_files(folder: str) -> list[str]:
    found: list[str] = []
    for directory, subdirectories, names in os.walk(folder):
        level = directory[len(folder) :].count(os.sep)
        subdirectories[:] = sorted(subdirectories) if level < _WALK_DEPTH else []
        found.extend(os.path.join(directory, n) for n in sorted(names) if n.endswith(".jsonl"))
        if len(found) >= _WALK_FILES:
            break
    return found


def find_files(root: str) -> list[str]:
    """The OMP session files of the project at ``root`` (and its subfolders), sorted."""
    paths = dict.fromkeys([os.path.abspath(root), os.path.realpath(root)])
    prefixes = tuple(
        name[:-2] if name.endswith("--") else name for p in paths for name in folder_names(p)
    )
    folders = [(folder, True) for folder in agent_dirs()]
    if os.environ.get("PI_CODING_AGENT_DIR") and not os.environ.get("OMP_CODING_AGENT_DIR"):
        folders.append((pi.agent_dir(), False))  # OMP reads Pi's variable too
    found: list[str] = []
    for agent, own in folders:
        sessions = os.path.join(agent, "sessions")
        try:
            names = sorted(os.listdir(sessions))
        except OSError:
            continue
        for name in names:
            if not name.startswith(prefixes):
                continue
            for path in _jsonl_files(os.path.join(sessions, name)):
                _, header, _ = read_head(path)
                cwd = header.get("cwd") if header else None
                if not isinstance(cwd, str) or project_relative(root, cwd) is None:
                    continue
                if (own or _marked(path)) and path not in found:
                    found.append(path)
    return sorted(found)


def is_omp_path(path: str) -> bool:
    """Whether ``path`` lies in one of OMP's agent folders."""
    real = os.path.realpath(path)
    for folder in agent_dirs():
        base = os.path.realpath(folder)
        if real.startswith(base.rstrip(os.sep) + os.sep):
            return True
    return False


def sniff(record: dict[str, Any]) -> bool:
    """Whether a parsed line is one only OMP writes (its title slot, or an OMP entry)."""
    return record.get("type") in OMP_ENTRY_TYPES and (
        record.get("type") != "title" or "pad" in record or "v" in record
    )


def _head_key(path: str, line: bytes) -> str:
    return f"omp-head:{path}:{hashlib.sha256(line).hexdigest()[:32]}"


def cursor_is_stale(store: Store, path: str) -> bool:
    """Whether the file's session header changed since it was last read (see :mod:`pi`).

    The title slot before it is rewritten in place at the same width, which
    moves nothing, so only the header line counts. The reader records the
    header it read (:class:`OmpReader`), so an unchanged file is never read twice.
    """
    _, header, line = read_head(path)
    if header is None:
        return False
    new_head = store.first_sighting(_head_key(path, line))
    return new_head and store.cursor(path) is not None


def _session_id_of(parent: Any) -> str | None:
    """A parent session id from ``parentSession``: an id, or a session file's path."""
    if not isinstance(parent, str) or not parent.strip():
        return None
    if parent.endswith(".jsonl") or "/" in parent or "\\" in parent:
        stem = os.path.splitext(os.path.basename(parent))[0]
        return stem.partition("_")[2] or stem
    return parent


def _starts_as_subagent(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            for _ in range(_HEAD_LINES):
                line = handle.readline(_LINE_LIMIT)
                if not line:
                    return False
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and record.get("type") == "session_init":
                    return True
    except OSError:
        return False
    return False


class OmpReader(PiReader):
    """Turns the entries of one OMP session file into messages (Pi's reader, OMP's rules)."""

    kind = KIND

    def __init__(self, sink: Sink, path: str) -> None:
        """Read the session stored at ``path``; its header (after any title slot) names it."""
        super().__init__(sink, path)
        slot, header, line = read_head(path)
        if header is not None:
            sink.store.first_sighting(_head_key(path, line))
        header = header or {}
        own = header.get("id")
        stem = os.path.splitext(os.path.basename(path))[0]
        own_id = own if isinstance(own, str) and own else stem.partition("_")[2] or stem
        cwd = header.get("cwd")
        self.cwd = cwd if isinstance(cwd, str) else None
        self.session_id = own_id
        self.owner: str | None = None
        if _starts_as_subagent(path):
            parent = _session_id_of(header.get("parentSession"))
            if parent is None:
                folder = os.path.basename(os.path.dirname(path))
                parent = folder.partition("_")[2] or None
            if parent and parent != own_id:
                self.session_id, self.owner = parent, own_id
        self._slot_title = slot.get("title") if slot else None
        self._header_title = header.get("title")

    def writer(self) -> SessionWriter:
        """The session's writer (harness ``omp``); a new one takes the titles its head carries."""
        if self._writer is None:
            self._writer = self.sink.session(self.session_id or "omp-session", KIND, self.cwd)
            if self.owner is None:
                for title, rank in ((self._header_title, 3), (self._slot_title, 4)):
                    if isinstance(title, str) and title.strip():
                        self.sink.store.set_title(self.session_id, title, rank)
        return self._writer

    def feed(self, record: dict[str, Any]) -> None:
        """Take one parsed line (OMP's title entries, then Pi's)."""
        kind = record.get("type")
        if kind in ("title", "title_change"):
            title = record.get("title")
            if isinstance(title, str) and title.strip() and self.owner is None:
                self.writer()
                self.sink.store.set_title(self.session_id, title, 4)
            return
        super().feed(record)

    def _user(self, message: dict[str, Any], timestamp: str | None) -> None:
        if self.owner is None:
            super()._user(message, timestamp)
            return

        texts = [text for text in _texts(message.get("content")) if text.strip()]
        if texts:
            parts = [{"type": "text", "text": text, "ignored": True} for text in texts]
            self.writer().append("user", parts, timestamp)

    def _assistant(
        self, message: dict[str, Any], timestamp: str | None, owner: str | None = None
    ) -> None:
        super()._assistant(message, timestamp, owner or self.owner)
