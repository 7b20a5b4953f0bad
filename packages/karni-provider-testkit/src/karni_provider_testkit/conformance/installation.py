"""The conformance checks of the provider as Karni finds it: by entry point, end to end.

The installed distribution declares the entry point, loading it is quiet and
quick, and the real ``karni context --with-history`` shows the brief.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from karni_provider_testkit.conformance.base import ContractBase

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["InstallationChecks"]


class InstallationChecks(ContractBase):
    """The entry point, loading through it, and ``karni context`` in a subprocess."""

    def test_loading_is_quiet_quick_and_never_exits(self, tmp_path: Path) -> None:
        """Importing and creating the provider, as Karni does, prints and raises nothing, quickly.

        Karni loads a provider inside the same isolation as its calls: output
        is discarded, any exception (``SystemExit`` and ``GeneratorExit``
        too) makes it a load failure that ``karni doctor`` lists, and loading
        that outlasts the deadline (10 s) is abandoned; either way the
        provider never runs. Fix: at import and in ``__init__``, print
        nothing, start nothing, never exit, and leave slow work (opening
        the store, starting programs) to the first call.
        """
        from karni.agent.history import DEFAULT_PROVIDER_TIMEOUT

        from karni_provider_testkit.loading import load_in_subprocess

        value = self._entry_point_value()
        seconds = min(self.call_timeout, DEFAULT_PROVIDER_TIMEOUT)
        report = load_in_subprocess(value, seconds, tmp_path)
        assert not report.timed_out, (
            f"loading `{value}` took over {seconds:g} s; Karni abandons it by then"
        )
        assert report.error is None, f"loading `{value}` raised {report.error}"
        assert report.stdout == "", f"loading `{value}` wrote to stdout: {report.stdout[:200]!r}"
        assert report.stderr == "", f"loading `{value}` wrote to stderr: {report.stderr[:200]!r}"

    def _entry_point_value(self) -> str:
        """The installed entry point's value, or the class of :meth:`make_provider`."""
        if self.entry_point_name is not None:
            from karni.agent.common.entry_points import entry_points
            from karni.agent.history.discovery import ENTRY_POINT_GROUP

            for point in entry_points(ENTRY_POINT_GROUP):
                if point.name == self.entry_point_name:
                    return point.value
        kind = type(self.make_provider())
        return f"{kind.__module__}:{kind.__qualname__}"

    def test_entry_point_is_declared(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The installed distribution declares ``entry_point_name`` and it loads this provider.

        Fix: add ``[project.entry-points."karni.history_providers"]`` with
        ``<name> = "your_module:YourProvider"`` to ``pyproject.toml``,
        reinstall the package, and keep the entry-point name equal to the
        provider's ``name``. Skipped while ``entry_point_name`` is None.
        """
        if self.entry_point_name is None:
            pytest.skip("set entry_point_name (and distribution) on the test class to check it")
        from karni.agent.common.entry_points import entry_points, load_value
        from karni.agent.common.names import normalize_name
        from karni.agent.history.discovery import ENTRY_POINT_GROUP, provider_from_object

        monkeypatch.setenv("KARNI_CACHE_DIR", str(tmp_path / "cache"))
        points = [p for p in entry_points(ENTRY_POINT_GROUP) if p.name == self.entry_point_name]
        assert points, (
            f"no installed distribution declares `{self.entry_point_name}` in "
            f'[project.entry-points."{ENTRY_POINT_GROUP}"]; add it and reinstall'
        )
        if self.distribution is not None:
            declared = {point.distribution for point in points}
            assert normalize_name(self.distribution) in declared, (
                f"`{self.entry_point_name}` is declared by {sorted(declared)}, "
                f"not by `{self.distribution}`"
            )
            points = [p for p in points if p.distribution == normalize_name(self.distribution)]
        point = points[0]
        loaded = provider_from_object(point.name, point.value, load_value(point.value))
        expected = self.make_provider()
        assert type(loaded) is type(expected), (
            f"`{point.name} = {point.value}` gives a {type(loaded).__qualname__}, but "
            f"make_provider() returns a {type(expected).__qualname__}"
        )
        assert loaded.name == self.entry_point_name, (
            f"the provider's name {loaded.name!r} differs from its entry-point name "
            f"{self.entry_point_name!r}; make them equal"
        )

    def test_karni_context_shows_the_brief(self, contract_store: Path, tmp_path: Path) -> None:
        """End to end: ``karni context --with-history PATH`` shows the provider's brief.

        The real ``karni`` runs in a subprocess with only this provider
        enabled (``KARNI_HISTORY_PROVIDERS``): the installed entry point
        ``entry_point_name``, or, while that is None, the provider's class
        registered for the run (so it must be importable and take no
        arguments). Fix: if the heading is missing, check that the provider
        loads by entry point (``karni doctor`` lists load failures) and that
        ``detect`` is true from another working directory; if ``karni``
        fails, read its stderr in the failure message.
        """
        import importlib.util
        from contextlib import ExitStack

        from karni.agent.history import HISTORY_TOKEN_CAP

        from karni_provider_testkit.install import installed_provider
        from karni_provider_testkit.runner import find_karni_command, run_karni

        if "-m" in find_karni_command()[1:3] and importlib.util.find_spec("karni.cli") is None:
            pytest.fail(
                "this test runs the `karni` command, which is not installed here; "
                "install karni-cli in the same environment as your provider"
            )
        provider = self.make_provider()
        with ExitStack() as stack:
            name = self.entry_point_name
            if name is None:
                # A name of its own, so an installed copy of the provider cannot clash with it.
                installation = stack.enter_context(
                    installed_provider(
                        type(provider), tmp_path / "site", name=f"{provider.name}-under-test"
                    )
                )
                name = installation.name
            result = run_karni(
                ["context", "--with-history", self.brief_path],
                home=tmp_path / "home",
                cwd=contract_store,
                env={"KARNI_HISTORY_PROVIDERS": name},
            )
        assert result.exit_code == 0, (
            f"karni exited {result.exit_code}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        )
        block = result.history_block()
        heading = f"HISTORY: {self.brief_path} ({provider.name})"
        assert block is not None and block.splitlines()[0] == heading, (
            f"no `{heading}` in karni's output:\n{result.stdout}\nstderr:\n{result.stderr}"
        )
        assert self.marker in block, f"the brief lacks {self.marker!r}:\n{block}"
        assert len(block) <= HISTORY_TOKEN_CAP * 4, f"the block exceeds the cap:\n{block}"
