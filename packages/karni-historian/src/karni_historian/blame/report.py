"""A file's blame as ranges, and the three ways ``blame`` prints it: text, JSON, Agent Trace.

Consecutive lines with the same commit and the same attribution make one
range. Each range says the commit, and when the historian knows, the session
and the request that wrote it, how that is known, and what became of that
approach later (the file's notes of undone or corrected work). ``--json``
prints :func:`as_json` (one stable shape, ``docs/historian/blame.md``);
``--format agent-trace`` prints :func:`as_agent_trace`, an Agent Trace v0.1
record whose ranges are the attributed ones, our request and session under
its ``metadata`` key ``dev.karni``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime

from karni.agent.common.terminal import distribution_version

from karni_historian.blame.git import Commit
from karni_historian.cut import shorten
from karni_historian.written_ranges import range_hash

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "AGENT_TRACE_VERSION",
    "METADATA_KEY",
    "NO_SESSION",
    "BlameRange",
    "BlameReport",
    "Later",
    "RequestInfo",
    "SessionInfo",
    "as_agent_trace",
    "as_json",
    "as_text",
]

AGENT_TRACE_VERSION = "0.1.0"
"""The Agent Trace version our records follow."""

METADATA_KEY = "dev.karni"
"""Our reverse-domain key in an Agent Trace record's ``metadata``."""

NO_SESSION = "no known session"
"""What a range says when no evidence names the session that wrote it."""

_NAMESPACE = uuid.UUID("6f1c3d52-5b8e-4f0a-9d3e-2a7c1b9e4d60")


@dataclass(frozen=True)
class SessionInfo:
    """The session that wrote a range."""

    id: str
    source: str
    title: str | None
    model: str | None


@dataclass(frozen=True)
class RequestInfo:
    """The prompt that asked for a range: a request, or the correction that asked again."""

    ordinal: int
    text: str | None
    timestamp: str | None


@dataclass(frozen=True)
class Later:
    """What became of a range's approach: ``reverted`` (undone, discarded) or ``superseded``."""

    kind: str
    note: str


@dataclass
class BlameRange:
    """Lines ``start``-``end`` (1-based, inclusive), their commit and who wrote them."""

    start: int
    end: int
    commit: Commit
    texts: list[str]
    session: SessionInfo | None = None
    request: RequestInfo | None = None
    evidence: str | None = None
    later: list[Later] = field(default_factory=list)

    @property
    def content_hash(self) -> str:
        """The hash of the range's lines, as ``written_ranges`` hashes what an edit wrote."""
        return range_hash(self.texts)


@dataclass
class BlameReport:
    """A file's blame: its ranges, and how many stored sessions ``ingest`` has yet to read."""

    path: str
    ranges: list[BlameRange]
    pending: int = 0
    repository_path: str | None = None
    revision: str | None = None


def _iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _commit_json(commit: Commit) -> dict[str, Any]:
    if not commit.committed:
        return {"sha": None, "author": None, "date": None, "summary": None}
    return {
        "sha": commit.sha,
        "author": commit.author,
        "date": _iso(commit.time),
        "summary": commit.summary,
    }


def _range_json(item: BlameRange) -> dict[str, Any]:
    session = item.session
    request = item.request
    return {
        "start_line": item.start,
        "end_line": item.end,
        "commit": _commit_json(item.commit),
        "session": None
        if session is None
        else {"id": session.id, "source": session.source, "title": session.title},
        "request": None
        if request is None
        else {"ordinal": request.ordinal, "text": request.text, "timestamp": request.timestamp},
        "evidence": item.evidence,
        "later": [{"kind": later.kind, "note": later.note} for later in item.later],
        "content_hash": item.content_hash,
    }


def as_json(report: BlameReport) -> dict[str, Any]:
    """The report as ``blame --json`` prints it."""
    ranges = [_range_json(item) for item in report.ranges]
    attributed = [item for item in report.ranges if item.session is not None]
    return {
        "path": report.path,
        "ranges": ranges,
        "lines": sum(item.end - item.start + 1 for item in report.ranges),
        "attributed_lines": sum(item.end - item.start + 1 for item in attributed),
        "sessions": sorted({item.session.id for item in attributed if item.session}),
        "pending_sessions": report.pending,
    }


def as_text(report: BlameReport) -> str:
    """The report as ``blame`` prints it: a line per range, then its later fate, indented."""
    out = []
    for item in report.ranges:
        lines = f"{item.start}" if item.start == item.end else f"{item.start}-{item.end}"
        commit = item.commit
        head = (
            f"{commit.sha[:8]} {_iso(commit.time)[:10]} {shorten(commit.author, 16)}"
            if commit.committed
            else "(not committed yet)"
        )
        out.append(f"{lines:>9}  {head}  {_who(item)}")
        for later in item.later:
            out.append(f"{'':>11}later {later.kind}: {later.note}")
    return "\n".join(out)


def _who(item: BlameRange) -> str:
    if item.session is None:
        return NO_SESSION
    words = "request unknown"
    if item.request is not None and item.request.text:
        words = f"«{shorten(' '.join(item.request.text.split()), 90)}»"
    when = (
        f", {item.request.timestamp[:16].replace('T', ' ')}"
        if item.request and item.request.timestamp
        else ""
    )
    return f"{words} — session {item.session.id[:8]}{when} ({item.evidence})"


def as_agent_trace(report: BlameReport, now: datetime | None = None) -> dict[str, Any]:
    """The report as one Agent Trace v0.1 record: attributed ranges, one conversation a session."""
    moment = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    conversations: dict[str, dict[str, Any]] = {}
    details = []
    for item in report.ranges:
        if item.session is None:
            continue
        conversation = conversations.get(item.session.id)
        if conversation is None:
            contributor: dict[str, Any] = {"type": "ai"}
            model = item.session.model
            if model and "/" in model and len(model) <= 250:
                contributor["model_id"] = model
            conversation = conversations[item.session.id] = {
                "contributor": contributor,
                "ranges": [],
            }
        conversation["ranges"].append(
            {"start_line": item.start, "end_line": item.end, "content_hash": item.content_hash}
        )
        details.append(_range_json(item))
    path = report.repository_path or report.path
    record: dict[str, Any] = {
        "version": AGENT_TRACE_VERSION,
        "id": str(uuid.uuid5(_NAMESPACE, f"{report.revision}\x00{path}\x00{details}")),
        "timestamp": moment,
    }
    if report.revision:
        record["vcs"] = {"type": "git", "revision": report.revision}
    record["tool"] = {"name": "karni-historian", "version": distribution_version("karni-historian")}
    record["files"] = [{"path": path, "conversations": list(conversations.values())}]
    record["metadata"] = {METADATA_KEY: {"ranges": details}}
    return record
