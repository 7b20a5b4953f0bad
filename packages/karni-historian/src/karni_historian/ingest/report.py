"""What an ingest run reports: per file, and for the whole run.

Below the readers and the registry, so that a reader that fills a report
(OpenCode's, Gemini CLI's and Aider's store readers) needs nothing above it.
"""

from __future__ import annotations

from karni_historian.ingest.claude_code_agents import AGENT_KIND

__all__ = ["FileReport", "IngestReport"]


class FileReport:
    """What one ingest run did with one file."""

    __slots__ = (
        "added",
        "first_malformed",
        "kind",
        "lines",
        "malformed",
        "other_project",
        "path",
        "problem",
        "torn",
    )

    def __init__(self, path: str, kind: str | None) -> None:
        """Start the report of ``path``."""
        self.path = path
        self.kind = kind
        self.lines = 0
        self.added = 0
        self.malformed = 0
        self.first_malformed: int | None = None
        self.torn = False
        self.problem: str | None = None
        """Why the file was not read, when it was not."""
        self.other_project: str | None = None
        """Where its session ran, when that is outside the project and it was refused."""

    def refuse(self, cwd: str) -> None:
        """Not read: its session ran in ``cwd``, outside the project."""
        self.other_project = cwd
        self.problem = (
            f"its session ran in {cwd}, outside this project; pass --accept-other-project "
            "if it belongs here"
        )


class IngestReport:
    """What one ingest run did."""

    def __init__(self) -> None:
        """Start an empty report."""
        self.files: list[FileReport] = []
        self.messages_added = 0
        self.sessions: set[str] = set()

    @property
    def malformed(self) -> int:
        """Malformed lines skipped in this run."""
        return sum(file.malformed for file in self.files)

    def summary(self) -> str:
        """One line saying what was added (subagent files are counted apart)."""
        transcripts = [file for file in self.files if file.kind != AGENT_KIND]
        read = [file for file in transcripts if file.lines]
        agents = [file for file in self.files if file.kind == AGENT_KIND and file.lines]
        text = f"ingested {len(read)} of {len(transcripts)} transcript file(s)"
        if agents:
            text += f" and {len(agents)} subagent file(s)"
        text += f": {self.messages_added} new message(s) in {len(self.sessions)} session(s)"
        if self.malformed:
            text += f"; {self.malformed} malformed line(s) skipped"
        return text

    def file_lines(self) -> list[str]:
        """For ``ingest -v``: one line per file read, with its kind and message counts."""
        lines: list[str] = []
        for file in self.files:
            if file.problem:
                continue
            text = f"read {file.path} ({file.kind or 'unrecognised'}): "
            text += f"{file.added} new message(s) from {file.lines} record(s)"
            if file.malformed:
                text += f", {file.malformed} malformed"
            lines.append(text)
        return lines

    def warnings(self) -> list[str]:
        """One line per file not read, or with malformed lines."""
        lines: list[str] = []
        for file in self.files:
            if file.problem:
                lines.append(f"did not read {file.path}: {file.problem}")
            if file.malformed:
                lines.append(
                    f"skipped {file.malformed} malformed line(s) in {file.path} "
                    f"(first at line {file.first_malformed})"
                )
        return lines
