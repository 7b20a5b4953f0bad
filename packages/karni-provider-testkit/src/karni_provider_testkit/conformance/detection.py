"""The conformance checks of ``detect``: cheap, quiet, and right about the store.

``detect`` runs for ``karni rules``, ``karni doctor`` and every
``--with-history``, so it may only look: a few ``stat`` calls, no process,
no socket, no read, and a walk-up that refuses another user's folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from karni_provider_testkit.conformance.base import ContractBase
from karni_provider_testkit.probes import count_file_system_calls, forbid_processes_and_sockets
from karni_provider_testkit.project import make_karni_project

__all__ = ["DETECT_MAX_READS", "DETECT_MAX_STATS", "DETECT_STATS_PER_FOLDER", "DetectionChecks"]

DETECT_MAX_READS = 1
"""Files ``detect`` may open or folders it may list, in one call."""

DETECT_MAX_STATS = 8
"""``stat`` calls ``detect`` may make in one call, besides those of a walk up."""

DETECT_STATS_PER_FOLDER = 2
"""Further ``stat`` calls allowed per folder from the project root up to the file-system root.

A provider whose store may sit in a parent folder (``store_markers_walk_up``)
checks each folder on the way up, and resolving the project root's symlinks
costs one ``lstat`` per part of its path.
"""


class DetectionChecks(ContractBase):
    """The provider's shape, and what ``detect`` answers and does."""

    def test_has_the_provider_shape(self) -> None:
        """The provider has a one-line string ``name`` and callable ``detect`` and ``context``.

        Fix: give the class a ``name = "..."`` attribute (lowercase, no spaces:
        it is shown in the ``HISTORY:`` heading and used in
        ``KARNI_HISTORY_PROVIDERS``) and define ``detect(self, project_root)``
        and ``context(self, project_root, path)``. ``project_context`` and
        ``full_command``, if present, must be callable too.
        """
        provider = self.make_provider()
        name = getattr(provider, "name", None)
        assert isinstance(name, str), f"`name` must be a str, not {type(name).__name__}"
        assert name.strip() and name == name.strip(), f"`name` {name!r} must be non-blank, trimmed"
        assert not any(char.isspace() for char in name), f"`name` {name!r} must have no spaces"
        assert callable(getattr(provider, "detect", None)), "`detect` must be a method"
        assert callable(getattr(provider, "context", None)), "`context` must be a method"
        for optional in ("project_context", "full_command"):
            if hasattr(provider, optional):
                assert callable(getattr(provider, optional)), f"`{optional}` must be a method"

    def test_detect_is_false_without_a_store(self, contract_project: Path) -> None:
        """``detect`` returns False for a project that has no store.

        Fix: look for the store only at the project root (or, like Chronicle,
        walking up from it), not in the current directory or the home folder,
        and return a real ``bool``.
        """
        result = self._call(self.make_provider().detect, contract_project)
        assert result is False, f"detect() returned {result!r} for a project without a store"

    def test_detect_is_true_with_a_store(self, contract_project: Path) -> None:
        """``detect`` returns True once ``make_store`` has created a store.

        Fix: check for exactly what ``make_store`` creates (usually a directory
        at the project root), and return ``True``, not a truthy object.
        """
        self.make_store(contract_project)
        result = self._call(self.make_provider().detect, contract_project)
        assert result is True, f"detect() returned {result!r} for a project with a store"

    def test_store_markers_agree_with_detect(self, contract_project: Path) -> None:
        """If the provider declares ``store_markers``, one of them exists whenever it detects.

        Karni skips ``detect`` when every declared marker is missing, so a
        marker list that misses the store hides the provider. Fix: list every
        path (relative to the project root) whose presence ``detect`` needs,
        set ``store_markers_walk_up = True`` if ``detect`` looks in parent
        folders, or drop ``store_markers`` (Karni then always asks ``detect``).
        """
        from karni.agent.history.markers import markers_rule_out

        provider = self.make_provider()
        if getattr(provider, "store_markers", None) is None:
            pytest.skip("the provider declares no store_markers; Karni always asks detect")
        self.make_store(contract_project)
        assert self._call(provider.detect, contract_project) is True
        assert not markers_rule_out(provider, contract_project), (
            f"detect() finds a store but none of store_markers={provider.store_markers!r} "
            f"exists, so Karni would never ask detect()"
        )

    def test_walk_up_refuses_a_store_of_another_user(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A store found in a parent folder owned by another user is not taken.

        A shared parent such as ``/tmp`` could hold a planted store. Fix: walk
        up with karni-core's ``karni.agent.common.ownership.find_upwards``
        (it refuses such folders and records them for ``karni doctor``)
        instead of a loop of your own. Skipped for a provider that looks only
        at the project root.
        """
        from karni.agent.common import ownership

        shared = tmp_path / "shared"
        project = make_karni_project(shared / "project")
        if self._call(self.make_provider().detect, project) is not False:
            pytest.skip("detect() is not False without a store (another test says so)")
        self.make_store(shared)
        if self._call(self.make_provider().detect, project) is not True:
            pytest.skip("the provider does not look for a store in parent folders")
        own = ownership.owner_uid
        inside = (str(project), str(project.resolve()))
        outside = (str(shared), str(shared.resolve()))

        def owner(path: Any) -> int | None:
            text = str(path)
            foreign = text.startswith(outside) and not text.startswith(inside)
            return -2 if foreign else own(path)

        monkeypatch.setattr(ownership, "owner_uid", owner)
        ownership.forget_ignored()
        result = self._call(self.make_provider().detect, project)
        assert result is False, (
            f"detect() took a store in {shared}, a folder owned by another user; walk up "
            f"with karni.agent.common.ownership.find_upwards"
        )
        assert ownership.ignored_folders(), (
            "the walk-up did not go through karni.agent.common.ownership.find_upwards, so "
            "`karni doctor` cannot report the store it ignored"
        )

    def test_detect_starts_no_process_and_opens_no_socket(self, contract_project: Path) -> None:
        """``detect`` never starts a process or opens a socket, store or not.

        ``detect`` runs for ``karni rules``, ``karni doctor`` and every
        ``--with-history``. Fix: make it a file-system check only (for example
        ``(project_root / ".my-history").is_dir()``); move anything that runs
        a program into ``context``.
        """
        provider = self.make_provider()
        for with_store in (False, True):
            if with_store:
                self.make_store(contract_project)
            with forbid_processes_and_sockets() as attempts:
                try:
                    provider.detect(contract_project)
                except Exception:  # the attempts list is the verdict, not the exception
                    pass
            assert not attempts, (
                f"detect() ({'with' if with_store else 'without'} a store) tried to start a "
                f"process or open a socket: {', '.join(attempts)}"
            )

    def test_detect_makes_only_a_few_file_system_calls(self, contract_project: Path) -> None:
        """``detect`` makes a few ``stat`` calls and reads nothing, store or not.

        Counted in one call (after a first, warming call): at most
        ``DETECT_MAX_READS`` file opened or folder listed, and at most
        ``DETECT_MAX_STATS`` stats plus ``DETECT_STATS_PER_FOLDER`` per folder
        from the project root up. Fix: do a ``stat``-level check
        (``is_dir``/``is_file``) and nothing else; do not read, parse or list
        the store, and do not import modules inside ``detect`` (importing
        opens files: import them in ``context`` instead).
        """
        provider = self.make_provider()
        stats_allowed = DETECT_MAX_STATS + DETECT_STATS_PER_FOLDER * len(
            Path(os.path.realpath(contract_project)).parts
        )
        for with_store in (False, True):
            if with_store:
                self.make_store(contract_project)
            provider.detect(contract_project)
            with count_file_system_calls() as seen:
                provider.detect(contract_project)
            which = "with" if with_store else "without"
            assert len(seen.reads) <= DETECT_MAX_READS, (
                f"detect() ({which} a store) opened or listed {len(seen.reads)} paths "
                f"(at most {DETECT_MAX_READS}): {', '.join(seen.reads)}"
            )
            assert len(seen.stats) <= stats_allowed, (
                f"detect() ({which} a store) made {len(seen.stats)} stat calls "
                f"(at most {stats_allowed} here): {', '.join(seen.stats[:20])}"
            )
