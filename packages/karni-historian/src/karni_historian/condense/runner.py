"""Historian runs: settled raw messages into published compartments.

``wrapup KEEP`` condenses everything but the newest KEEP raw messages of each
session (§3.11); ``run`` condenses only settled messages, those before the
protected tail (§3.2, :func:`karni_historian.condense.chunk.protected_tail_start`).
Both loop the same job until the target is reached: build the chunk after the
last compartment (§3.3), have the historian write its XML (the built-in
``local/extractive``), parse and validate it exactly as a model's output
(§3.6, §3.7), then publish the compartments and facts in one transaction with
a run record (§3.9). A failure is recorded with the session's consecutive
failure count (§3.10) and stops that session; nothing half-written remains.

Settings come from the ``[historian]`` table of ``.karni/config.toml`` (the
project) over ``$XDG_CONFIG_HOME/karni/config.toml`` (the user); see
:func:`load_settings`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from karni_historian.condense.extractive import HISTORIAN_NAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from karni_historian.model import Compartment, Fact, Message
    from karni_historian.store import Store

    Historian = Callable[[Any, Sequence[Message]], str]

__all__ = [
    "HISTORIAN_NAME",
    "PERSISTENT_FAILURE_THRESHOLD",
    "RunOutcome",
    "Settings",
    "load_settings",
    "local_date",
    "project_view",
    "run",
    "wrapup",
]

PERSISTENT_FAILURE_THRESHOLD = 3
"""Consecutive failures after which a session's failure is reported as persistent."""

_MAX_ROUNDS = 10_000


@dataclass(slots=True, kw_only=True)
class Settings:
    """The historian settings a project resolves to; the defaults are the reference's (§6).

    Attributes:
        context_limit: The model's context window, in tokens.
        execute_threshold_percentage: The share of the window in use before
            compaction, 20–90.
        history_budget_percentage: The share of the usable window for the
            history block, 0.05–0.5.
        historian_context: The historian's window; a chunk is a quarter of it.
        temporal_awareness: Date attributes on rendered compartments.
        expand_tools: The resolved ``expand_tools`` templates; None for the
            built-ins.
    """

    context_limit: int = 200_000
    execute_threshold_percentage: float = 65.0
    history_budget_percentage: float = 0.15
    historian_context: int = 128_000
    temporal_awareness: bool = True
    expand_tools: Mapping[str, str] | None = None

    @property
    def history_budget(self) -> int:
        """The ``<session-history>`` budget in tokens (§1.4)."""
        from karni_historian.brief.budget import history_budget_tokens

        return history_budget_tokens(
            self.context_limit, self.execute_threshold_percentage, self.history_budget_percentage
        )

    @property
    def chunk_tokens(self) -> int:
        """The chunk budget of one historian run (§3.3)."""
        from karni_historian.brief.budget import historian_chunk_tokens

        return historian_chunk_tokens(self.historian_context)


_NUMBER_KEYS = {
    "context_limit": (1_000, 100_000_000),
    "execute_threshold_percentage": (20, 90),
    "historian_context": (1_000, 100_000_000),
}


def _read_table(path: str) -> dict[str, Any]:
    import tomllib

    from karni_historian.errors import ConfigurationError

    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigurationError(
            f"cannot read {path}: {error}; fix the file or remove its [historian] table"
        ) from None
    table = data.get("historian", {})
    if not isinstance(table, dict):
        raise ConfigurationError(f"`historian` in {path} must be a table; write [historian]")
    return table


