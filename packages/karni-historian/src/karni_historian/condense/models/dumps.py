"""Failure dumps: what a failed historian call asked and what came back.

Every failed call (an error, a reply that does not parse or validate, a
failed editor pass) writes one JSON file under
``.karni/local/historian-dumps/``: a summary of the request (model, endpoint,
settings, chunk range, prompt size and opening) and the raw response, both
redacted. The folder and files are owner-only, only the newest
:data:`KEEP_DUMPS` are kept, and errors name the file so that users can
attach it to a report (``docs/historian-models.md``).
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

from karni.agent.common.files import make_folders, write_atomic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["DUMP_FOLDER", "KEEP_DUMPS", "DumpFolder"]

DUMP_FOLDER = os.path.join(".karni", "local", "historian-dumps")
"""Where the dumps live, relative to the project root."""

KEEP_DUMPS = 10
"""How many dumps are kept; older ones are removed when a new one is written."""


class DumpFolder:
    """Writes redacted, owner-only failure dumps for one project.

    Args:
        root: The project root.
        redact: Applied to every string of a dump before it is written.
        clock: Returns the current time as an ISO 8601 string (for tests).
    """

    def __init__(
        self, root: str, redact: Callable[[str], str], clock: Callable[[], str] | None = None
    ) -> None:
        """Create the writer; nothing touches the disk until :meth:`write`."""
        self.path = os.path.join(root, DUMP_FOLDER)
        self._redact = redact
        self._clock = clock or _now

    def write(self, record: Mapping[str, Any]) -> str | None:
        """Write ``record`` (redacted) as a new dump and return its path, None if it failed.

        A dump is a diagnostic: a disk that refuses it never turns a model
        failure into a different one, so ``OSError`` is swallowed here.
        """
        moment = self._clock()
        data = {"time": moment, **_redacted(record, self._redact)}
        text = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
        try:
            _prepare(self.path)
            path = self._new_file(moment, str(record.get("model", "model")), text)
            self._prune()
        except OSError:
            return None
        return path

    def _new_file(self, moment: str, model: str, text: str) -> str:
        slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in model)[:60]
        stamp = "".join(c for c in moment if c.isdigit())[:17]
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        for number in range(1000):
            path = os.path.join(self.path, f"{stamp}-{number:03d}-{slug}.json")
            try:
                descriptor = os.open(path, flags, 0o600)
            except FileExistsError:
                continue
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(text)
            return path
        raise FileExistsError(self.path)

    def _prune(self) -> None:
        names = sorted(name for name in os.listdir(self.path) if name.endswith(".json"))
        for name in names[:-KEEP_DUMPS]:
            os.unlink(os.path.join(self.path, name))

    def newest(self) -> str | None:
        """The path of the newest dump, or None when there is none."""
        try:
            names = sorted(n for n in os.listdir(self.path) if n.endswith(".json"))
        except OSError:
            return None
        return os.path.join(self.path, names[-1]) if names else None


def _prepare(folder: str) -> None:
    """Create the dump folder owner-only, refusing symbolic links on the way.

    The ``.gitignore`` beside it is written only where no entry exists, a
    dangling link included, and by a rename: never through a link.
    """
    local = os.path.dirname(folder)
    root = os.path.dirname(os.path.dirname(local))
    make_folders(folder, within=root)
    for path in (local, folder):
        os.chmod(path, 0o700)
    ignore = os.path.join(local, ".gitignore")
    if not os.path.lexists(ignore):
        write_atomic(ignore, "*\n", within=local, durable=False)


def _redacted(value: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: _redacted(item, redact) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted(item, redact) for item in value]
    return value


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
