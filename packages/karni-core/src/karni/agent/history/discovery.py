"""Turning ``karni.history_providers`` entry points into provider objects.

Karni's own registration of a name (the built-in Chronicle provider, shipped
by ``karni-history-chronicle``) is only the fallback: anyone else's entry
point of the same name wins over it, so a user can replace a built-in by
installing a package (see docs/concepts/history-providers.md). When
``karni-history-chronicle`` is importable but its metadata is missing, the
built-in is still found by its module path. Every failure is recorded, never
raised, so ``karni doctor`` can show it and everything else keeps working.
Loading (the import, calling the class or factory, reading ``name``) runs
inside an isolated call with the same deadline as ``detect``, and two
providers may not share a ``name``.

``KARNI_HISTORY_PROVIDERS`` (comma-separated names) limits discovery to the
providers it names; set but empty, it loads none. Tests and users can point
Karni at a chosen set of providers with it.
"""

from __future__ import annotations

import os
import sys
import time

from karni.agent.common.entry_points import EntryPoint, entry_points, load_value

__all__ = [
    "BUILTIN_PROVIDERS",
    "ENTRY_POINT_GROUP",
    "Discovery",
    "InstalledProvider",
    "LoadFailure",
    "discover",
    "ended_call",
    "provider_from_object",
    "provider_name",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from karni.agent.history.errors import ProviderLoadError
    from karni.agent.history.remembered import MarkerMemory

ENTRY_POINT_GROUP = "karni.history_providers"
"""The entry-point group providers register under."""

ALLOW_LIST_VARIABLE = "KARNI_HISTORY_PROVIDERS"

BUILTIN_PROVIDERS: dict[str, tuple[str, str]] = {
    "gigai-chronicle": (
        "karni.agent.history_chronicle:ChronicleProvider",
        "karni-history-chronicle",
    ),
}
"""Karni's own providers: name → (entry-point value, distribution that ships it)."""


class InstalledProvider:
    """A provider that loaded, with where it came from."""

    __slots__ = (
        "builtin",
        "distribution",
        "load_seconds",
        "name",
        "provider",
        "provider_name",
        "value",
        "version",
    )

    def __init__(
        self,
        name: str,
        provider: Any,
        value: str,
        distribution: str | None,
        version: str | None,
        builtin: bool,
        *,
        provider_name: str | None = None,
        load_seconds: float | None = None,
    ) -> None:
        """Record a loaded provider.

        Args:
            name: The entry-point name.
            provider: The provider object.
            value: The entry-point value (``module:attribute``).
            distribution: The distribution that registered it, if known.
            version: That distribution's version, if known.
            builtin: Whether this is Karni's own registration of the name.
            provider_name: The provider's own ``name``, read when it was loaded
                (the entry-point name when not given).
            load_seconds: How long importing, creating and naming it took.
        """
        self.name = name
        self.provider = provider
        self.value = value
        self.distribution = distribution
        self.version = version
        self.builtin = builtin
        self.provider_name = provider_name or name
        self.load_seconds = load_seconds

    def __repr__(self) -> str:
        return (
            f"InstalledProvider(name={self.name!r}, value={self.value!r}, "
            f"distribution={self.distribution!r}, version={self.version!r}, "
            f"builtin={self.builtin!r})"
        )


class LoadFailure:
    """A registered provider that could not be loaded, and why."""

    __slots__ = ("distribution", "error", "name", "value")

    def __init__(
        self, name: str, value: str, distribution: str | None, error: ProviderLoadError
    ) -> None:
        """Record a failure; ``error.__cause__`` holds the original exception, if any."""
        self.name = name
        self.value = value
        self.distribution = distribution
        self.error = error

    @property
    def message(self) -> str:
        """One line saying what failed and what to do."""
        return str(self.error)

    def __repr__(self) -> str:
        return f"LoadFailure(name={self.name!r}, value={self.value!r}, error={self.message!r})"


class Discovery:
    """What discovery found: loaded providers and load failures, both sorted by name."""

    __slots__ = ("failures", "providers")

    def __init__(self, providers: list[InstalledProvider], failures: list[LoadFailure]) -> None:
        """Hold the results."""
        self.providers = providers
        self.failures = failures

    def objects(self) -> list[Any]:
        """The provider objects, in name order."""
        return [installed.provider for installed in self.providers]


def _describe(value: str, distribution: str | None) -> str:
    return f"`{value}` ({distribution})" if distribution else f"`{value}`"


def provider_from_object(name: str, value: str, obj: Any, distribution: str | None = None) -> Any:
    """Turn what an entry point names into a provider object.

    A class is instantiated with no arguments, an object that already has the
    provider shape is used as is, and any other callable is called as a
    factory.

    Raises:
        ProviderImportError: Instantiating the class or calling the factory failed.
        NotAProviderError: The result lacks ``name``, ``detect`` or ``context``.
    """
    where = _describe(value, distribution)
    candidate = obj
    if isinstance(obj, type) or (callable(obj) and not _has_shape(obj)):
        try:
            candidate = obj()
        except Exception as error:
            # bench row "karni context --with-history FILE (no store)" runs without it
            from karni.agent.history.errors import ProviderImportError

            raise ProviderImportError(
                f"history provider `{name}` from {where}: calling it raised "
                f"{type(error).__name__}: {error}; fix or reinstall that package"
            ) from error
    missing = [
        attr for attr in ("detect", "context") if not callable(getattr(candidate, attr, None))
    ]
    provider_name = getattr(candidate, "name", None)
    if not isinstance(provider_name, str) or not provider_name.strip():
        missing.insert(0, "name")
    if missing:
        # bench row "karni context --with-history FILE (no store)" runs without it
        from karni.agent.history.errors import NotAProviderError

        raise NotAProviderError(
            f"history provider `{name}` from {where} is not a provider: it lacks "
            f"{', '.join(f'`{attr}`' for attr in missing)}; see 'Writing a provider' in the docs"
        )
    return candidate


def ended_call(installed: InstalledProvider, method: str, ended: int | None) -> LoadFailure | None:
    """A load failure for a provider whose call of ``method`` ended its process; else None.

    ``ended`` is the outcome's :attr:`~karni.agent.history.isolation.ProviderCallOutcome.ended`.
    Karni made the call in a child, so only that child ended; ``karni doctor``
    lists the provider with the failures to load, since no brief can come of it.
    """
    if ended is None:
        return None
    # bench row "karni context --with-history FILE (no store)" runs without it
    from karni.agent.history.errors import ProviderExitError

    how = ProviderExitError(ended).how
    where = _describe(installed.value, installed.distribution)
    message = (
        f"history provider `{installed.name}` from {where}: its `{method}` ended its process "
        f"({how}); Karni carried on without it: fix or reinstall that package"
    )
    error = ProviderExitError(ended, message)
    return LoadFailure(installed.name, installed.value, installed.distribution, error)


def provider_name(provider: Any) -> str | None:
    """The provider's ``name`` as one clean line, or None when it has none or it cannot be read.

    Reading ``name`` runs provider code (it may be a property): Karni reads
    it inside the isolated call, when a provider loads and in
    :func:`karni.agent.history.compose.named_providers`.
    """
    # bench row "karni context --with-history FILE (no store)" runs without it
    from karni.agent.common.sanitize import clean_line
    from karni.agent.common.text import plain_text

    try:
        name = plain_text(getattr(provider, "name", None))
    except Exception:
        return None
    if name is None:
        return None
    cleaned = clean_line(name.replace("\n", " ")).strip()
    return cleaned or None


def _has_shape(obj: Any) -> bool:
    return isinstance(getattr(obj, "name", None), str) and callable(getattr(obj, "detect", None))


def _allow_list() -> set[str] | None:
    raw = os.environ.get(ALLOW_LIST_VARIABLE)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def _builtin_importable(value: str) -> bool:
    # bench row "karni context --with-history FILE (no store)" runs without it
    import importlib.util

    module_name = value.partition(":")[0]
    try:
        return importlib.util.find_spec(module_name) is not None
    except (ImportError, ValueError):
        return False


def discover(
    group: str = ENTRY_POINT_GROUP,
    *,
    registered: list[EntryPoint] | None = None,
    project_root: str | os.PathLike[str] | None = None,
) -> Discovery:
    """Find and load every installed history provider.

    Args:
        group: The entry-point group to read.
        registered: Use these entry points instead of scanning ``sys.path``.
        project_root: Only the providers that might detect a store there are
            needed: one whose remembered store markers all are absent there
            is left unloaded (see :mod:`karni.agent.history.remembered`).

    Returns:
        The providers that loaded and the failures, each sorted by name. Never
        raises for anything a provider does.
    """
    points = entry_points(group) if registered is None else registered
    by_name: dict[str, list[EntryPoint]] = {}
    for point in points:
        by_name.setdefault(point.name, []).append(point)
    for name, (value, distribution) in BUILTIN_PROVIDERS.items():
        if name not in by_name and _builtin_importable(value):
            by_name[name] = [EntryPoint(group, name, value, distribution, "")]

    allowed = _allow_list()
    memory = _memory(group, registered)
    found: list[InstalledProvider] = []
    failures = _unknown_names(allowed, by_name)
    for name in sorted(by_name):
        if allowed is not None and name not in allowed:
            continue
        chosen, failure = _choose(name, by_name[name])
        if chosen is not None:
            installed, failure = _installed(name, chosen, memory, project_root)
            if installed is not None:
                found.append(installed)
        if failure is not None:
            failures.append(failure)
    if memory is not None:
        memory.save()
    providers, duplicates = _unique_names(found)
    failures.extend(duplicates)
    failures.sort(key=lambda failure: failure.name)
    # A provider left unloaded only took its place in the name check.
    return Discovery([found for found in providers if found.provider is not None], failures)


def _memory(group: str, registered: list[EntryPoint] | None) -> MarkerMemory | None:
    """The remembered markers, for the installed providers only."""
    if group != ENTRY_POINT_GROUP or registered is not None:
        return None
    # bench row "karni-historian brief FILE (historian store, 100,000 compartments)" runs without it
    from karni.agent.history.remembered import MarkerMemory

    return MarkerMemory.read()


def _installed(
    name: str,
    point: EntryPoint,
    memory: MarkerMemory | None,
    project_root: str | os.PathLike[str] | None,
) -> tuple[InstalledProvider | None, LoadFailure | None]:
    """The loaded provider, or a stand-in without one when its markers rule out a store."""
    if memory is not None and project_root is not None:
        label = memory.ruled_out(point, project_root)
        if label is not None:
            return _unloaded(name, point, label), None
    before = set(sys.modules)
    installed, failure = _load(name, point)
    if installed is not None and memory is not None:
        modules = [module for module in list(sys.modules) if module not in before]
        memory.learn(point, installed.provider, installed.provider_name, modules)
    return installed, failure


def _unloaded(name: str, point: EntryPoint, label: str) -> InstalledProvider:
    builtin = _is_builtin(point)
    version = point.version or None
    return InstalledProvider(
        name, None, point.value, point.distribution, version, builtin, provider_name=label
    )


def _unknown_names(
    allowed: set[str] | None, by_name: dict[str, list[EntryPoint]]
) -> list[LoadFailure]:
    """A failure for each name ``KARNI_HISTORY_PROVIDERS`` lists that is not installed."""
    unknown_names = sorted((allowed or set()) - set(by_name))
    if not unknown_names:
        return []
    # bench row "karni context --with-history FILE (no store)" runs without it
    from karni.agent.history.errors import UnknownProviderError

    return [
        LoadFailure(
            unknown,
            "",
            None,
            UnknownProviderError(
                f"`{ALLOW_LIST_VARIABLE}` names `{unknown}`, which is not installed; "
                f"install it or remove it from the list"
            ),
        )
        for unknown in unknown_names
    ]


def _load(name: str, point: EntryPoint) -> tuple[InstalledProvider | None, LoadFailure | None]:
    """Import, create and name one provider inside the isolated call, under its deadline.

    Whatever the provider's code does while loading (print, write to fd 1,
    raise ``SystemExit``, hang) stays inside the call: see
    ``docs/how-to/write-a-provider.md``.
    """
    # bench row "karni context --with-history FILE (no store)" runs without it
    from karni.agent.history.isolation import call_isolated, provider_timeout

    where = _describe(point.value, point.distribution)
    started = time.perf_counter()
    outcome = call_isolated(_load_inside, name, point.value, point.distribution)
    if outcome.ok:
        provider, provider_name = outcome.value
        installed = InstalledProvider(
            name,
            provider,
            point.value,
            point.distribution,
            point.version or None,
            _is_builtin(point),
            provider_name=provider_name,
            load_seconds=time.perf_counter() - started,
        )
        return installed, None
    # bench row "karni context --with-history FILE (no store)" runs without it
    from karni.agent.history.errors import ProviderImportError, ProviderLoadError

    if isinstance(outcome.error, ProviderLoadError):
        error = outcome.error
    elif outcome.timed_out:
        error = ProviderImportError(
            f"history provider `{name}` from {where} did not load within "
            f"{provider_timeout():g} s; fix or reinstall that package"
        )
    else:
        error = ProviderImportError(
            f"history provider `{name}` from {where} failed to load; fix or reinstall that package"
        )
    return None, LoadFailure(name, point.value, point.distribution, error)


def _load_inside(name: str, value: str, distribution: str | None) -> tuple[Any, str]:
    """Runs in the isolated call: every failure becomes a one-line :class:`ProviderLoadError`."""
    where = _describe(value, distribution)
    # The error classes are imported only on a failure: a provider that loads needs none.
    try:
        obj = load_value(value)
    except BaseException as error:  # in the call's own thread no Ctrl-C is real
        # bench row "karni context --with-history FILE (no store)" runs without it
        from karni.agent.history.errors import ProviderImportError

        raise ProviderImportError(
            f"history provider `{name}` from {where} failed to import: "
            f"{_one_line_error(error)}; fix or reinstall that package"
        ) from error
    try:
        provider = provider_from_object(name, value, obj, distribution)
        label = provider_name(provider)
    except BaseException as error:
        # bench row "karni context --with-history FILE (no store)" runs without it
        from karni.agent.history.errors import ProviderImportError, ProviderLoadError

        if isinstance(error, ProviderLoadError):
            raise
        raise ProviderImportError(
            f"history provider `{name}` from {where}: calling it raised "
            f"{_one_line_error(error)}; fix or reinstall that package"
        ) from error
    if label is None:
        # bench row "karni context --with-history FILE (no store)" runs without it
        from karni.agent.history.errors import NotAProviderError

        raise NotAProviderError(
            f"history provider `{name}` from {where} is not a provider: its `name` is not "
            f"one line of text; see 'Writing a provider' in the docs"
        )
    return provider, label


def _one_line_error(error: BaseException) -> str:
    # bench row "karni context --with-history FILE (no store)" runs without it
    from karni.agent.common.sanitize import clean_line
    from karni.agent.common.text import plain_text

    try:
        detail = plain_text(str(error)) or ""
    except Exception:
        detail = ""
    kind = plain_text(type(error).__name__) or "error"
    line = clean_line(" ".join(f"{kind}: {detail}".split()))
    return line.rstrip(": ")


def _unique_names(
    providers: list[InstalledProvider],
) -> tuple[list[InstalledProvider], list[LoadFailure]]:
    """The first provider of each ``name`` wins; a later one is a load failure naming both."""
    kept: dict[str, InstalledProvider] = {}
    duplicates: list[LoadFailure] = []
    for installed in providers:
        label = installed.provider_name or installed.name
        first = kept.get(label)
        if first is None:
            kept[label] = installed
            continue
        # bench row "karni context --with-history FILE (no store)" runs without it
        from karni.agent.history.errors import DuplicateProviderError

        error = DuplicateProviderError(
            f"history provider `{installed.name}` from "
            f"{_describe(installed.value, installed.distribution)} is named `{label}`, like "
            f"`{first.name}` from {_describe(first.value, first.distribution)}; provider names "
            f"must be unique: uninstall one of them or rename it"
        )
        duplicates.append(
            LoadFailure(installed.name, installed.value, installed.distribution, error)
        )
    return list(kept.values()), duplicates


def _is_builtin(point: EntryPoint) -> bool:
    builtin = BUILTIN_PROVIDERS.get(point.name)
    return builtin is not None and point.distribution == builtin[1]


def _choose(name: str, points: list[EntryPoint]) -> tuple[EntryPoint | None, LoadFailure | None]:
    """The entry point that wins for ``name``, or the failure when it is ambiguous."""
    others = [point for point in points if not _is_builtin(point)]
    candidates = others or points
    distinct: list[EntryPoint] = []
    for point in candidates:
        if all(point.value != kept.value for kept in distinct):
            distinct.append(point)
    if len(distinct) == 1:
        return distinct[0], None
    listed = " and ".join(_describe(point.value, point.distribution) for point in distinct)
    # bench row "karni context --with-history FILE (no store)" runs without it
    from karni.agent.history.errors import DuplicateProviderError

    error = DuplicateProviderError(
        f"history provider name `{name}` is registered more than once: {listed}; "
        f"uninstall one of them or rename its entry point"
    )
    first = distinct[0]
    return None, LoadFailure(name, first.value, first.distribution, error)
