"""Changing one setting in a TOML file by hand-editing one line, so everything else survives.

``karni config set`` changes only the ``key = value`` line (or adds one), so
comments, other keys and tables stay as the team wrote them. Each candidate
edit is re-read as TOML and must hold exactly the old settings plus the new
value before it replaces the file atomically.
"""

from __future__ import annotations

import os

from karni.cli.config.settings import ConfigError, lookup, parse, read_text

__all__ = ["set_value"]


def _key_lines(text: str, key: str) -> list[int]:
    """Indexes of lines that look like ``key = ...`` outside multi-line strings."""
    found = []
    in_string: str | None = None
    for index, line in enumerate(text.splitlines(keepends=True)):
        if in_string is None:
            name, sep, _ = line.partition("=")
            if sep and name.strip().strip("\"'") == key:
                found.append(index)
        for quotes in ('"""', "'''"):
            if (in_string in (None, quotes)) and line.count(quotes) % 2:
                in_string = None if in_string == quotes else quotes
    return found


def _replace_line(line: str, literal: str) -> str:
    """``line`` (``key = true  # why``) with its value replaced, comment and ending kept."""
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    name, _, rest = stripped.partition("=")
    body = rest.rstrip("\r\n")
    ending = rest[len(body) :]
    old = body.strip()
    comment = ""
    for word in ("true", "false"):
        if old.startswith(word):
            comment = old[len(word) :]
            break
    return f"{indent}{name.rstrip()} = {literal}{comment}{ending}"


def _candidates(text: str, key: str, value: bool) -> list[str]:
    """Edited versions of ``text`` to try, most natural first."""
    literal = "true" if value else "false"
    lines = text.splitlines(keepends=True)
    out = []
    for index in _key_lines(text, key):
        edited = list(lines)
        edited[index] = _replace_line(lines[index], literal)
        out.append("".join(edited))
    newline = "\r\n" if "\r\n" in text else "\n"
    new_line = f"{key} = {literal}{newline}"
    for index, line in enumerate(lines):
        if line.lstrip().startswith("["):  # top-level keys must come before the first table
            out.append("".join([*lines[:index], new_line, *lines[index:]]))
            break
    else:
        ended = text if not text or text.endswith("\n") else text + newline
        out.append(ended + new_line)
    out.append(new_line + text)
    return out


def _ignore_temporaries(folder: str, within: str) -> None:
    """Give a project's ``.karni/`` a ``.gitignore`` for temporary files of killed writes."""
    from karni.agent.common.files import TEMPORARY_PATTERN, write_atomic

    gitignore = os.path.join(folder, ".gitignore")
    if not os.path.lexists(gitignore):
        text = (
            f"# temporary files of an interrupted write (Karni removes them)\n{TEMPORARY_PATTERN}\n"
        )
        write_atomic(gitignore, text, within=within)


def set_value(path: str, key: str, value: bool, *, within: str | None = None) -> None:
    """Set ``key`` to ``value`` in the file at ``path``, keeping everything else.

    The folder is created when missing. The file is replaced atomically, and
    only after the edited text has been re-read as TOML and holds ``value``.
    With ``within`` (the project root), no folder below it may be a symlink.

    Raises:
        ConfigError: Unknown key, an invalid existing file, or a write failure.
    """
    lookup(key)
    text = read_text(path) or ""
    expected = {**parse(path, text, ignore=key), key: value}  # `set` may repair the key
    for edited in _candidates(text, key, value):
        try:
            if parse(path, edited) == expected:
                break
        except ConfigError:
            continue
    else:
        raise ConfigError(f"{path}: could not set `{key}` safely; edit the file by hand")
    from karni.agent.common.errors import UnsafePathError
    from karni.agent.common.files import make_folders, write_atomic

    try:
        make_folders(os.path.dirname(path), within=within)
        if within is not None:
            _ignore_temporaries(os.path.dirname(path), within)
        write_atomic(path, edited, within=within)
    except UnsafePathError as error:
        raise ConfigError(
            f"cannot write {path}: {error.strerror}; replace the link with a real file or folder"
        ) from None
    except OSError as error:
        raise ConfigError(f"cannot write {path}: {error.strerror}; check its permissions") from None
