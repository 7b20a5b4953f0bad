"""Deterministic decay tiers and pressure (documented address).

The code lives in :mod:`karni_historian.brief.decay`; this module keeps the
address the README documents, so code written against it keeps working.
"""

from __future__ import annotations

from karni_historian.brief.decay import pressure, tier

__all__ = ["pressure", "tier"]
