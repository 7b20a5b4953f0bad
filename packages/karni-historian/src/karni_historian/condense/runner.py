"""Historian runs: settled raw messages into published compartments.

``wrapup KEEP`` condenses everything but the newest KEEP raw messages of each
session; ``run`` condenses only settled messages, those before the protected
tail (``docs/historian/chunk.md``), and the command does so only when a trigger
fires (:mod:`karni_historian.condense.triggers`). Both loop the same job until
the target is reached: build the chunk after the last compartment, have the
historian write its XML (the built-in ``local/extractive``, or the
``historian=`` callable), parse and validate it exactly as a model's output
(the built-in's without writing and re-reading it),
then publish the compartments and facts in one transaction with a run record.
A failure is recorded with the session's consecutive failure count and stops
that session; nothing half-written remains.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from karni_historian.collector import quiet_collector
from karni_historian.condense.boundaries import (
    PROTECTED_TAIL_USER_TURNS,
    ArcIndex,
    arcs_of_calls,
    fence_arcs,
    fence_boundary,
    keep_boundary,
    tail_start,
)
from karni_historian.condense.chunk import build_chunk, check_coverage
from karni_historian.condense.compartment_xml import parse, validate
from karni_historian.condense.dates import LocalDays, dated, local_date
from karni_historian.condense.extractive import HISTORIAN_NAME, summarize, summarize_parsed
from karni_historian.condense.file_notes.prose import in_project_terms
from karni_historian.condense.project_view import project_view
from karni_historian.condense.settings import Settings, load_settings
from karni_historian.condense.window import MessageWindow, newest_first, stream_messages
from karni_historian.errors import ChunkCoverageError, HistorianOutputError, ModelError
from karni_historian.progress import progress_for
from karni_historian.store import RunRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, TextIO

    from karni_historian.condense.chunk import Chunk
    from karni_historian.condense.compartment_xml import ParsedOutput, ValidationResult
    from karni_historian.condense.triggers import TriggerDecision
    from karni_historian.condense.window import MessageWindow
    from karni_historian.model import Compartment, Fact, Message
    from karni_historian.store import RunRecord, Store

    Historian = Callable[[Any, Sequence[Message]], str]

__all__ = [
    "HISTORIAN_NAME",
    "PERSISTENT_FAILURE_THRESHOLD",
    "RunOutcome",
    "RunPlan",
    "Settings",
    "historian_name",
    "load_settings",
    "local_date",
    "plan_run",
    "project_view",
    "run",
    "wrapup",
]

PERSISTENT_FAILURE_THRESHOLD = 3
"""Consecutive failures after which a session's failure is reported as persistent."""

_MAX_ROUNDS = 10_000


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
        messages: The session's messages (``wrapup`` says how many stay raw).
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
    messages: int = 0

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
        if self.kind == "wrapup" and self.messages > self.covered_to:
            text += f"; the newest {self.messages - self.covered_to} stay raw"
        if self.status == "partial":
            text += f", {self.note}"
        return text


def _in_project_terms(result: ValidationResult, root: str) -> ValidationResult:
    """The result with absolute paths made project-relative, others cut to their last part.

    Whoever wrote it (the built-in historian or a model), history must not
    name a user's machine: a path inside the project is shown as the project
    knows it, any other path only by its file name.
    """

    def terms(text: str) -> str:
        return in_project_terms(text, root) if text else text

    result.compartments = [
        replace(
            c,
            title=terms(c.title),
            p1=terms(c.p1),
            p2=terms(c.p2),
            p3=terms(c.p3),
            p4=terms(c.p4),
            content=terms(c.content),
        )
        for c in result.compartments
    ]
    result.facts = [replace(f, content=terms(f.content)) for f in result.facts]
    return result


def _historian_xml(chunk: Any, messages: Sequence[Message]) -> str:
    """The built-in historian: the XML a model would write for the chunk."""
    return summarize(chunk, messages)


def _messages(done: int, total: int) -> str:
    return f"{done}/{total} messages"


def historian_name(historian: Historian | None) -> str:
    """The name a run records: the built-in's, the callable's ``name``, or its qualified name."""
    if historian is None:
        return HISTORIAN_NAME
    name = getattr(historian, "name", None)
    if isinstance(name, str) and name:
        return name
    return getattr(historian, "__qualname__", None) or type(historian).__qualname__


