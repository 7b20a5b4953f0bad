"""The ``<session-history>`` block (documented address).

The code lives in :mod:`karni_historian.brief.render`; this module keeps the
address the README documents, so code written against it keeps working.
"""

from __future__ import annotations

from karni_historian.brief.render import render_history

__all__ = ["render_history"]
