"""Kept importable where the README documents it; the code is :mod:`karni.cli.rules.file`."""

from __future__ import annotations

from karni.cli.rules.file import (
    RULES_FILE_NAME,
    SETTINGS,
    RulesFile,
    RulesFileError,
    load_rules_file,
    parse_rules_source,
)

__all__ = [
    "RULES_FILE_NAME",
    "SETTINGS",
    "RulesFile",
    "RulesFileError",
    "load_rules_file",
    "parse_rules_source",
]
