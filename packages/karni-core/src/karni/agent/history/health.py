"""Asking a provider what is wrong with its store, for ``karni doctor``.

A store can be present and still unusable: a database that is not one, a
file from a newer version, a folder that cannot be read. Briefs say nothing
then (``karni context`` stays silent, as it must), so a provider may tell
``karni doctor`` what the problem is and how to fix it with one optional
method::

    def store_problem(self, project_root) -> str | None:
        "One line: what keeps the store from being read, and the fix; None when it can be."

It is called like every other provider method (isolated, with a deadline,
its output discarded), and only for a provider that detects a store. A
provider without the method, or one that fails or hangs, reports no problem.

A store that can be read may still hold things worth a line (a shared file
that was skipped, a setting the project recommends), which do not stop the
briefs; a provider says them with a second optional method::

    def doctor_notes(self, project_root) -> str | None:
        "One line per note, each naming the thing and what to do; None when there is none."
"""

from __future__ import annotations

import os

from karni.agent.history.compose import _call_text, _root_for

__all__ = ["MAX_NOTES", "NOTES_METHOD", "PROBLEM_METHOD", "doctor_notes", "store_problem"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PROBLEM_METHOD = "store_problem"
"""The optional provider method :func:`store_problem` calls."""

NOTES_METHOD = "doctor_notes"
"""The optional provider method :func:`doctor_notes` calls."""

MAX_NOTES = 50
"""The most notes ``karni doctor`` shows of one provider."""


def store_problem(provider: Any, project_root: str | os.PathLike[str]) -> str | None:
    """``provider.store_problem(project_root)`` as one clean line, or None.

    None when the provider has no such method, finds nothing wrong, or
    fails or hangs while looking.
    """
    from karni.agent.common.sanitize import clean_field
    from karni.agent.history.isolation import call_isolated

    root = _root_for(provider, project_root)
    outcome = call_isolated(_call_text, provider, PROBLEM_METHOD, root, provider=provider)
    if not outcome.ok or outcome.value is None:
        return None
    return clean_field(outcome.value) or None


def doctor_notes(provider: Any, project_root: str | os.PathLike[str]) -> list[str]:
    """``provider.doctor_notes(project_root)`` as clean lines (at most :data:`MAX_NOTES`).

    Empty when the provider has no such method, has nothing to say, or fails
    or hangs while looking.
    """
    # bench row "karni doctor" runs without it (only a provider that detects a store is asked)
    from karni.agent.common.sanitize import clean_field
    from karni.agent.history.isolation import call_isolated

    root = _root_for(provider, project_root)
    outcome = call_isolated(_call_text, provider, NOTES_METHOD, root, provider=provider)
    if not outcome.ok or not outcome.value:
        return []
    lines = [clean_field(line) for line in str(outcome.value).splitlines()]
    return [line for line in lines if line][:MAX_NOTES]
