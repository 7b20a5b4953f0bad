"""The Karni history provider for `.my-history/log.jsonl`.

Each line of the log is a JSON object such as
{"path": "apps/events/models.py", "date": "2026-09-30",
 "note": "hard delete destroyed payment history", "reverted": true}.
"""

from __future__ import annotations

import shlex
from pathlib import Path

STORE = ".my-history"


class MyHistoryProvider:
    """Briefs an agent with the notes recorded about one file."""

    name = "my-history"  # shown in the HISTORY: heading; must be unique
    store_markers = (STORE,)  # optional speed hint: no .my-history/, no store

    def detect(self, project_root: Path) -> bool:
        """Is a store present for this project? A directory check, nothing more."""
        return (project_root / STORE).is_dir()

    def context(self, project_root: Path, path: str) -> str | None:
        """The notes about `path`: reverted approaches first, then the rest, newest first."""
        notes = [note for note in read_notes(project_root) if note.get("path") == path]
        if not notes:
            return None
        notes.sort(key=lambda note: str(note.get("date", "")), reverse=True)
        lines = []
        reverted = [note for note in notes if note.get("reverted")]
        if reverted:
            lines.append("**Reverted approaches (do NOT repeat)**")
            lines += [one_line(note) for note in reverted]
        kept = [note for note in notes if not note.get("reverted")]
        if kept:
            lines.append("**Notes (newest first)**")
            lines += [one_line(note) for note in kept]
        return "\n".join(lines)

    def full_command(self, project_root: Path, path: str | None) -> str | None:
        """The command that prints every note about `path`, uncapped."""
        if path is None:
            return None
        return f"my-history show {shlex.quote(path)}"


def read_notes(project_root: Path) -> list[dict]:
    """Every well-formed note in the log; a missing or broken log has none."""
    import json

    try:
        text = (project_root / STORE / "log.jsonl").read_text(encoding="utf-8")
    except (OSError, UnicodeError):
        return []
    notes = []
    for line in text.splitlines():
        try:
            note = json.loads(line)
        except ValueError:
            continue
        if isinstance(note, dict):
            notes.append(note)
    return notes


def one_line(note: dict) -> str:
    """A note as one printable line: `- 2026-09-30 the note`."""
    text = " ".join(f"{note.get('date', '')} {note.get('note', '')}".split())
    return "- " + "".join(char for char in text if char.isprintable())
