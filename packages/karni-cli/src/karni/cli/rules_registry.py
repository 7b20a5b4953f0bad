"""Kept importable where the README documents it; the code is :mod:`karni.cli.rules.registry`."""

from __future__ import annotations

from karni.cli.rules.model import CATEGORIES, SEVERITIES, Rule
from karni.cli.rules.registry import (
    KARNI_RULES,
    LISTING_TOKEN_BUDGET,
    effective_rules,
    format_explanation,
    format_listing,
    inactive_reason,
    karni_rule,
)

__all__ = [
    "CATEGORIES",
    "KARNI_RULES",
    "LISTING_TOKEN_BUDGET",
    "SEVERITIES",
    "Rule",
    "effective_rules",
    "format_explanation",
    "format_listing",
    "inactive_reason",
    "karni_rule",
]
