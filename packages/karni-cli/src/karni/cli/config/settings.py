"""Karni's settings: where they live, what they may hold, and editing them in place.

Two files, both TOML: ``.karni/config.toml`` in the project (committed, for
the whole team) and ``$XDG_CONFIG_HOME/karni/config.toml`` (``--global``,
default ``~/.config``). The project file wins over the global one, which wins
over the default. Every key is declared once, in :data:`SETTINGS`.

Where the files live and how they are read is karni-core's
(:mod:`karni.agent.common.config`), shared with every Karni package. Writing
changes only the one ``key = value`` line (or appends it), so comments and
other keys survive, and the result is re-read as TOML before it atomically
replaces the file.
"""

from __future__ import annotations

from karni.agent.common.config import PROJECT_CONFIG
from karni.cli.errors import KarniError

__all__ = [
    "GLOBAL",
    "PROJECT",
    "PROJECT_CONFIG",
    "SETTINGS",
    "ConfigError",
    "Setting",
    "global_config_path",
    "lookup",
    "parse",
    "parse_bool",
    "project_config_path",
    "read_config",
    "read_text",
    "resolve",
]

PROJECT = "project"
GLOBAL = "global"
DEFAULT = "default"


class ConfigError(KarniError):
    """A settings file or a ``karni config`` argument is invalid; nothing was changed."""


class Setting:
    """One setting: its name, default and what it is for. Every setting is a boolean today."""

    __slots__ = ("default", "help", "name")

    def __init__(self, name: str, default: bool, help: str) -> None:
        """Declare a setting."""
        self.name = name
        self.default = default
        self.help = help


SETTINGS: dict[str, Setting] = {
    setting.name: setting
    for setting in (
        Setting(
            "suggest_tools",
            True,
            "offer the one-time tip about prompt-history tools (karni doctor, karni check)",
        ),
    )
}
"""Every setting Karni knows, by name. Adding a setting is one entry here."""

TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
FALSE_WORDS = frozenset({"false", "no", "off", "0"})


def lookup(key: str) -> Setting:
    """The setting called ``key``.

    Raises:
        ConfigError: No such setting.
    """
    setting = SETTINGS.get(key)
    if setting is None:
        known = ", ".join(f"`{name}`" for name in SETTINGS)
        raise ConfigError(f"unknown setting `{key}`; known settings: {known}")
    return setting


def parse_bool(key: str, text: str) -> bool:
    """``text`` as a boolean: true/false, yes/no, on/off or 1/0, in any case.

    Raises:
        ConfigError: Anything else.
    """
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ConfigError(
        f"`{key}` takes true or false (also yes/no, on/off, 1/0), not `{text}`; "
        f"e.g. `karni config set {key} false`"
    )


def project_config_path(root: str) -> str:
    """The project's settings file."""
    from karni.agent.common.config import project_config_path as path_in

    return path_in(root)


def global_config_path() -> str:
    """``$XDG_CONFIG_HOME/karni/config.toml``; ``~/.config`` when unset or relative."""
    from karni.agent.common.config import user_config_path

    return user_config_path()


def read_text(path: str) -> str | None:
    """The settings file's text, newlines as written; None when it does not exist.

    Raises:
        ConfigError: It is not UTF-8, not a regular file, or unreadable.
    """
    from karni.agent.common.config import read_config_text
    from karni.agent.common.errors import ConfigFileError

    try:
        return read_config_text(path)
    except ConfigFileError as error:
        raise ConfigError(str(error)) from None


def parse(path: str, text: str, ignore: str = "") -> dict[str, object]:
    """The file's top-level table; known settings must hold a TOML boolean.

    Keys Karni does not know are kept and ignored: a newer Karni, or the team,
    may have put them there.
    """
    from karni.agent.common.config import parse_config
    from karni.agent.common.errors import ConfigFileError

    try:
        data = parse_config(path, text)
    except ConfigFileError as error:
        raise ConfigError(str(error)) from None
    for key in SETTINGS:
        if key in data and key != ignore and not isinstance(data[key], bool):
            raise ConfigError(
                f"{path}: `{key}` must be a TOML boolean (true or false), not {data[key]!r}; "
                f"write `{key} = false` or run `karni config set {key} false`"
            )
    return data


def read_config(path: str) -> dict[str, bool]:
    """Karni's settings in one file; empty when the file does not exist.

    Raises:
        ConfigError: The file is unreadable or not TOML, or a setting in it is
            not a TOML boolean.
    """
    text = read_text(path)
    if text is None:
        return {}
    data = parse(path, text)
    # `_parse` has checked that every setting present is a bool; `isinstance` says so to mypy.
    return {key: value for key in SETTINGS if isinstance(value := data.get(key), bool)}


def resolve(key: str, root: str | None, *, global_only: bool = False) -> tuple[bool, str, str]:
    """A setting's value, and where it came from.

    Args:
        key: The setting.
        root: The project root, or None outside a project.
        global_only: Ignore the project file (``karni config get --global``).

    Returns:
        ``(value, source, path)``: source is ``project``, ``global`` or
        ``default``; path is the file it came from ("" for the default).

    Raises:
        ConfigError: Unknown key, or an invalid file: both files are read even
            when the project's decides, so a broken global file never goes unnoticed.
    """
    setting = lookup(key)
    files = [(GLOBAL, global_config_path())]
    if root is not None and not global_only:
        files.insert(0, (PROJECT, project_config_path(root)))
    found = [(source, path, read_config(path)) for source, path in files]
    for source, path, values in found:
        if key in values:
            return values[key], source, path
    return setting.default, DEFAULT, ""
