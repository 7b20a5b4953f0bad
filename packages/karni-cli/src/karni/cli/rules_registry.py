"""Kept importable where the README documents it; the code is :mod:`karni.cli.rules.registry`."""

from __future__ import annotations

from karni.cli.rules.registry import *  # noqa: F403
from karni.cli.rules.registry import __all__ as __all__
