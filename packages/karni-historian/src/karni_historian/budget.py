"""Token budgets of the historian (documented address).

The code lives in :mod:`karni_historian.brief.budget`; this module keeps the
address the README documents, so code written against it keeps working.
"""

from __future__ import annotations

from karni_historian.brief.budget import ConfigurationError

__all__ = ["ConfigurationError"]
