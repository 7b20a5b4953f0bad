"""Kept importable where the README documents it; the code is :mod:`karni.cli.rules.adapters`."""

from __future__ import annotations

from karni.cli.rules.adapters import *  # noqa: F403
from karni.cli.rules.adapters import __all__ as __all__
