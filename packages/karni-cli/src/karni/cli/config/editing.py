"""Changing one setting in a TOML file, keeping its comments, order and layout.

``karni config set`` and ``unset`` edit the file through ``tomlkit`` (imported
only here, so only ``karni config`` pays for it): the one key changes,
everything else stays as the team wrote it. A missing table is added
(``[historian.claude_code]``). The edited text is re-read as TOML and must
hold exactly the old settings with the one change before it replaces the
file atomically, never through a symlink.
"""

from __future__ import annotations

import copy
import os

from karni.agent.common.errors import UnsafePathError
from karni.agent.common.files import (
    TEMPORARY_PATTERN,
    check_writable,
    make_folders,
    write_atomic,
)
from karni.cli.config.settings import ConfigError, parse, read_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["set_value", "unset_value"]


def _item(value: Any) -> Any:
    """``value`` as a tomlkit item: tables inline, so one setting stays one line."""
    import tomlkit

    if isinstance(value, dict):
        table = tomlkit.inline_table()
        for key, item in value.items():
            table[key] = _item(item)
        return table
    if isinstance(value, list):
        array = tomlkit.array()
        array.extend(_item(item) for item in value)
        return array
    return value


def _parent(document: Any, parts: list[str], path: str, *, create: bool) -> Any:
    """The table holding the last of ``parts``; None when it is missing and not ``create``."""
    import tomlkit

    container = document
    for depth, name in enumerate(parts[:-1]):
        if name not in container:
            if not create:
                return None
            last = depth == len(parts) - 2
            container[name] = tomlkit.table(is_super_table=not last)
        container = container[name]
        if not isinstance(container, dict):
            where = ".".join(parts[: depth + 1])
            raise ConfigError(
                f"{path}: `{where}` holds a value, not a table; set `{where}` itself "
                f"(as a TOML table) or edit the file by hand"
            )
    return container


def _respell_inline(document: Any, parts: list[str]) -> None:
    """Rewrite an edited inline table whole, so it reads ``{a = 1, b = 2}`` as we write them."""
    import tomlkit.items

    container = document
    for name in parts[:-1]:
        if name not in container:
            return
        item = container[name]
        if isinstance(item, tomlkit.items.InlineTable):
            container[name] = _item(item.unwrap())
            return
        container = item


def _expected(data: dict[str, Any], parts: list[str], value: Any) -> dict[str, Any]:
    """``data`` with ``parts`` set to ``value`` (or removed when ``value`` is None)."""
    result = copy.deepcopy(data)
    container = result
    for name in parts[:-1]:
        container = container.setdefault(name, {})
    if value is None:
        container.pop(parts[-1], None)
    else:
        container[parts[-1]] = value
    return result


def _keep_newlines(original: str, edited: str) -> str:
    """``edited`` with the original's CRLF line endings where tomlkit wrote LF."""
    if "\r\n" not in original:
        return edited
    return edited.replace("\r\n", "\n").replace("\n", "\r\n")


def _edit(path: str, key: str, value: Any, within: str | None) -> bool:
    """Set (or, with None, remove) ``key``; whether the file changed."""
    import tomlkit

    text = read_text(path) or ""
    data = parse(path, text)
    parts = key.split(".")
    document = tomlkit.parse(text)
    parent = _parent(document, parts, path, create=value is not None)
    if value is None:
        if parent is None or parts[-1] not in parent:
            return False
        del parent[parts[-1]]
    else:
        parent[parts[-1]] = _item(value)
    _respell_inline(document, parts)
    edited = _keep_newlines(text, tomlkit.dumps(document))
    if edited and not edited.endswith(("\n", "\r\n")):
        edited += "\r\n" if "\r\n" in text else "\n"
    try:
        same = parse(path, edited) == _expected(data, parts, value)
    except ConfigError:
        same = False
    if not same:
        raise ConfigError(f"{path}: could not change `{key}` safely; edit the file by hand")
    _write(path, edited, within)
    return True


def _ignore_temporaries(folder: str, within: str) -> None:
    """Give a project's ``.karni/`` a ``.gitignore`` for temporary files of killed writes."""
    gitignore = os.path.join(folder, ".gitignore")
    if not os.path.lexists(gitignore):
        text = (
            f"# temporary files of an interrupted write (Karni removes them)\n{TEMPORARY_PATTERN}\n"
        )
        write_atomic(gitignore, text, within=within)


def _write(path: str, text: str, within: str | None) -> None:
    try:
        check_writable(path, within=within)  # a refusal writes nothing, not even the .gitignore
        make_folders(os.path.dirname(path), within=within)
        if within is not None:
            _ignore_temporaries(os.path.dirname(path), within)
        write_atomic(path, text, within=within)
    except UnsafePathError as error:
        raise ConfigError(
            f"cannot write {path}: {error.strerror}; replace the link with a real file or folder"
        ) from None
    except OSError as error:
        raise ConfigError(f"cannot write {path}: {error.strerror}; check its permissions") from None


def set_value(path: str, key: str, value: object, *, within: str | None = None) -> None:
    """Set the dotted ``key`` to ``value`` in the file at ``path``, keeping everything else.

    The folder is created when missing. With ``within`` (the project root), no
    folder below it may be a symlink.

    Raises:
        ConfigError: An invalid existing file, a key the file holds as a
            value rather than a table, or a write failure.
    """
    _edit(path, key, value, within)


def unset_value(path: str, key: str, *, within: str | None = None) -> bool:
    """Remove the dotted ``key`` from the file at ``path``; False when it was not there.

    Raises:
        ConfigError: See :func:`set_value`.
    """
    if read_text(path) is None:
        return False
    return _edit(path, key, None, within)
