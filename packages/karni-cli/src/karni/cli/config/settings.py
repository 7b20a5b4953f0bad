"""Karni's settings: where they live, which keys exist, and the value in effect.

Two files, both TOML: ``.karni/config.toml`` in the project (committed, for
the whole team) and ``$XDG_CONFIG_HOME/karni/config.toml`` (``--global``,
default ``~/.config``). The project file wins over the global one (and a
selected user profile), which wins over the default.

Every key is declared once, by the package that reads it, under the
``karni.settings`` entry points (karni-cli's own are in
:mod:`karni.cli.config.declared`); :func:`declared` loads them all, which only
``karni config`` and ``karni check`` do. Where the files live and how they
are read is karni-core's (:mod:`karni.agent.common.config`); the declaration
types and the validator are karni-core's too (:mod:`karni.agent.common.settings`).
"""

from __future__ import annotations

from karni.agent.common.config import PROJECT as PROJECT_SCOPE
from karni.agent.common.config import (
    PROJECT_CONFIG,
    USER,
    ConfigLayer,
    parse_config,
    read_config_text,
    user_config_path,
)
from karni.agent.common.config import project_config_path as path_in
from karni.agent.common.errors import ConfigFileError
from karni.cli.errors import KarniError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni.agent.common.config import ConfigLayer
    from karni.agent.common.settings import Kind, Setting
    from karni.agent.common.settings_registry import Declarations
    from karni.agent.common.settings_table import SettingsTable

__all__ = [
    "DEFAULT",
    "GLOBAL",
    "PROJECT",
    "PROJECT_CONFIG",
    "ConfigError",
    "declared",
    "global_config_path",
    "kind_of",
    "lookup",
    "parse",
    "project_config_path",
    "read_layers",
    "read_text",
    "resolve",
    "resolve_in_layers",
    "source_name",
]

PROJECT = "project"
GLOBAL = "global"
DEFAULT = "default"


class ConfigError(KarniError):
    """A settings file or a ``karni config`` argument is invalid; nothing was changed."""


_DECLARED: list[Declarations] = []


def declared() -> Declarations:
    """Every installed package's settings (loaded once per process)."""
    if not _DECLARED:
        # bench row "karni check" runs without it
        from karni.agent.common.settings_registry import declarations

        _DECLARED.append(declarations())
    return _DECLARED[0]


def _table() -> SettingsTable:
    return declared().table()


def lookup(key: str, table: SettingsTable | None = None) -> Setting:
    """The setting called ``key`` (``historian.expand_tools.Bash`` matches a ``*``).

    Raises:
        ConfigError: No such setting; the message lists what there is.
    """
    table = table or _table()
    setting = table.find(key)
    if setting is not None:
        return setting
    if table.is_table(key):
        keys = ", ".join(f"{key}.{name}" for name in table.known_under(key))
        raise ConfigError(f"`{key}` is a table of settings, not one; its settings: {keys}")
    parent = key.rpartition(".")[0]
    while parent and not table.is_table(parent):
        parent = parent.rpartition(".")[0]
    known = ", ".join(
        f"`{f'{parent}.' if parent else ''}{name}`" for name in table.known_under(parent)
    )
    raise ConfigError(
        f"unknown setting `{key}`; known settings{f' in `{parent}`' if parent else ''}: {known} "
        f"(every setting: docs/reference/configuration.md)"
    )


def kind_of(key: str, table: SettingsTable | None = None) -> tuple[Setting, Kind, str]:
    """The setting holding ``key``, the kind of ``key`` and the setting's own key.

    ``key`` is a setting (``historian.pi.model``) or a key of a table it holds
    (``historian.pi.model.base_url``).

    Raises:
        ConfigError: Neither.
    """
    # bench row "karni check" runs without it
    from karni.agent.common.settings import AnyOf, Table

    table = table or _table()
    parts = key.split(".")
    for cut in range(len(parts), 0, -1):
        setting = table.find(".".join(parts[:cut]))
        if setting is None:
            continue
        kind = setting.kind
        for name in parts[cut:]:
            options = kind.kinds if isinstance(kind, AnyOf) else (kind,)
            tables = [option for option in options if isinstance(option, Table)]
            if not tables or name not in tables[0].fields:
                lookup(key, table)  # raises, naming what there is
            kind = tables[0].fields[name].kind
        return setting, kind, ".".join(parts[:cut])
    lookup(key, table)
    raise AssertionError("lookup raises for an unknown key")  # pragma: no cover


def project_config_path(root: str) -> str:
    """The project's settings file."""
    return path_in(root)


def global_config_path() -> str:
    """``$XDG_CONFIG_HOME/karni/config.toml``; ``~/.config`` when unset or relative."""
    return user_config_path()


def source_name(scope: str) -> str:
    """How ``karni config`` names a layer: the user's file is ``global``."""
    return GLOBAL if scope == USER else scope


def read_text(path: str) -> str | None:
    """The settings file's text, newlines as written; None when it does not exist.

    Raises:
        ConfigError: It is not UTF-8, not a regular file, or unreadable.
    """
    try:
        return read_config_text(path)
    except ConfigFileError as error:
        raise ConfigError(str(error)) from None


def parse(path: str, text: str) -> dict[str, object]:
    """The file's text as a TOML document.

    Raises:
        ConfigError: It is not TOML.
    """
    try:
        return parse_config(path, text)
    except ConfigFileError as error:
        raise ConfigError(str(error)) from None


def read_layers(root: str | None, *, global_only: bool = False) -> list[ConfigLayer]:
    """The project's file (unless ``global_only``, or outside a project) and the user's.

    Both are read even when the project's decides, so a broken global file
    never goes unnoticed.

    Raises:
        ConfigError: A file is unreadable or not TOML.
    """
    files = [(USER, global_config_path())]
    if root is not None and not global_only:
        files.insert(0, (PROJECT_SCOPE, project_config_path(root)))
    layers = []
    for scope, path in files:
        text = read_text(path)
        layers.append(ConfigLayer(scope, path, {} if text is None else parse(path, text)))
    return layers


def resolve(
    key: str, root: str | None, *, global_only: bool = False, table: SettingsTable | None = None
) -> tuple[object, str, str]:
    """A setting's value, and where it came from.

    Returns:
        ``(value, source, path)``: source is ``project``, ``global``,
        ``profile NAME`` or ``default``; path is the file ("" for a default).
        A setting with no default that no file sets has the value None.

    Raises:
        ConfigError: Unknown key, an invalid file, or a value that is not
            what the setting takes (the message names the file).
    """
    table = table or _table()
    return resolve_in_layers(key, read_layers(root, global_only=global_only), table)


def resolve_in_layers(
    key: str, layers: list[ConfigLayer], table: SettingsTable
) -> tuple[object, str, str]:
    """:func:`resolve` over files already read."""
    # bench row "karni check" runs without it
    from karni.agent.common.settings_table import Problem
    from karni.agent.common.settings_table import resolve as resolve_in

    _, kind, _ = kind_of(key, table)
    found = resolve_in(table, layers, key)
    if found.path is None:
        return found.value, DEFAULT, ""
    problems = kind.problems(found.value, key)
    if problems:
        raise ConfigError(str(Problem(found.path, *problems[0])))
    return found.value, source_name(found.source), found.path
