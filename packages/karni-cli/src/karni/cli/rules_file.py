"""Kept importable where the README documents it; the code is :mod:`karni.cli.rules.file`."""

from __future__ import annotations

from karni.cli.rules.file import *  # noqa: F403
from karni.cli.rules.file import __all__ as __all__
