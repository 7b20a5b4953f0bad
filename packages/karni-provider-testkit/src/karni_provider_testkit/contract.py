"""The conformance suite every Karni history provider should pass.

An author subclasses :class:`ProviderContract` in their own test suite and
implements three methods; pytest then runs every rule of "Writing a provider"
against their provider, and each failure's docstring says what to fix::

    from karni_provider_testkit import ProviderContract
    from my_history.karni_provider import MyHistoryProvider


    class TestMyHistoryProvider(ProviderContract):
        entry_point_name = "my-history"
        distribution = "my-history"

        def make_provider(self):
            return MyHistoryProvider()

        def make_store(self, root):
            (root / ".my-history").mkdir()

        def record(self, root, path, text):
            ...  # write a record about `path` whose brief contains `text`

A conformance test may not be dropped silently: overriding one is an error
unless the override is marked ``@pytest.mark.xfail(reason="...")``.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any, ClassVar

import pytest

from karni_provider_testkit.probes import (
    bounded_call,
    count_file_system_calls,
    forbid_processes_and_sockets,
    unbounded_waits,
)
from karni_provider_testkit.project import make_karni_project

__all__ = [
    "DETECT_MAX_READS",
    "DETECT_MAX_STATS",
    "DETECT_STATS_PER_FOLDER",
    "HOSTILE_PATHS",
    "ProviderContract",
]

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

ROOMS: tuple[int, ...] = (0, 30, 200, 1_100)
"""The rooms (in characters) a provider with ``accepts_room`` is asked to keep within."""

COMMAND_PATHS: tuple[str | None, ...] = (
    "apps/events/models.py",
    "apps/events/my file with spaces.py",
    "apps/événements/modèle_ü.py",
    'apps/$(touch pwned)/it\'s "quoted"; rm -rf.py',
    None,
)

_BIDI_CONTROLS = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

_CONFORMANCE_TESTS: frozenset[str] = frozenset()


def _control_characters(text: str) -> list[str]:
    import unicodedata

    return sorted(
        {
            repr(char)
            for char in text
            if char != "\n" and (unicodedata.category(char) == "Cc" or char in _BIDI_CONTROLS)
        }
    )


def _has_xfail_with_reason(function: Any) -> bool:
    for mark in getattr(function, "pytestmark", []):
        if getattr(mark, "name", None) == "xfail" and str(mark.kwargs.get("reason") or "").strip():
            return True
    return False


class ProviderContract:
    """Base class for a provider's conformance tests.

    Subclass it (with a name starting with ``Test``) and implement
    :meth:`make_provider`, :meth:`make_store` and :meth:`record`. Set
    :attr:`entry_point_name` (and :attr:`distribution`) once the provider's
    package is installed, so the entry-point check runs too.
    """

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

    # -- the guard against silently dropped tests ------------------------------------

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Refuse a subclass that overrides a conformance test without ``xfail(reason=)``."""
        super().__init_subclass__(**kwargs)
        for name in sorted(_CONFORMANCE_TESTS):
            if name in cls.__dict__ and not _has_xfail_with_reason(cls.__dict__[name]):
                raise TypeError(
                    f"{cls.__name__} overrides the conformance test `{name}` of "
                    f"ProviderContract; remove the override, or mark it "
                    f"`@pytest.mark.xfail(reason=...)` saying why the provider cannot pass it"
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

    # -- the conformance suite ---------------------------------------------------------

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

    def test_context_contains_the_recorded_text(self, contract_store: Path) -> None:
        """``context`` returns the brief ``record`` wrote, with its text.

        Fix: make sure ``context(project_root, path)`` finds records about the
        project-relative POSIX ``path`` Karni passes (``apps/events/models.py``),
        or fix ``record`` in the test class so it writes what the provider reads.
        """
        brief = self._call(self.make_provider().context, contract_store, self.brief_path)
        assert isinstance(brief, str), f"context() returned {brief!r}, expected the brief"
        assert self.marker in brief, f"the brief does not contain {self.marker!r}:\n{brief}"

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

    @pytest.mark.parametrize("path", COMMAND_PATHS)
    def test_full_command_survives_shlex_split(
        self, contract_store: Path, path: str | None
    ) -> None:
        """``full_command`` (if defined) is one line a shell splits back into the file's path.

        Karni prints it in the truncation line for the user to paste. Fix:
        quote the path with ``shlex.quote(path)``; return None when there is no
        such command (for ``path=None`` too, if you have no project-level one).
        """
        provider = self.make_provider()
        method = getattr(provider, "full_command", None)
        if not callable(method):
            pytest.skip("the provider has no full_command (it is optional)")
        command = self._call(method, contract_store, path)
        if command is None:
            return
        assert isinstance(command, str), f"full_command() returned {type(command).__name__}"
        assert command.strip(), "full_command() returned a blank command; return None instead"
        assert not _control_characters(command), (
            f"full_command() has control characters {_control_characters(command)}"
        )
        assert "\n" not in command, f"full_command() must be one line: {command!r}"
        try:
            words = shlex.split(command)
        except ValueError as error:
            pytest.fail(f"a shell cannot split {command!r} ({error}); use shlex.quote(path)")
        if path:
            longest = max(path.split(), key=len)
            if longest in command:
                assert any(path in word for word in words), (
                    f"{command!r} names {path!r} but a shell splits it into {words!r}; "
                    f"use shlex.quote(path)"
                )

    def test_briefs_carry_no_control_characters(self, contract_store: Path) -> None:
        r"""Briefs contain no control characters (tabs, ``\r``, escapes, bidi overrides).

        Karni strips them anyway, but a provider that colours its output or
        passes a tool's raw bytes through is misbehaving. Fix: run tools with
        ``NO_COLOR=1``/``--no-color``, decode as UTF-8, and drop ``\x1b[...m``
        sequences and ``\r``.
        """
        provider = self.make_provider()
        briefs = {"context": self._call(provider.context, contract_store, self.brief_path)}
        if callable(getattr(provider, "project_context", None)):
            briefs["project_context"] = self._call(provider.project_context, contract_store)
        for method, brief in briefs.items():
            if isinstance(brief, str):
                assert not _control_characters(brief), (
                    f"{method}() returned control characters {_control_characters(brief)}"
                )

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

    @pytest.mark.parametrize("room", ROOMS)
    def test_a_brief_keeps_within_its_room(self, contract_store: Path, room: int) -> None:
        """With ``accepts_room = True``, every brief fits in the ``room`` characters Karni gives.

        Karni measures the brief as it shows it: blank lines dropped, trailing
        whitespace trimmed, the lines joined with newlines, the heading not
        counted. Skipped for a provider without ``accepts_room``. Fix: stop
        adding lines once the next one would pass ``room`` (and return None
        when not even one fits), or drop ``accepts_room`` and let Karni cut.
        """
        import functools

        from karni.agent.common.sanitize import iter_brief_lines

        provider = self.make_provider()
        if getattr(provider, "accepts_room", False) is not True:
            pytest.skip("the provider does not set accepts_room = True")
        self.record(contract_store, self.brief_path, "a longer note " * 200)
        calls = {"context": functools.partial(provider.context, contract_store, self.brief_path)}
        if callable(getattr(provider, "project_context", None)):
            calls["project_context"] = functools.partial(provider.project_context, contract_store)
        for method, call in calls.items():
            brief = self._call(functools.partial(call, room=room))
            shown = "\n".join(iter_brief_lines(brief)) if isinstance(brief, str) else ""
            assert len(shown) <= room, (
                f"{method}(..., room={room}) gave a brief of {len(shown)} characters:\n{shown}"
            )

    def test_compose_shows_the_brief_under_the_cap(self, contract_store: Path) -> None:
        """Karni's composition layer shows the brief under its heading, within the cap.

        Fix: ``detect`` must be true for the store and ``context`` must return
        the brief; put what matters most first, since Karni keeps the start.
        """
        from karni.agent.history import HISTORY_TOKEN_CAP, compose, estimate_tokens

        provider = self.make_provider()
        block = compose(contract_store, self.brief_path, providers=[provider])
        assert block is not None, "compose() returned None: no brief reached Karni"
        heading = f"HISTORY: {self.brief_path} ({provider.name})"
        assert block.splitlines()[0] == heading, f"unexpected heading in:\n{block}"
        assert self.marker in block, f"the marker {self.marker!r} was cut or lost:\n{block}"
        assert estimate_tokens(block) <= HISTORY_TOKEN_CAP

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


_CONFORMANCE_TESTS = frozenset(name for name in vars(ProviderContract) if name.startswith("test_"))
