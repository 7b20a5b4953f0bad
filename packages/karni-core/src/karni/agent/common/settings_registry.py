"""Collecting every package's settings through the ``karni.settings`` entry points.

A package declares its settings in a small module and names it in its
``pyproject.toml``::

    [project.entry-points."karni.settings"]
    my-history = "my_history.settings:SETTINGS"

The value names a sequence of :class:`~karni.agent.common.settings.Setting`
(or a function returning one). karni-core's own settings (``safe_directories``,
``profile``) are always included. Only ``karni config``, ``karni check``, the
reference generator and a provider checking its own files load declarations;
``karni context``, ``rules`` and ``hook`` never do. The entry points are found
by karni-core's own scanner (:mod:`karni.agent.common.entry_points`), never
``importlib.metadata``. A declaration module that fails to load is reported,
never raised, and two packages declaring the same name is reported too: the
first one found keeps it. The top-level tables of Karni's own packages are
known here even when their package is not installed
(:data:`KARNI_PACKAGE_TABLES`), so a team's committed table is not called
unknown on a teammate's machine without that package.
"""

from __future__ import annotations

from karni.agent.common.entry_points import entry_points, load_value
from karni.agent.common.settings import BOTH, USER, ListOf, Setting, Text
from karni.agent.common.settings_table import SettingsTable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from karni.agent.common.entry_points import EntryPoint
    from karni.agent.common.settings_table import Problem, SettingsTable

__all__ = [
    "CORE_SETTINGS",
    "ENTRY_POINT_GROUP",
    "KARNI_PACKAGE_TABLES",
    "Declarations",
    "absent_package",
    "declarations",
    "table_of",
]

ENTRY_POINT_GROUP = "karni.settings"
"""The entry-point group naming each package's settings."""


def _profile_name_problem(name: str) -> str | None:
    return "is not a profile name; name one, or remove `profile`" if not name.strip() else None


CORE_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "safe_directories",
        ListOf(Text(label="a folder")),
        "folders owned by another user that Karni may still use (a shared checkout)",
        default=[],
        scope=USER,
    ),
    Setting(
        "profile",
        Text(check=_profile_name_problem, label="a profile name"),
        "the user profile (`[profiles.NAME]` in the user file) whose settings apply",
        scope=BOTH,
        default_text="none",
    ),
)
"""karni-core's own settings; ``profiles.NAME.*`` follows from every ``profile=True`` setting."""

CORE_OWNER = "karni-core"

KARNI_PACKAGE_TABLES = {"historian": "karni-historian"}
"""Top-level tables of Karni's own packages → the package that declares them."""


class Declarations:
    """Every declared setting, and one line for each declaration that could not be used."""

    __slots__ = ("failures", "settings")

    def __init__(self, settings: list[Setting], failures: list[str]) -> None:
        self.settings = settings
        self.failures = failures

    def table(self) -> SettingsTable:
        """The settings as a :class:`~karni.agent.common.settings_table.SettingsTable`."""
        return SettingsTable(self.settings)


def _load(point: EntryPoint) -> list[Setting]:
    """The settings one entry point names; ValueError when it is not a list of settings."""
    obj: object = load_value(point.value)
    if callable(obj):
        obj = obj()
    items = list(obj) if isinstance(obj, list | tuple) else None
    if items is None or not all(isinstance(item, Setting) for item in items):
        raise ValueError("it is not a list of karni.agent.common.settings.Setting")
    return items


def _one_line(error: BaseException) -> str:
    detail = " ".join(str(error).split())
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__


def _add(
    found: dict[str, Setting], failures: list[str], settings: Iterable[Setting], owner: str
) -> None:
    for setting in settings:
        first = found.get(setting.name)
        if first is not None:
            failures.append(
                f"setting `{setting.name}` is declared by both {first.owner} and {owner}; "
                f"{owner}'s declaration is ignored: uninstall one of them"
            )
            continue
        setting.owner = owner
        found[setting.name] = setting


def declarations(registered: list[EntryPoint] | None = None) -> Declarations:
    """karni-core's settings and every installed package's.

    Args:
        registered: Use these entry points instead of scanning ``sys.path``.
    """
    found: dict[str, Setting] = {}
    failures: list[str] = []
    _add(found, failures, CORE_SETTINGS, CORE_OWNER)
    points = entry_points(ENTRY_POINT_GROUP) if registered is None else registered
    for point in sorted(points, key=lambda point: point.distribution):
        try:
            settings = _load(point)
        except Exception as error:
            failures.append(
                f"the settings of {point.distribution} (`{point.value}`) could not be read: "
                f"{_one_line(error)}; reinstall {point.distribution}"
            )
            continue
        _add(found, failures, settings, point.distribution)
    return Declarations(list(found.values()), failures)


def table_of(*groups: Iterable[Setting]) -> SettingsTable:
    """A table of karni-core's settings and ``groups`` (a package checking only its own)."""
    return SettingsTable([*CORE_SETTINGS, *(setting for group in groups for setting in group)])


def absent_package(problem: Problem) -> str | None:
    """The Karni package ``problem``'s table belongs to, when it is unknown only for lack of it.

    None for a known key set wrongly, or a key inside a table some installed
    package declares: only an unknown top-level table of one of
    :data:`KARNI_PACKAGE_TABLES` is told by its package's absence.
    """
    if not problem.unknown or "." in problem.key:
        return None
    return KARNI_PACKAGE_TABLES.get(problem.key)