def load_settings(root: str | os.PathLike[str]) -> Settings:
    """Read the ``[historian]`` settings of the user and project configuration.

    Keys: ``context_limit`` (tokens, default 200000), ``execute_threshold_percentage``
    (20–90, default 65), ``history_budget_percentage`` (0.05–0.5, default 0.15),
    ``historian_context`` (tokens, default 128000), ``temporal_awareness``
    (default true) and ``expand_tools`` (tool name → template or false, merged
    per key: built-ins, then user, then project).

    Raises:
        karni_historian.brief.budget.ConfigurationError: A value is malformed or out
            of range; the message names the key and the file.
    """
    from karni_historian.brief.budget import history_budget_tokens
    from karni_historian.condense.templates import resolve_templates
    from karni_historian.errors import ConfigurationError

    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    user_path = os.path.join(xdg, "karni", "config.toml")
    project_path = os.path.join(os.fspath(root), ".karni", "config.toml")
    user = _read_table(user_path)
    project = _read_table(project_path)
    values: dict[str, Any] = {}
    for path, table in ((user_path, user), (project_path, project)):
        for key, value in table.items():
            if key == "expand_tools":
                continue
            where = f"`historian.{key}` in {path}"
            if key in _NUMBER_KEYS:
                low, high = _NUMBER_KEYS[key]
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise ConfigurationError(f"{where} must be a number between {low} and {high}")
                if not low <= value <= high:
                    raise ConfigurationError(
                        f"{where} must be between {low} and {high} (got {value!r})"
                    )
            elif key == "history_budget_percentage":
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise ConfigurationError(f"{where} must be a number between 0.05 and 0.5")
                try:
                    history_budget_tokens(200_000, 65, value)
                except ConfigurationError as error:
                    raise ConfigurationError(f"{error} ({path})") from None
            elif key == "temporal_awareness":
                if not isinstance(value, bool):
                    raise ConfigurationError(f"{where} must be true or false")
            else:
                raise ConfigurationError(
                    f"unknown setting {where}; remove it (known: context_limit, "
                    f"execute_threshold_percentage, history_budget_percentage, "
                    f"historian_context, temporal_awareness, expand_tools)"
                )
            values[key] = value
    templates = resolve_templates(
        None,
        user.get("expand_tools"),
        project.get("expand_tools"),
        user_source=user_path,
        project_source=project_path,
    )
    return Settings(expand_tools=templates, **values)


def project_view(messages: Sequence[Message], root: str) -> list[Message]:
    """The messages with absolute tool paths inside ``root`` shown project-relative.

    Agents such as Claude Code pass absolute paths to their tools; the chunk
    and previews read better, and stay the same on every machine, with the
    path the project knows the file by. The stored messages are unchanged.
    """
    from dataclasses import replace

    from karni_historian.ingest.sink import project_relative, project_roots
    from karni_historian.model import PATH_KEYS, ToolPart

    roots = project_roots(root)
    viewed: list[Message] = []
    for message in messages:
        parts = []
        changed = False
        for part in message.parts:
            if isinstance(part, ToolPart) and isinstance(part.input, dict):
                updates = {}
                for key in PATH_KEYS:
                    value = part.input.get(key)
                    if isinstance(value, str) and os.path.isabs(value):
                        relative = project_relative(roots, value, None)
                        if relative:
                            updates[key] = relative
                if updates:
                    part = replace(part, input={**part.input, **updates})
                    changed = True
            parts.append(part)
        viewed.append(replace(message, parts=tuple(parts)) if changed else message)
    return viewed


def local_date(timestamp: str | None) -> str | None:
    """The local ``YYYY-MM-DD`` of an ISO 8601 timestamp, or None."""
    if not timestamp:
        return None
    from datetime import datetime

    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.date().isoformat()
    return moment.astimezone().date().isoformat()


@dataclass(slots=True)
class RunOutcome:
    """What a ``run`` or ``wrapup`` did for one session.

    Attributes:
        session_id: The session.
        kind: ``run`` or ``wrapup``.
        status: ``nothing``, ``ok``, ``partial`` or ``failed``.
        compartments: Compartments published.
        facts: Facts promoted.
        covered_to: The last ordinal inside a compartment afterwards.
        target: The exclusive end the run aimed for.
        error: The historian failure, when ``failed``.
        failures: The session's consecutive failures, when ``failed``.
        note: Why nothing (or not everything) was condensed.
    """

    session_id: str
    kind: str
    status: str = "nothing"
    compartments: int = 0
    facts: int = 0
    covered_to: int = 0
    target: int = 0
    error: str | None = None
    failures: int = 0
    note: str = ""

    @property
    def failed(self) -> bool:
        """Whether the run stopped on a historian failure."""
        return self.status == "failed"

    def message(self) -> str:
        """One line describing the outcome."""
        name = f"session {self.session_id}"
        if self.status == "failed":
            if self.failures >= PERSISTENT_FAILURE_THRESHOLD:
                return (
                    f"{name}: the historian failed {self.failures} times in a row; "
                    f"last error: {self.error}"
                )
            return f"{name}: the historian failed ({self.error}); nothing was lost, run it again"
        if self.status == "nothing":
            return f"{name}: {self.note}"
        text = (
            f"{name}: {self.compartments} new compartment(s), {self.facts} fact(s); "
            f"messages 1-{self.covered_to} condensed"
        )
        if self.status == "partial":
            text += f", {self.note}"
        return text


