"""Kept importable where the README documents it; the code is in :mod:`karni.cli.config`."""

from __future__ import annotations

from karni.cli.config.editing import set_value
from karni.cli.config.settings import (
    GLOBAL,
    PROJECT,
    PROJECT_CONFIG,
    SETTINGS,
    ConfigError,
    Setting,
    global_config_path,
    lookup,
    parse_bool,
    project_config_path,
    read_config,
    resolve,
)

__all__ = [
    "GLOBAL",
    "PROJECT",
    "PROJECT_CONFIG",
    "SETTINGS",
    "ConfigError",
    "Setting",
    "global_config_path",
    "lookup",
    "parse_bool",
    "project_config_path",
    "read_config",
    "resolve",
    "set_value",
]
