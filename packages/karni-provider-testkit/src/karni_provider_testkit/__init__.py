"""Fixtures and a conformance suite for authors of Karni history providers.

Subclass :class:`ProviderContract` in your tests to check your provider
against every rule of "Writing a provider"; use the pytest fixtures
(``karni_project``, ``install_provider``, ``run_karni``, ``snapshot_text``,
``fake_chronicle``, loaded automatically through the ``pytest11`` entry point)
for your own tests. ``FakeChronicle`` and ``FakeStore`` are the double of Gigai
Chronicle's ``chronicle`` command behind ``fake_chronicle``, for use without
the fixture (see :mod:`karni_provider_testkit.fake_chronicle`).
The names below are also importable for use outside pytest fixtures.

Names are imported on first use, so ``import karni_provider_testkit`` is cheap.
"""

from __future__ import annotations

from karni_provider_testkit.lazy import lazy_attributes

__all__ = [
    "CI_VARIABLES",
    "DETECT_MAX_READS",
    "DETECT_MAX_STATS",
    "DETECT_STATS_PER_FOLDER",
    "HOSTILE_PATHS",
    "ChronicleCall",
    "FakeChronicle",
    "FakeStore",
    "ForbiddenCall",
    "KarniRun",
    "ProviderContract",
    "ProviderInstallation",
    "RawTextSnapshotExtension",
    "bounded_call",
    "count_file_system_calls",
    "entry_point_value",
    "find_karni_command",
    "forbid_processes_and_sockets",
    "installed_provider",
    "isolated_environment",
    "make_karni_project",
    "run_karni",
    "unbounded_waits",
]

_WHERE = {
    "CI_VARIABLES": ".runner",
    "DETECT_MAX_READS": ".conformance.detection",
    "DETECT_MAX_STATS": ".conformance.detection",
    "DETECT_STATS_PER_FOLDER": ".conformance.detection",
    "HOSTILE_PATHS": ".conformance.calls",
    "ChronicleCall": ".fake_chronicle",
    "FakeChronicle": ".fake_chronicle",
    "FakeStore": ".fake_chronicle",
    "ForbiddenCall": ".probes",
    "KarniRun": ".runner",
    "ProviderContract": ".contract",
    "ProviderInstallation": ".install",
    "RawTextSnapshotExtension": ".snapshots",
    "bounded_call": ".probes",
    "count_file_system_calls": ".probes",
    "entry_point_value": ".install",
    "find_karni_command": ".runner",
    "forbid_processes_and_sockets": ".probes",
    "installed_provider": ".install",
    "isolated_environment": ".runner",
    "make_karni_project": ".project",
    "run_karni": ".runner",
    "unbounded_waits": ".probes",
}

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni_provider_testkit.conformance.calls import HOSTILE_PATHS
    from karni_provider_testkit.conformance.detection import (
        DETECT_MAX_READS,
        DETECT_MAX_STATS,
        DETECT_STATS_PER_FOLDER,
    )
    from karni_provider_testkit.contract import ProviderContract
    from karni_provider_testkit.fake_chronicle import ChronicleCall, FakeChronicle, FakeStore
    from karni_provider_testkit.install import (
        ProviderInstallation,
        entry_point_value,
        installed_provider,
    )
    from karni_provider_testkit.probes import (
        ForbiddenCall,
        bounded_call,
        count_file_system_calls,
        forbid_processes_and_sockets,
        unbounded_waits,
    )
    from karni_provider_testkit.project import make_karni_project
    from karni_provider_testkit.runner import (
        CI_VARIABLES,
        KarniRun,
        find_karni_command,
        isolated_environment,
        run_karni,
    )
    from karni_provider_testkit.snapshots import RawTextSnapshotExtension


__getattr__, __dir__ = lazy_attributes(__name__, _WHERE, __all__)
