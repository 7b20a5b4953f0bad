"""The entry-point index under its earlier name: see :mod:`karni.agent.common.entry_points`."""

from __future__ import annotations

from karni.agent.common.entry_points import EntryPoint, entry_points, load_value, normalize_name

__all__ = ["EntryPoint", "entry_points", "load_value", "normalize_name"]
