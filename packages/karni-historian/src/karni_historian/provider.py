"""The ``historian`` history provider's entry point (``karni.history_providers``).

The code lives in :mod:`karni_historian.brief.provider`; this module keeps the
address the README documents, so code written against it keeps working.
"""

from __future__ import annotations

from karni_historian.brief.provider import HistorianProvider

__all__ = ["HistorianProvider"]
