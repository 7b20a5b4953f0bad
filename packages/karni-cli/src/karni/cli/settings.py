"""Kept importable where the README documents it; the code is in :mod:`karni.cli.config`."""

from __future__ import annotations

from karni.cli.config.editing import set_value
from karni.cli.config.settings import *  # noqa: F403
from karni.cli.config.settings import __all__ as _settings_names

__all__ = [*_settings_names, "set_value"]
