"""Tool expansion templates (documented address).

The code lives in :mod:`karni_historian.condense.templates`; this module keeps the
address the README documents, so code written against it keeps working.
"""

from __future__ import annotations

from karni_historian.condense.templates import TemplateError, expand

__all__ = ["TemplateError", "expand"]
