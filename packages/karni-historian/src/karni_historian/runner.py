"""Condensing runs: ``run`` and ``wrapup`` (documented address).

The code lives in :mod:`karni_historian.condense.runner`; this module keeps the
address the README documents, so code written against it keeps working.
"""

from __future__ import annotations

from karni_historian.condense.runner import run, wrapup

__all__ = ["run", "wrapup"]
