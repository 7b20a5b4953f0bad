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
"""

from __future__ import annotations

import os

from karni.agent.history.compose import _call_text, _root_for

__all__ = ["PROBLEM_METHOD", "store_problem"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PROBLEM_METHOD = "store_problem"
"""The optional provider method :func:`store_problem` calls."""


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
