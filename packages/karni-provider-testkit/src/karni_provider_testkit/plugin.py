"""The pytest plugin of karni-provider-testkit: fixtures for provider authors.

Loaded through the ``pytest11`` entry point; it only defines fixtures, and
imports the testkit's helpers when a fixture is first used, so loading it costs
next to nothing. Switch it off with ``-p no:karni_provider_testkit``.

Fixtures:

- ``karni_project``: a temporary Karni project (``manage.py``, an app, a page).
- ``install_provider``: registers a provider through a real
  ``karni.history_providers`` entry point for one test.
- ``run_karni``: runs the installed ``karni`` in an isolated environment.
- ``snapshot_text``: byte-exact text snapshots with syrupy.
- ``fake_chronicle``: a :class:`~karni_provider_testkit.fake_chronicle.FakeChronicle`,
  the faithful double of Gigai Chronicle's ``chronicle`` command, installed and
  first on ``PATH`` for one test, configurable and recording every call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from karni_provider_testkit.fake_chronicle import FakeChronicle
    from karni_provider_testkit.install import ProviderInstallation
    from karni_provider_testkit.runner import KarniRun

__all__ = ["fake_chronicle", "install_provider", "karni_project", "run_karni", "snapshot_text"]

# The conformance suite's assertions should explain themselves like a test's own.
pytest.register_assert_rewrite("karni_provider_testkit.contract")


@pytest.fixture
def snapshot_text(snapshot: Any) -> Any:
    """A syrupy snapshot that stores text byte for byte (a raw ``.txt`` file per test)."""
    from karni_provider_testkit.snapshots import RawTextSnapshotExtension

    return snapshot.use_extension(RawTextSnapshotExtension)


@pytest.fixture
def karni_project(tmp_path: Path) -> Path:
    """A temporary Karni project: ``manage.py``, the app ``apps/events`` and one page.

    Returns the project root (``tmp_path / "project"``). It has no history
    store; create yours inside it.
    """
    from karni_provider_testkit.project import make_karni_project

    return make_karni_project(tmp_path / "project")


@pytest.fixture
def install_provider(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., ProviderInstallation]]:
    """Register providers through real ``karni.history_providers`` entry points.

    Call it with a provider class, factory, module-level instance or a
    ``"module:attribute"`` string (and optionally ``name=``,
    ``distribution=``, ``version=``); it returns a
    :class:`~karni_provider_testkit.install.ProviderInstallation`. Until the
    test ends, the fake distribution is on ``sys.path`` and ``PYTHONPATH``
    (so ``run_karni`` sees it) and ``KARNI_CACHE_DIR`` is a temporary folder.
    """
    from contextlib import ExitStack

    from karni_provider_testkit.install import installed_provider

    stack = ExitStack()

    def install(target: Any, **options: Any) -> ProviderInstallation:
        site = tmp_path_factory.mktemp("karni-site")
        return stack.enter_context(
            installed_provider(target, site, cache_dir=site / ".karni-cache", **options)
        )

    yield install
    try:
        stack.close()
    except Exception as error:  # a failed cleanup must not hide the test's own result
        import warnings

        warnings.warn(f"install_provider could not clean up: {error}", stacklevel=1)


@pytest.fixture
def run_karni(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., KarniRun]:
    """Run the installed ``karni`` in a subprocess with an isolated environment.

    ``run_karni("context", "--with-history", "apps/events/models.py",
    cwd=karni_project, env={"KARNI_HISTORY_PROVIDERS": "my-history"})``
    returns a :class:`~karni_provider_testkit.runner.KarniRun` with
    ``exit_code``, ``stdout`` and ``stderr``. ``XDG_CONFIG_HOME`` and
    ``KARNI_CACHE_DIR`` are temporary folders, the CI variables are cleared
    and ``NO_COLOR=1`` is set.
    """
    from karni_provider_testkit.runner import run_karni as run

    home = tmp_path_factory.mktemp("karni-home")

    def run_in_isolation(*args: str, **options: Any) -> KarniRun:
        return run(list(args), home=home, **options)

    return run_in_isolation


@pytest.fixture
def fake_chronicle(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> FakeChronicle:
    """A double of Gigai Chronicle's ``chronicle``, installed and first on ``PATH``.

    Returns a :class:`~karni_provider_testkit.fake_chronicle.FakeChronicle`
    with its own home folder: ``create_store``/``example_store`` make stores,
    ``configure(delay=..., exit_code=..., stderr=..., stdout=..., patch=...,
    drop=..., grandchild=...)`` changes the next runs, and ``calls()`` lists
    every run (argv, working directory, pid, stdin). ``PATH`` is set through
    ``monkeypatch``, so subprocesses such as the real ``karni`` find it too.
    """
    from karni_provider_testkit.fake_chronicle import FakeChronicle

    double = FakeChronicle(tmp_path_factory.mktemp("fake-chronicle-home"))
    double.install()
    monkeypatch.setenv("PATH", double.path_with_bin())
    return double