def _publish_dates(
    compartments: Sequence[Compartment], by_ordinal: Mapping[int, Message]
) -> list[Compartment]:
    from dataclasses import replace

    dated: list[Compartment] = []
    for compartment in compartments:
        start = by_ordinal.get(compartment.start)
        end = by_ordinal.get(compartment.end)
        dated.append(
            replace(
                compartment,
                start_date=local_date(start.timestamp) if start else None,
                end_date=local_date(end.timestamp) if end else None,
            )
        )
    return dated


def _fact_spans(
    facts: Sequence[Fact], compartments: Sequence[Compartment], by_ordinal: Mapping[int, Message]
) -> list[tuple[int, int] | None]:
    """The compartment each fact came from: the first whose messages quote it, else None."""
    from karni_historian.model import TextPart

    spans: list[tuple[int, int] | None] = []
    for fact in facts:
        needle = " ".join(fact.content.split()).rstrip(".").casefold()
        found = None
        for compartment in compartments:
            for ordinal in range(compartment.start, compartment.end + 1):
                message = by_ordinal.get(ordinal)
                texts = (
                    (p.text for p in message.parts if isinstance(p, TextPart)) if message else ()
                )
                if any(needle and needle in " ".join(t.split()).casefold() for t in texts):
                    found = (compartment.start, compartment.end)
                    break
            if found:
                break
        spans.append(found)
    return spans


def _historian_xml(chunk: Any, messages: Sequence[Message]) -> str:
    """The built-in historian: the XML a model would write for the chunk."""
    from karni_historian.condense.extractive import summarize

    return summarize(chunk, messages)


def _historian_name(historian: Historian | None) -> str:
    """The name a run records: the built-in's, the callable's ``name``, or its qualified name."""
    if historian is None:
        return HISTORIAN_NAME
    name = getattr(historian, "name", None)
    if isinstance(name, str) and name:
        return name
    return getattr(historian, "__qualname__", None) or type(historian).__qualname__


def _advance(
    store: Store,
    session_id: str,
    messages: Sequence[Message],
    target: int,
    outcome: RunOutcome,
    settings: Settings,
    *,
    force_keep: bool,
    historian: Historian | None = None,
) -> RunOutcome:
    """Run the historian until compartments cover every ordinal before ``target``."""
    name = _historian_name(historian)
    historian = historian or _historian_xml
    from karni_historian.condense.chunk import build_chunk, check_coverage, completed_arcs
    from karni_historian.condense.compartment_xml import parse, validate
    from karni_historian.errors import ChunkCoverageError, HistorianOutputError
    from karni_historian.store import RunRecord

    messages = project_view(messages, store.root)
    by_ordinal = {message.ordinal: message for message in messages}
    arcs = completed_arcs(messages)
    outcome.target = target
    for _ in range(_MAX_ROUNDS):
        offset = store.last_compartment_end(session_id) + 1
        outcome.covered_to = offset - 1
        if offset >= target:
            break
        chunk = build_chunk(
            messages,
            offset=offset,
            eligible_end=target,
            budget_tokens=settings.chunk_tokens,
            expand_tools=settings.expand_tools,
        )
        record = RunRecord(
            session_id,
            outcome.kind,
            "failed",
            historian=name,
            chunk_start=chunk.start,
            chunk_end=chunk.end,
        )
        if chunk.is_empty:
            break  # only noise is left before the target: nothing to condense
        try:
            check_coverage(chunk)
            xml = historian(chunk, messages)
            result = validate(parse(xml), chunk, arcs=arcs, force_keep=force_keep)
            compartments = list(result.compartments)
            if compartments and compartments[-1].end + 1 <= offset:
                raise HistorianOutputError(f"no forward progress beyond raw message {offset - 1}")
        except (HistorianOutputError, ChunkCoverageError) as error:
            record.failure_reason = str(error)
            outcome.status = "failed"
            outcome.error = str(error)
            outcome.failures = store.record_failure(record)
            return outcome
        compartments = _publish_dates(compartments, by_ordinal)
        facts: list[Fact] = list(result.facts)
        record.status = "ok"
        record.unprocessed_from = result.unprocessed_from
        record.compartments_produced = len(compartments)
        record.facts_emitted = len(facts)
        record.importances = tuple(c.importance for c in compartments)
        record.discarded_last = bool(getattr(result, "discarded_last", False))
        spans = _fact_spans(facts, compartments, by_ordinal)
        store.publish(session_id, compartments, facts, record, fact_spans=spans)
        outcome.status = "ok"
        outcome.compartments += len(compartments)
        outcome.facts += len(facts)
    outcome.covered_to = store.last_compartment_end(session_id)
    if outcome.status == "ok" and outcome.covered_to + 1 < target:
        outcome.status = "partial"
        outcome.note = f"messages {outcome.covered_to + 1}-{target - 1} left for the next run"
    elif outcome.status == "nothing":
        outcome.note = f"no readable messages before message {target} to condense"
    return outcome


