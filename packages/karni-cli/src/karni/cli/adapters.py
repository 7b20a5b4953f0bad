"""Kept importable where the README documents it; the code is :mod:`karni.cli.rules.adapters`."""

from __future__ import annotations

from karni.cli.rules.adapters import (
    ADAPTERS,
    BACKUP_DIR,
    GENERATED_MARKER,
    Adapter,
    AdapterFile,
    AdapterState,
    SyncReport,
    adapter_states,
    find_stale,
    is_generated,
    planned_files,
    sync,
)

__all__ = [
    "ADAPTERS",
    "BACKUP_DIR",
    "GENERATED_MARKER",
    "Adapter",
    "AdapterFile",
    "AdapterState",
    "SyncReport",
    "adapter_states",
    "find_stale",
    "is_generated",
    "planned_files",
    "sync",
]
