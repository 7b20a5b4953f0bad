"""The output sanitiser, kept importable here; it lives in :mod:`karni.agent.common.sanitize`."""

from __future__ import annotations

from karni.agent.common.sanitize import clean_line, iter_brief_lines

__all__ = ["clean_line", "iter_brief_lines"]