def wrapup(
    store: Store,
    session_id: str,
    keep: int = 20,
    settings: Settings | None = None,
    *,
    historian: Historian | None = None,
) -> RunOutcome:
    """Condense all but the newest ``keep`` raw messages of a session (§3.11).

    Args:
        store: The project's store.
        session_id: The session to condense.
        keep: Raw messages to leave uncondensed (positive).
        settings: The project's settings; the defaults when None.
        historian: Turns a chunk into historian XML; the built-in
            ``local/extractive`` when None. Run records name it by its
            ``name`` attribute (for example ``anthropic/claude-sonnet``),
            else by its qualified name.

    Returns:
        The :class:`RunOutcome`; ``status`` is ``nothing`` when at most
        ``keep`` messages sit above the last compartment.
    """
    from karni_historian.brief.budget import trigger_budget
    from karni_historian.condense.chunk import wrapup_boundary

    settings = settings or Settings()
    outcome = RunOutcome(session_id, "wrapup")
    last_end = store.last_compartment_end(session_id)
    raw_count = store.message_count(session_id)
    above = raw_count - last_end
    if above <= keep:
        outcome.covered_to = last_end
        outcome.note = f"nothing to wrap up — only {above} messages above the last compartment"
        return outcome
    messages = store.messages(session_id)
    snap = min(
        max(trigger_budget(settings.context_limit, settings.execute_threshold_percentage), 2000),
        48_000,
    )
    target = wrapup_boundary(messages, keep, snap_tokens=snap)
    if target <= last_end + 1:
        outcome.covered_to = last_end
        outcome.note = "nothing to wrap up — the kept messages reach the last compartment"
        return outcome
    return _advance(
        store, session_id, messages, target, outcome, settings, force_keep=True, historian=historian
    )


def run(
    store: Store,
    session_id: str,
    settings: Settings | None = None,
    *,
    historian: Historian | None = None,
) -> RunOutcome:
    """Condense a session's settled messages: those before the protected tail (§3.2).

    The tail starts at the fifth-from-last meaningful user prompt
    (:func:`karni_historian.condense.chunk.protected_tail_start`), fenced so that it
    never splits a completed tool call and its result.

    Args:
        store: The project's store.
        session_id: The session to condense.
        settings: The project's settings; the defaults when None.
        historian: As for :func:`wrapup`.

    Returns:
        The :class:`RunOutcome`; ``status`` is ``nothing`` when no settled
        message lies after the last compartment.
    """
    from karni_historian.condense.chunk import completed_arcs, fence_boundary, protected_tail_start

    settings = settings or Settings()
    outcome = RunOutcome(session_id, "run")
    last_end = store.last_compartment_end(session_id)
    messages = store.messages(session_id, last_end + 1)
    target = fence_boundary(protected_tail_start(messages), completed_arcs(messages))
    if target <= last_end + 1:
        outcome.covered_to = last_end
        outcome.note = (
            "nothing settled to condense — the newest five prompts and their answers stay raw"
        )
        return outcome
    messages = store.messages(session_id)
    return _advance(
        store,
        session_id,
        messages,
        target,
        outcome,
        settings,
        force_keep=False,
        historian=historian,
    )
