"""What every part of the conformance suite shares: the author's hooks, the fixtures, the call.

:class:`ContractBase` declares what a test class sets (``entry_point_name``,
``brief_path``, ...) and implements (:meth:`~ContractBase.make_provider`,
:meth:`~ContractBase.make_store`, :meth:`~ContractBase.record`), the two
fixtures every check uses, and the bounded call each check makes. The checks
themselves live beside it, one module per concern, and
:class:`karni_provider_testkit.contract.ProviderContract` brings them together.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from karni_provider_testkit.probes import bounded_call
from karni_provider_testkit.project import make_karni_project

__all__ = ["ContractBase"]


class ContractBase:
    """The attributes and methods an author's test class sets, and the suite's fixtures."""

    entry_point_name: ClassVar[str | None] = None
    """The name under ``karni.history_providers`` the installed package declares.

    None skips the entry-point check, and the end-to-end test registers the
    provider's class itself for the run.
    """

    distribution: ClassVar[str | None] = None
    """The distribution expected to declare :attr:`entry_point_name` (any, if None)."""

    brief_path: ClassVar[str] = "apps/events/models.py"
    """The project-relative file the suite records a brief about."""

    marker: ClassVar[str] = "Keep events soft-deletable, never hard delete"
    """The text :meth:`record` is asked to put into the brief."""

    call_timeout: ClassVar[float] = 30.0
    """Seconds one provider call may take in the suite before it counts as hung."""

    # -- what the author implements ------------------------------------------------

    def make_provider(self) -> Any:
        """Return the provider object under test, as the entry point would give it."""
        raise NotImplementedError(f"{type(self).__name__} must implement make_provider(self)")

    def make_store(self, root: Path) -> None:
        """Create an empty store for the project at ``root`` (so ``detect`` becomes true)."""
        raise NotImplementedError(f"{type(self).__name__} must implement make_store(self, root)")

    def record(self, root: Path, path: str, text: str) -> None:
        """Record, in the store at ``root``, a brief about ``path`` that contains ``text``.

        ``make_store(root)`` has already been called. After this,
        ``context(root, path)`` must return a brief containing ``text``.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must implement record(self, root, path, text)"
        )

    # -- fixtures ----------------------------------------------------------------------

    @pytest.fixture
    def contract_project(self, tmp_path: Path) -> Path:
        """A fresh Karni project without a store."""
        return make_karni_project(tmp_path / "project")

    @pytest.fixture
    def contract_store(self, contract_project: Path) -> Path:
        """A Karni project with a store holding one record about :attr:`brief_path`."""
        self.make_store(contract_project)
        self.record(contract_project, self.brief_path, self.marker)
        return contract_project

    def _call(self, function: Any, *args: Any) -> Any:
        return bounded_call(function, *args, seconds=self.call_timeout)
