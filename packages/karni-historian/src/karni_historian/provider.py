"""The ``historian`` history provider, at the address the README documents.

The code lives in :mod:`karni_historian.brief.provider`, which is also what the
``karni.history_providers`` entry point names (one module fewer to load before
every edit); this module keeps the documented import working.
"""

from __future__ import annotations

from karni_historian.brief.provider import HistorianProvider

__all__ = ["HistorianProvider"]