class _Condensation:
    """One ``run`` or ``wrapup`` of a session: rounds of chunk, historian, validate, publish."""

    def __init__(
        self,
        store: Store,
        outcome: RunOutcome,
        window: MessageWindow,
        settings: Settings,
        historian: Historian | None,
        progress_stream: TextIO | None = None,
    ) -> None:
        self.store = store
        self.outcome = outcome
        self.settings = settings
        self.name = historian_name(historian)
        self.historian = historian or _historian_xml
        self.window = window

        self.arcs = ArcIndex(fence_arcs(window.arcs()))
        self.progress_stream = progress_stream
        self.days = LocalDays()
        """The compartments' dates, remembered across rounds."""
        self._covered_to: int | None = None  # the last compartment's end, once read

    def advance(self, target: int, *, force_keep: bool) -> RunOutcome:
        """Run the historian until compartments cover every ordinal before ``target``."""
        outcome = self.outcome
        outcome.target = target
        start = outcome.covered_to
        progress = progress_for(target - 1 - start, self.progress_stream, outcome.kind, _messages)

        try:
            with quiet_collector():  # about 10 % of a run's time, measured
                for _ in range(_MAX_ROUNDS):
                    offset = self._next_offset()
                    outcome.covered_to = offset - 1
                    if progress is not None:
                        progress.update(outcome.covered_to - start, outcome.session_id)
                    if offset >= target or not self._round(offset, target, force_keep=force_keep):
                        break
        finally:
            if progress is not None:
                progress.close()
        return self._finish(target)

    def _next_offset(self) -> int:
        """The first ordinal the next round condenses: after the last compartment.

        Read from the store once; each publish then moves it on, without
        another query over the session's compartments.
        """
        if self._covered_to is None:
            self._covered_to = self.store.last_compartment_end(self.outcome.session_id)
        return self._covered_to + 1

    def _round(self, offset: int, target: int, *, force_keep: bool) -> bool:
        """Condense one chunk from ``offset``; False when the run should stop."""
        self.window.forget_before(offset)
        chunk = build_chunk(
            self.window.iter_from(offset, target),
            offset=offset,
            eligible_end=target,
            budget_tokens=self.settings.chunk_tokens,
            expand_tools=self.settings.expand_tools,
        )
        if chunk.is_empty:
            return False  # only noise is left before the target: nothing to condense

        record = self._record(chunk)
        started = time.monotonic()
        try:
            result = self._validated(chunk, offset, force_keep=force_keep)
        except (HistorianOutputError, ChunkCoverageError, ModelError) as error:
            record.duration_ms = round((time.monotonic() - started) * 1000)
            self._fail(record, str(error))
            return False
        record.duration_ms = round((time.monotonic() - started) * 1000)
        self._publish(result, record)
        return True

    def _record(self, chunk: Chunk) -> RunRecord:
        return RunRecord(
            self.outcome.session_id,
            self.outcome.kind,
            "failed",
            historian=self.name,
            chunk_start=chunk.start,
            chunk_end=chunk.end,
        )

    def _validated(self, chunk: Chunk, offset: int, *, force_keep: bool) -> ValidationResult:
        """The historian's output for ``chunk``, parsed and validated."""
        check_coverage(chunk)
        summarize_parsed = self._built_in_parsed()
        if summarize_parsed is not None:
            parsed = summarize_parsed(chunk, self.window.for_historian(chunk.end, env_reads=False))
        else:
            parsed = parse(self.historian(chunk, self.window.for_historian(chunk.end)))
        result = validate(parsed, chunk, arcs=self.arcs, force_keep=force_keep)
        if result.compartments and result.compartments[-1].end + 1 <= offset:
            raise HistorianOutputError(f"no forward progress beyond raw message {offset - 1}")
        return _in_project_terms(result, self.store.root)

    def _built_in_parsed(self) -> Callable[[Chunk, Sequence[Message]], ParsedOutput] | None:
        """The built-in historian's parsed answer, when it is the run's (traced or not)."""
        if self.historian is _historian_xml:
            return summarize_parsed
        parsed: Callable[[Chunk, Sequence[Message]], ParsedOutput] | None
        parsed = getattr(self.historian, "summarize_parsed", None)
        return parsed

    def _fail(self, record: RunRecord, error: str) -> None:
        record.failure_reason = error
        self.outcome.status = "failed"
        self.outcome.error = error
        self.outcome.failures = self.store.record_failure(record)

    def _publish(self, result: ValidationResult, record: RunRecord) -> None:
        # bench row "karni-historian recomp" runs without it
        from karni_historian.condense.fact_sources import trace_facts

        compartments = dated(result.compartments, self.window.by_ordinal, self.days)
        traced = trace_facts(result.facts, compartments, self.window.by_ordinal)
        facts: list[Fact] = traced.facts
        record.status = "ok"
        record.historian = getattr(self.historian, "last_model", None) or self.name  # a fallback
        record.unprocessed_from = result.unprocessed_from
        record.compartments_produced = len(compartments)
        record.facts_emitted = len(facts)
        record.importances = tuple(c.importance for c in compartments)
        record.discarded_last = result.discarded_last
        if not self.store.publish(
            self.outcome.session_id,
            compartments,
            facts,
            record,
            fact_spans=traced.spans,
            fact_sources=traced.sources,
            message_ids=_end_ids(compartments, self.window.by_ordinal),
        ):
            # Another run of the session published these meanwhile: go on after its compartments.
            self._covered_to = None
            if self.outcome.status == "nothing":
                self.outcome.status = "ok"  # the messages are condensed, by that run
            return
        if compartments and self._covered_to is not None:
            # validated compartments are in order and contiguous: the last ends furthest
            self._covered_to = max(self._covered_to, compartments[-1].end)
        self.outcome.status = "ok"
        self.outcome.compartments += len(compartments)
        self.outcome.facts += len(facts)

    def _finish(self, target: int) -> RunOutcome:
        outcome = self.outcome
        outcome.covered_to = self.store.last_compartment_end(outcome.session_id)
        if outcome.status == "ok" and outcome.covered_to + 1 < target:
            outcome.status = "partial"
            outcome.note = f"messages {outcome.covered_to + 1}-{target - 1} left for the next run"
        elif outcome.status == "nothing":
            outcome.note = f"no readable messages before message {target} to condense"
        return outcome


