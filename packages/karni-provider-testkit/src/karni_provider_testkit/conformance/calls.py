"""The conformance checks of every call: calm for any path, silent, and bounded.

Karni calls a provider before every edit, with paths an agent chose, and
shows only what it returns: a call must answer text or None, never raise,
print or wait without a deadline, and take the project root as a ``str``
when it says it can.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from karni_provider_testkit.conformance.base import ContractBase
from karni_provider_testkit.probes import unbounded_waits
from karni_provider_testkit.project import make_karni_project

__all__ = ["HOSTILE_PATHS", "CallChecks"]

HOSTILE_PATHS: dict[str, str] = {
    "outside the project": "../outside/secrets.py",
    "absolute, outside the project": "/etc/passwd",
    "the project root": ".",
    "empty": "",
    "spaces": "apps/events/my file with spaces.py",
    "non-ASCII": "apps/événements/modèle_ü.py",
    "very long": "/".join(["a-very-long-directory-name"] * 200) + "/file.py",
    "not existing": "apps/nowhere/missing.py",
    "shell metacharacters": 'apps/$(touch pwned)/it\'s "quoted"; rm -rf.py',
    "backslashes": "apps\\events\\models.py",
}
"""Paths a provider must answer calmly, with text or None, never an exception."""


class CallChecks(ContractBase):
    """What ``context`` and the other calls return and do, whatever they are given."""

    @pytest.mark.parametrize("store", ["no store", "empty store", "with a record"])
    @pytest.mark.parametrize("case", sorted(HOSTILE_PATHS))
    def test_context_never_raises_for_hostile_paths(
        self, contract_project: Path, store: str, case: str
    ) -> None:
        """``context`` returns text or None, never raises, for any path.

        Paths outside the project, the root itself, empty, with spaces,
        non-ASCII, very long or not existing must all be answered calmly. Fix:
        wrap the body of ``context`` in ``try``/``except`` for the errors your
        store can raise (``OSError``, ``UnicodeError``, ``ValueError``, your
        parser's errors) and return None; never resolve a path outside the
        project.
        """
        if store != "no store":
            self.make_store(contract_project)
        if store == "with a record":
            self.record(contract_project, self.brief_path, self.marker)
        path = HOSTILE_PATHS[case]
        try:
            brief = self._call(self.make_provider().context, contract_project, path)
        except Exception as error:
            pytest.fail(f"context() raised {type(error).__name__}: {error} for {path[:80]!r}")
        assert brief is None or isinstance(brief, str), (
            f"context() returned {type(brief).__name__} for {path[:80]!r}; return str or None"
        )

    @pytest.mark.parametrize("store", ["no store", "empty store", "with a record"])
    def test_project_context_never_raises(self, contract_project: Path, store: str) -> None:
        """``project_context`` (if defined) returns text or None, never raises.

        Fix: return None when the store has nothing project-wide to say, and
        catch your store's errors inside the method.
        """
        provider = self.make_provider()
        if not callable(getattr(provider, "project_context", None)):
            pytest.skip("the provider has no project_context (it is optional)")
        if store != "no store":
            self.make_store(contract_project)
        if store == "with a record":
            self.record(contract_project, self.brief_path, self.marker)
        try:
            brief = self._call(provider.project_context, contract_project)
        except Exception as error:
            pytest.fail(f"project_context() raised {type(error).__name__}: {error}")
        assert brief is None or isinstance(brief, str), (
            f"project_context() returned {type(brief).__name__}; return str or None"
        )

    def test_works_in_a_project_with_spaces_and_non_ascii(self, tmp_path: Path) -> None:
        """A project folder named ``my project ü`` works like any other.

        Fix: pass paths to programs as separate arguments (never through a
        shell string), and open files with an explicit ``encoding="utf-8"``.
        """
        root = make_karni_project(tmp_path / "my project ü")
        provider = self.make_provider()
        self.make_store(root)
        self.record(root, self.brief_path, self.marker)
        assert self._call(provider.detect, root) is True, "detect() is not True"
        brief = self._call(provider.context, root, self.brief_path)
        assert isinstance(brief, str) and self.marker in brief, f"context() returned {brief!r}"

    def test_nothing_reaches_stdout_or_stderr(
        self, contract_store: Path, capfd: pytest.CaptureFixture[str]
    ) -> None:
        """No call writes to file descriptor 1 or 2, including the processes it starts.

        Karni discards what you print, but a subprocess inherits the real
        descriptors and would corrupt ``karni context``'s output. Fix: remove
        ``print``/logging to the console, and run programs with
        ``capture_output=True`` (or ``stdout``/``stderr`` set to ``PIPE`` or
        ``DEVNULL``).
        """
        provider = self.make_provider()
        capfd.readouterr()
        self._call(provider.detect, contract_store)
        self._call(provider.context, contract_store, self.brief_path)
        self._call(provider.context, contract_store, "apps/nowhere/missing.py")
        for optional, args in (
            ("project_context", (contract_store,)),
            ("full_command", (contract_store, self.brief_path)),
        ):
            method = getattr(provider, optional, None)
            if callable(method):
                self._call(method, *args)
        out, err = capfd.readouterr()
        assert out == "", f"the provider wrote to stdout: {out[:200]!r}"
        assert err == "", f"the provider wrote to stderr: {err[:200]!r}"

    def test_every_external_call_is_bounded(self, contract_store: Path) -> None:
        """Every process the provider waits for, and every socket it connects, has a timeout.

        Two ways to fail: a wait or connection seen without a deadline, or a
        call that has not returned after :attr:`call_timeout` seconds (a wait
        the probes cannot see, such as reading a child's pipe to the end).

        Fix: pass ``timeout=`` to ``subprocess.run``/``check_output``/
        ``communicate``/``wait`` and to ``urlopen``/``create_connection``
        (catching ``subprocess.TimeoutExpired`` and ``OSError`` and returning
        None), and read a child's output through ``communicate(timeout=...)``.
        A provider that calls nothing external passes trivially.
        """
        provider = self.make_provider()
        with unbounded_waits() as found:
            for method_name, args in (
                ("detect", (contract_store,)),
                ("context", (contract_store, self.brief_path)),
                ("project_context", (contract_store,)),
                ("full_command", (contract_store, self.brief_path)),
            ):
                method = getattr(provider, method_name, None)
                if callable(method):
                    try:
                        self._call(method, *args)
                    except TimeoutError:
                        found.append(
                            f"{method_name}() had not returned after {self.call_timeout:g}s"
                        )
                    except Exception:  # other tests report exceptions; this one judges waits
                        pass
        assert not found, "unbounded external calls: " + "; ".join(found)

    def test_a_str_root_gives_what_a_path_root_gives(self, contract_store: Path) -> None:
        """With ``accepts_str_root = True``, every method answers a ``str`` root as a ``Path`` one.

        Karni then passes the project root as a ``str`` (it never imports
        ``pathlib`` for such a provider). Skipped for a provider without the
        flag. Fix: turn the root into what the method needs first
        (``os.path.join(root, ...)`` or ``Path(root)``), never ``root / "x"``.
        """
        provider = self.make_provider()
        if getattr(provider, "accepts_str_root", False) is not True:
            pytest.skip("the provider does not set accepts_str_root = True")
        calls: dict[str, tuple[Any, tuple[Any, ...]]] = {
            "detect": (provider.detect, ()),
            "context": (provider.context, (self.brief_path,)),
        }
        for optional, arguments in (("project_context", ()), ("full_command", (self.brief_path,))):
            method = getattr(provider, optional, None)
            if callable(method):
                calls[optional] = (method, arguments)
        for name, (method, arguments) in calls.items():
            as_path = self._call(method, contract_store, *arguments)
            as_str = self._call(method, str(contract_store), *arguments)
            assert as_str == as_path, (
                f"{name}() with the root as a str gave {as_str!r}, with a Path {as_path!r}"
            )
        assert self._call(provider.detect, str(contract_store)) is True
