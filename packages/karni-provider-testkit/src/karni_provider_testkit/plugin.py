"""The pytest plugin of karni-provider-testkit: fixtures for provider authors.

Loaded through the ``pytest11`` entry point; it only defines fixtures, and
imports the testkit's helpers when a fixture is first used. Switch it off with
``-p no:karni_provider_testkit``.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def snapshot_text(snapshot: Any) -> Any:
    """A syrupy snapshot that stores text byte for byte (a raw ``.txt`` file per test)."""
    from karni_provider_testkit.snapshots import RawTextSnapshotExtension

    return snapshot.use_extension(RawTextSnapshotExtension)