def _end_ids(
    compartments: Sequence[Compartment], by_ordinal: Mapping[int, Message]
) -> list[tuple[str, str]] | None:
    """The provider ids of each compartment's first and last messages; None if one is not loaded."""
    ids = []
    for compartment in compartments:
        first, last = by_ordinal.get(compartment.start), by_ordinal.get(compartment.end)
        if first is None or last is None:
            return None
        ids.append((first.message_id, last.message_id))
    return ids


def wrapup(
    store: Store,
    session_id: str,
    keep: int = 20,
    settings: Settings | None = None,
    *,
    historian: Historian | None = None,
    progress_stream: TextIO | None = None,
) -> RunOutcome:
    """Condense all but the newest ``keep`` raw messages of a session.

    Args:
        store: The project's store.
        session_id: The session to condense.
        keep: Raw messages to leave uncondensed (positive).
        settings: The project's settings; the defaults when None.
        historian: Turns a chunk into historian XML; the built-in
            ``local/extractive`` when None. Run records name it by its
            ``name`` attribute (for example ``anthropic/claude-sonnet``),
            else by its qualified name.
        progress_stream: Where to draw a progress bar, when it is a terminal.

    Returns:
        The :class:`RunOutcome`; ``status`` is ``nothing`` when at most
        ``keep`` messages sit above the last compartment.
    """
    settings = settings or Settings()
    outcome = RunOutcome(session_id, "wrapup")
    last_end = store.last_compartment_end(session_id)
    last = store.message_count(session_id)
    outcome.messages = last
    above = last - last_end
    outcome.covered_to = last_end
    if above <= keep:
        outcome.note = f"nothing to wrap up — only {above} messages above the last compartment"
        return outcome
    window = MessageWindow(store, session_id, 1, last_end + 1)
    target = keep_boundary(last, keep, window.arcs(), floor=last_end + 1)
    if target <= last_end + 1:
        outcome.note = "nothing to wrap up — the kept messages reach the last compartment"
        return outcome
    job = _Condensation(store, outcome, window, settings, historian, progress_stream)
    return job.advance(target, force_keep=True)


