"""``status``: how far a session is condensed, and how its history fits the budget."""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni_historian.condense.settings import Settings
    from karni_historian.store import Store

__all__ = ["StatusFacts", "status_facts", "status_text"]


@dataclass(frozen=True)
class StatusFacts:
    """What ``status`` reports about one session; ``asdict`` of it is ``status --json``.

    The field names are documented in the package README and stay stable.
    """

    session: str
    source: str
    title: str | None
    messages: int
    condensed_to: int
    uncondensed: int
    compartments: int
    failures_in_a_row: int
    last_error: str | None
    history_tokens: int
    history_budget: int


def status_facts(store: Store, session_id: str, settings: Settings) -> StatusFacts:
    """The facts ``status`` reports about one session."""
    from karni_historian.brief.budget import estimate_tokens

    session = store.session(session_id)
    assert session is not None
    compartments = [stored.compartment for stored in store.compartments(session_id)]
    covered = store.last_compartment_end(session_id)
    raw = store.message_count(session_id)
    tokens = sum(
        estimate_tokens(f"## {c.start}-{c.end} · {c.title}\n{c.content}\n") for c in compartments
    )
    failures, last_error = store.failure(session_id)
    return StatusFacts(
        session=session_id,
        source=session.source,
        title=session.title,
        messages=raw,
        condensed_to=covered,
        uncondensed=raw - covered,
        compartments=len(compartments),
        failures_in_a_row=failures,
        last_error=last_error if failures else None,
        history_tokens=tokens,
        history_budget=settings.history_budget,
    )


def status_text(store: Store, session_id: str, settings: Settings) -> str:
    """The ``status`` report of one session: coverage, failures and the history budget."""
    facts = status_facts(store, session_id, settings)
    condensed = f"messages 1-{facts.condensed_to} condensed" if facts.compartments else None
    lines = [
        f"Session {session_id} ({facts.source}): {facts.title or 'untitled'}",
        f"- Raw messages: {facts.messages} ({facts.uncondensed} after the last compartment)",
        f"- Historian: {condensed or 'not run yet'}",
    ]
    if facts.failures_in_a_row:
        lines.append(
            f"- Historian failures in a row: {facts.failures_in_a_row} (last: {facts.last_error})"
        )
    tokens, budget = facts.history_tokens, facts.history_budget
    lines += [
        "",
        "### History Compression",
        f"- Compartments: {facts.compartments}",
        f"- History block: ~{tokens} tokens",
        f"- History budget: ~{budget} tokens ({round(tokens * 100 / budget)}% used)",
        "- Older compartments demote tiers automatically at render time to fit the budget",
    ]
    return "\n".join(lines)
