"""``karni config get|set|list [--global] [--json] [KEY] [VALUE]``: read and change settings.

The project's ``.karni/config.toml`` (committed, team-wide) is the default
target; ``--global`` targets ``$XDG_CONFIG_HOME/karni/config.toml``. When
reading, the project file wins over the global one, which wins over the
default. See :mod:`karni.cli.config.settings` for the keys and the file rules.
``list --json`` prints ``{"settings": [{"key", "value", "source", "path"}]}``
(``source`` is ``project``, ``global`` or ``default``; ``path`` is null for a
default), a shape that stays stable.
"""

from __future__ import annotations

import os
import sys

__all__ = ["SUMMARY", "USAGE", "run"]

SUMMARY = "get, set or list settings (.karni/config.toml, or --global)"

USAGE = "usage: karni config get|set|list [--global] [--json] [KEY] [VALUE]"

FLAGS = {"global": ("--global",), "json": ("--json",), "help": ("-h", "--help")}


def _help() -> str:
    from karni.cli.config.settings import SETTINGS

    keys = "\n".join(
        f"  {s.name} (default {'true' if s.default else 'false'})\n      {s.help}"
        for s in SETTINGS.values()
    )
    return f"""{USAGE}

  karni config get KEY         print the value in effect
  karni config set KEY VALUE   write it (true/false, yes/no, on/off, 1/0)
  karni config list            every setting, its value and where it came from

Settings live in .karni/config.toml in the project (committed, the default
target) and in $XDG_CONFIG_HOME/karni/config.toml (--global; ~/.config when
unset). The project file wins over the global one, which wins over the default.
`set` keeps the file's comments and other keys.

settings:
{keys}

options:
  --global    read or write the global settings file only
  --json      with list: one JSON object, {{"settings": [{{"key", "value",
              "source", "path"}}]}}
  -h, --help  show this help and exit
"""


def _root_or_none() -> str | None:
    from karni.cli.errors import ProjectNotFoundError
    from karni.cli.project import find_project_root

    try:
        return find_project_root()
    except ProjectNotFoundError:
        return None


def _where(source: str, path: str) -> str:
    return "default" if source == "default" else f"{source}: {path}"


def _literal(value: bool) -> str:
    return "true" if value else "false"


def run(argv: list[str]) -> int:
    """Run ``karni config``."""
    from karni.cli.options import parse

    flags, positionals = parse(argv, "karni config", FLAGS, USAGE)
    if flags["help"]:
        from karni.cli.helptext import write_help

        write_help(_help())
        return 0
    action, arguments = _action(positionals)
    if flags["json"] and action != "list":
        from karni.cli.errors import UsageError

        raise UsageError(f"--json goes with `karni config list`, not `{action}`; {USAGE}")
    if flags["json"]:
        return _list_json(global_only=flags["global"])
    if action == "set":
        return _set(*arguments, global_only=flags["global"])
    return _show(action, arguments, global_only=flags["global"])


def _action(positionals: list[str]) -> tuple[str, list[str]]:
    """The action and its arguments, checked against what each action takes."""
    from karni.cli.errors import UsageError

    if not positionals:
        raise UsageError(f"`karni config` needs an action: get, set or list; {USAGE}")
    action, arguments = positionals[0], positionals[1:]
    expected = {"get": 1, "set": 2, "list": 0}.get(action)
    if expected is None:
        raise UsageError(f"unknown action `{action}` for `karni config`; {USAGE}")
    if len(arguments) != expected:
        shape = {"get": "KEY", "set": "KEY VALUE", "list": "no arguments"}[action]
        raise UsageError(f"`karni config {action}` takes {shape}; {USAGE}")
    return action, arguments


def _set(key: str, text: str, *, global_only: bool) -> int:
    """``karni config set KEY VALUE``: write the project's file, or the global one."""
    from karni.cli.config import settings
    from karni.cli.config.editing import set_value

    settings.lookup(key)
    value = settings.parse_bool(key, text)
    root = None if global_only else _root_or_none()
    if global_only:
        path = settings.global_config_path()
    elif root is None:
        raise settings.ConfigError(
            f"no Karni project at or above {os.getcwd()} (looked for manage.py or "
            f"karni.rules.py), so there is no .karni/config.toml to set `{key}` in; "
            f"run it inside a project, or pass --global"
        )
    else:
        path = settings.project_config_path(root)
    set_value(path, key, value, within=root)
    sys.stdout.write(f"{key} = {_literal(value)} ({path})\n")
    return 0


def _show(action: str, arguments: list[str], *, global_only: bool) -> int:
    """``karni config get KEY`` (the value) or ``list`` (every key, value and source)."""
    from karni.cli.config import settings

    root = None if global_only else _root_or_none()
    keys = [arguments[0]] if action == "get" else list(settings.SETTINGS)
    lines = []
    for key in keys:
        value, source, path = settings.resolve(key, root, global_only=global_only)
        if action == "get":
            lines.append(_literal(value))
        else:
            lines.append(f"{key} = {_literal(value)} ({_where(source, path)})")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _list_json(*, global_only: bool) -> int:
    """``karni config list --json``: every key, its value, and where the value came from."""
    import json

    from karni.cli.config import settings

    root = None if global_only else _root_or_none()
    rows = []
    for key in settings.SETTINGS:
        value, source, path = settings.resolve(key, root, global_only=global_only)
        rows.append(
            {
                "key": key,
                "value": value,
                "source": source,
                "path": None if source == "default" else path,
            }
        )
    sys.stdout.write(json.dumps({"settings": rows}, indent=2) + "\n")
    return 0
