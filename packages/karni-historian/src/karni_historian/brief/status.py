"""``status``: how far a session is condensed, and how its history fits the budget."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni_historian.condense.settings import Settings
    from karni_historian.store import Store

__all__ = ["status_text"]


def status_text(store: Store, session_id: str, settings: Settings) -> str:
    """The ``status`` report of one session: coverage, failures and the history budget."""
    from karni_historian.brief.budget import estimate_tokens

    session = store.session(session_id)
    assert session is not None
    compartments = [stored.compartment for stored in store.compartments(session_id)]
    covered = store.last_compartment_end(session_id)
    raw = store.message_count(session_id)
    tokens = sum(
        estimate_tokens(f"## {c.start}-{c.end} · {c.title}\n{c.content}\n") for c in compartments
    )
    budget = settings.history_budget
    failures, last_error = store.failure(session_id)
    lines = [
        f"Session {session_id} ({session.source}): {session.title or 'untitled'}",
        f"- Raw messages: {raw} ({raw - covered} after the last compartment)",
        f"- Historian: {'not run yet' if not compartments else f'messages 1-{covered} condensed'}",
    ]
    if failures:
        lines.append(f"- Historian failures in a row: {failures} (last: {last_error})")
    lines += [
        "",
        "### History Compression",
        f"- Compartments: {len(compartments)}",
        f"- History block: ~{tokens} tokens",
        f"- History budget: ~{budget} tokens ({round(tokens * 100 / budget)}% used)",
        "- Older compartments demote tiers automatically at render time to fit the budget",
    ]
    return "\n".join(lines)
