"""``recomp``: rebuild a session's compartments from its raw messages.

The range (default: everything the compartments cover) is snapped outward to
the enclosing compartment boundaries. Each chunk is condensed by the
configured historian and staged (:mod:`karni_historian.store.staging`) in
its own transaction; the published compartments change only at the end, in
one transaction. A recomp that stops (a failure, Ctrl-C) resumes from its
staging when run again with the same range. Facts are not promoted again:
they were promoted when the messages were first condensed
(``docs/historian/recomp.md``).
"""

from __future__ import annotations

from karni_historian.condense.dates import dated
from karni_historian.condense.runner import RunOutcome, _Condensation, _end_ids
from karni_historian.condense.window import MessageWindow
from karni_historian.errors import RecompError
from karni_historian.store import RunRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from karni_historian.condense.compartment_xml import ValidationResult
    from karni_historian.condense.runner import Historian
    from karni_historian.condense.settings import Settings
    from karni_historian.store import RunRecord, Store

__all__ = ["RecompError", "recomp", "recomp_range"]


def recomp_range(store: Store, session_id: str, wanted: tuple[int, int] | None) -> tuple[int, int]:
    """The range to rebuild: ``wanted`` snapped outward to compartment boundaries."""
    covered = store.last_compartment_end(session_id)
    if not covered:
        raise RecompError(
            f"session {session_id} has no compartment to rebuild; "
            f"run `karni-historian wrapup` first"
        )
    start, end = wanted or (1, covered)
    if start > covered:
        raise RecompError(
            f"messages {start}-{end} lie after the last compartment (message {covered}); "
            f"pick a range within 1-{covered}"
        )
    return store.snapped_range(session_id, start, min(end, covered))


class _Recomposition(_Condensation):
    """A recomp: the rounds of a run, staged instead of published."""

    range_start = 1
    last_record: RunRecord | None = None

    def _next_offset(self) -> int:
        """After the last staged compartment, or the range's start."""
        staged_end = self.store.last_staged_end(self.outcome.session_id)
        return staged_end + 1 if staged_end is not None else self.range_start

    def _finish(self, target: int) -> RunOutcome:
        """The outcome as the rounds left it: publishing comes after."""
        return self.outcome

    def _publish(self, result: ValidationResult, record: RunRecord) -> None:
        by_ordinal = self.window.by_ordinal
        compartments = dated(result.compartments, by_ordinal, self.days)
        self.store.stage(self.outcome.session_id, compartments, _end_ids(compartments, by_ordinal))
        self.outcome.status = "ok"
        self.outcome.compartments += len(compartments)
        self.last_record = record


def recomp(
    store: Store,
    session_id: str,
    wanted: tuple[int, int] | None,
    settings: Settings,
    *,
    historian: Historian | None = None,
    progress_stream: TextIO | None = None,
) -> RunOutcome:
    """Rebuild the compartments of ``wanted`` (snapped; None: all), resuming a pending recomp.

    ``progress_stream`` is where to draw a progress bar, when it is a terminal.

    Raises:
        RecompError: The range lies outside the compartments, or differs
            from a pending recomp's.
    """
    start, end = recomp_range(store, session_id, wanted)
    pending = store.recomp_job(session_id)
    if pending is not None and pending != (start, end):
        raise RecompError(
            f"a recomp of messages {pending[0]}-{pending[1]} of session {session_id} is pending; "
            f"run `karni-historian recomp {pending[0]}-{pending[1]}` to finish it first"
        )
    if pending is None:
        store.start_recomp(session_id, start, end)
    outcome = RunOutcome(session_id, "recomp", covered_to=start - 1)
    staged_end = store.last_staged_end(session_id)
    window = MessageWindow(store, session_id, 1, start if staged_end is None else staged_end + 1)
    job = _Recomposition(store, outcome, window, settings, historian, progress_stream)
    job.range_start = start
    job.advance(end + 1, force_keep=True)
    if outcome.failed:
        return _stopped(outcome, start, end)
    return _published(store, job, start, end)


def _stopped(outcome: RunOutcome, start: int, end: int) -> RunOutcome:
    """A recomp that did not reach the end: the staging stays for the next try."""
    staged = (
        f"messages {start}-{outcome.covered_to} are"
        if outcome.covered_to >= start
        else "nothing is"
    )
    outcome.error = (
        f"{outcome.error}; {staged} staged, the published compartments "
        f"are unchanged: run `karni-historian recomp {start}-{end}` again to resume"
    )
    return outcome


def _published(store: Store, job: _Recomposition, start: int, end: int) -> RunOutcome:
    outcome = job.outcome
    record = RunRecord(
        outcome.session_id, "recomp", "ok", historian=job.name, chunk_start=start, chunk_end=end
    )
    last = job.last_record
    if last is not None:
        record.historian, record.duration_ms = last.historian, last.duration_ms
    outcome.compartments = store.publish_recomp(outcome.session_id, record)
    outcome.status = "ok"
    outcome.covered_to = store.last_compartment_end(outcome.session_id)
    outcome.note = f"messages {start}-{end} rebuilt"
    return outcome