@dataclass(slots=True)
class RunPlan:
    """What ``run`` would condense in a session, and whether a trigger fires.

    Attributes:
        session_id: The session.
        covered_to: The last ordinal inside a compartment.
        target: The exclusive end of the settled messages.
        settings: The settings the plan was made with.
        store: The store the plan reads the session's messages from.
        arcs: The session's completed tool arcs after ``covered_to``, as the
            plan found them (the run checks its chunks against them).
    """

    session_id: str
    covered_to: int
    target: int
    settings: Settings
    store: Store
    arcs: list[tuple[int, int]] | None = None

    @property
    def settled(self) -> bool:
        """Whether any settled message lies after the last compartment."""
        return self.target > self.covered_to + 1

    def decision(self, *, exact: bool = True) -> TriggerDecision:
        """Evaluate the triggers for the settled messages (``docs/historian/triggers.md``).

        The raw tokens are measured from the stored rows, read once
        (:mod:`karni_historian.condense.trigger_facts`); only the messages
        the chunk scan reads are built, in batches. Unless ``exact``, the
        count stops once the usage reaches the force band, which fires
        then whatever the rest holds, and the decision's detail says the use
        reached the band: what ``run`` needs, where ``status`` shows the
        whole count.
        """
        # bench row "karni-historian wrapup" runs without it
        from karni_historian.condense.trigger_facts import raw_token_counts
        from karni_historian.condense.triggers import (
            TriggerThresholds,
            evaluate_trigger,
            session_state,
        )

        settings, offset = self.settings, self.covered_to + 1
        limit, threshold = settings.context_limit, settings.execute_threshold_percentage
        state = session_state(
            raw_token_counts(self.store, self.session_id, offset),
            stream_messages(self.store, self.session_id, offset),
            offset,
            self.target,
            settings,
            stop_at_pct=None
            if exact
            else TriggerThresholds.derive(limit, threshold).force_band_pct,
        )
        return evaluate_trigger(state, limit, threshold)


def plan_run(store: Store, session_id: str, settings: Settings | None = None) -> RunPlan:
    """Find the settled messages of a session: those before the protected tail.

    The tail starts at the fifth-from-last meaningful user prompt
    (:func:`karni_historian.condense.boundaries.protected_tail_start`), fenced so that it
    never splits a completed tool call and its result. The messages are read
    newest first, in batches, only until that prompt is found; the arcs
    come from the store's list of tool parts.
    """
    last_end = store.last_compartment_end(session_id)
    offset = last_end + 1
    newest = newest_first(store, session_id, offset)
    arcs = arcs_of_calls(store.tool_part_calls(session_id, offset))
    target = fence_boundary(tail_start(newest, PROTECTED_TAIL_USER_TURNS), fence_arcs(arcs))
    return RunPlan(session_id, last_end, target, settings or Settings(), store, arcs)


def run(
    store: Store,
    session_id: str,
    settings: Settings | None = None,
    *,
    historian: Historian | None = None,
    plan: RunPlan | None = None,
    progress_stream: TextIO | None = None,
) -> RunOutcome:
    """Condense a session's settled messages: those before the protected tail.

    This condenses whether or not a trigger fires; ``karni-historian run``
    asks :meth:`RunPlan.decision` first.

    Args:
        store: The project's store.
        session_id: The session to condense.
        settings: The project's settings; the defaults when None.
        historian: As for :func:`wrapup`.
        plan: The session's :func:`plan_run`, when already made.
        progress_stream: As for :func:`wrapup`.

    Returns:
        The :class:`RunOutcome`; ``status`` is ``nothing`` when no settled
        message lies after the last compartment.
    """
    plan = plan or plan_run(store, session_id, settings)
    outcome = RunOutcome(session_id, "run", covered_to=plan.covered_to)
    if not plan.settled:
        outcome.note = (
            "nothing settled to condense — the newest five prompts and their answers stay raw"
        )
        return outcome

    offset = plan.covered_to + 1
    window = MessageWindow(store, session_id, offset, offset, arcs=plan.arcs)
    job = _Condensation(store, outcome, window, plan.settings, historian, progress_stream)
    return job.advance(plan.target, force_keep=False)
