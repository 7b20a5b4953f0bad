"""Where Karni's configuration lives, and the one reader of its TOML files.

Two configuration files, both TOML: the project's ``.karni/config.toml``
(committed, for the whole team) and the user's
``$XDG_CONFIG_HOME/karni/config.toml`` (default ``~/.config``). The project's
file wins over the user's, key by key. As the XDG Base Directory
specification says, a relative ``XDG_CONFIG_HOME`` is ignored. Where caches
live is :mod:`karni.agent.common.cache`'s (:func:`cache_dir` is re-exported
here). :mod:`tomllib` is imported only when a file's text was never parsed
before (:mod:`karni.agent.common.config_cache`).
"""

from __future__ import annotations

import os

from karni.agent.common.cache import cache_dir
from karni.agent.common.errors import ConfigFileError, PathError
from karni.agent.common.files import read_regular_file

__all__ = [
    "MAX_CONFIG_BYTES",
    "PROJECT",
    "PROJECT_CONFIG",
    "USER",
    "ConfigLayer",
    "cache_dir",
    "config_layers",
    "merged_table",
    "parse_config",
    "project_config_path",
    "read_config",
    "read_config_text",
    "table",
    "user_config_dir",
    "user_config_path",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PROJECT_CONFIG = ".karni/config.toml"
"""The project's configuration file, relative to the project root."""

PROJECT = "project"
USER = "user"

MAX_CONFIG_BYTES = 1 << 20
"""The largest configuration file Karni reads (1 MiB)."""


def _xdg_home(variable: str, default: str) -> str:
    base = os.environ.get(variable, "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), default)
    return base


def user_config_dir() -> str:
    """``$XDG_CONFIG_HOME/karni``; ``~/.config/karni`` when the variable is unset or relative."""
    return os.path.join(_xdg_home("XDG_CONFIG_HOME", ".config"), "karni")


def user_config_path() -> str:
    """The user's configuration file, ``config.toml`` in :func:`user_config_dir`."""
    return os.path.join(user_config_dir(), "config.toml")


def project_config_path(project_root: str | os.PathLike[str]) -> str:
    """The project's configuration file, ``.karni/config.toml`` under ``project_root``."""
    return os.path.join(os.fspath(project_root), *PROJECT_CONFIG.split("/"))


def read_config_text(path: str) -> str | None:
    """The text of the configuration file at ``path``, newlines as written; None when missing.

    Raises:
        ConfigFileError: The file is not UTF-8, not a regular file, too large
            or unreadable.
    """
    try:
        data = read_regular_file(path, MAX_CONFIG_BYTES)
    except FileNotFoundError:
        return None
    except PathError as error:
        raise ConfigFileError(f"{error.strerror}; replace it with a TOML file", path) from None
    except OSError as error:
        raise ConfigFileError(
            f"cannot read {path}: {error.strerror or error}; check its permissions", path
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigFileError(f"{path} is not UTF-8 text; save it as UTF-8", path) from None


def parse_config(path: str, text: str) -> dict[str, Any]:
    """``text`` (read from ``path``) as a TOML document.

    A text parsed before is read from :mod:`karni.agent.common.config_cache`
    instead, without importing :mod:`tomllib`.

    Raises:
        ConfigFileError: It is not valid TOML.
    """
    # bench row "karni check" runs without it
    from karni.agent.common.config_cache import cached_document, remember_document

    document = cached_document(path, text)
    if document is not None:
        return document
    # bench row "karni check" runs without it
    import tomllib

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigFileError(
            f"{path} is not valid TOML ({error}); correct it there", path
        ) from None
    remember_document(path, text, document)
    return document


def read_config(path: str) -> dict[str, Any]:
    """The TOML document at ``path``; empty when the file does not exist.

    Raises:
        ConfigFileError: See :func:`read_config_text` and :func:`parse_config`.
    """
    text = read_config_text(path)
    return {} if text is None else parse_config(path, text)


class ConfigLayer:
    """One configuration file as read: its scope (``project`` or ``user``), path and document."""

    __slots__ = ("data", "path", "scope")

    def __init__(self, scope: str, path: str, data: dict[str, Any]) -> None:
        self.scope = scope
        self.path = path
        self.data = data

    def __repr__(self) -> str:
        return f"ConfigLayer({self.scope!r}, {self.path!r})"


def config_layers(project_root: str | os.PathLike[str] | None) -> list[ConfigLayer]:
    """The project's and the user's configuration, the winning one first.

    Both files are read even when the project's would decide, so a broken
    user file never goes unnoticed. A missing file is an empty layer.

    Args:
        project_root: The project, or None outside one (the user's file only).

    Raises:
        ConfigFileError: A file is unreadable or not TOML.
    """
    paths = [(USER, user_config_path())]
    if project_root is not None:
        paths.insert(0, (PROJECT, project_config_path(project_root)))
    return [ConfigLayer(scope, path, read_config(path)) for scope, path in paths]


def table(layer: ConfigLayer, name: str) -> dict[str, Any]:
    """The ``[name]`` table of one layer; empty when absent.

    Raises:
        ConfigFileError: ``name`` is there but is not a table.
    """
    value = layer.data.get(name, {})
    if not isinstance(value, dict):
        raise ConfigFileError(
            f"`{name}` in {layer.path} must be a table; write [{name}]", layer.path
        )
    return value


def merged_table(project_root: str | os.PathLike[str] | None, name: str) -> dict[str, Any]:
    """The ``[name]`` table with the project's keys over the user's (one level deep).

    Raises:
        ConfigFileError: A file is unreadable or not TOML, or ``name`` is not a table.
    """
    merged: dict[str, Any] = {}
    for layer in reversed(config_layers(project_root)):
        merged.update(table(layer, name))
    return merged
