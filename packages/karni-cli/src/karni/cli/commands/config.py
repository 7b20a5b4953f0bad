"""``karni config get|set|unset|list|path [--global] [--json]``: read and change settings.

The project's ``.karni/config.toml`` (committed, team-wide) is the default
target; ``--global`` targets ``$XDG_CONFIG_HOME/karni/config.toml``. When
reading, the project file wins over a selected user profile and the global
file, which win over the default. Keys are dotted for tables
(``historian.claude_code.model``); every key is declared by the package that
reads it (see :mod:`karni.cli.config.settings` and
``docs/reference/configuration.md``). ``list --json`` prints
``{"settings": [{"key", "value", "source", "path", "scope", "declared_by"}]}``
(``source`` is ``project``, ``global``, ``profile NAME`` or ``default``;
``path`` is null for a default), a shape that stays stable.
"""

from __future__ import annotations

import os
import sys

from karni.agent.common.settings import PROJECT, USER, ValueTextError, toml_literal
from karni.agent.common.settings_table import MISSING, value_at
from karni.agent.common.terminal import did_you_mean
from karni.cli.config import settings
from karni.cli.config.editing import set_value, unset_value
from karni.cli.config.listing import print_list
from karni.cli.config.settings import ConfigError
from karni.cli.errors import ProjectNotFoundError, UsageError
from karni.cli.helptext import write_help
from karni.cli.options import parse
from karni.cli.project import find_project_root

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni.agent.common.settings import Kind, Setting

__all__ = ["SUMMARY", "USAGE", "run"]

SUMMARY = "get, set, unset or list settings (.karni/config.toml, or --global)"

USAGE = "usage: karni config get|set|unset|list|path [--global] [--json] [KEY] [VALUE]"

FLAGS = {"global": ("--global",), "json": ("--json",), "help": ("-h", "--help")}

HELP = f"""{USAGE}

  karni config get KEY         print the value in effect
  karni config set KEY VALUE   write it, after checking it is what KEY takes
  karni config unset KEY       remove it from the file (the default applies again)
  karni config list            every setting that is set or has a default, its
                               value and where it came from
  karni config path            print the settings file's path

Settings live in .karni/config.toml in the project (committed, the default
target) and in $XDG_CONFIG_HOME/karni/config.toml (--global; ~/.config when
unset). The project file wins over the global one (and a selected profile),
which wins over the default. Keys are dotted for tables, e.g.
historian.claude_code.model. `set` and `unset` keep the file's comments and
order. Values: true/false (also yes/no, on/off, 1/0), numbers, strings, and
TOML arrays or inline tables ('["a/b", "c/d"]', '{{model = "a/b"}}'); a list
may also be given as a,b,c. Some keys are yours alone and need --global:
safe_directories, profiles, and a model entry's base_url and api_key_env
(a project never chooses where your keys and transcripts go).

Every setting, its type, default and scope: docs/reference/configuration.md.

options:
  --global    read or write the global settings file only
  --json      with list: one JSON object, {{"settings": [{{"key", "value",
              "source", "path", "scope", "declared_by"}}]}}
  -h, --help  show this help and exit

Exit status: 0 done, 1 a file or value is invalid, 2 usage error.
"""

_ARGUMENTS = {"get": 1, "set": 2, "unset": 1, "list": 0, "path": 0}
_SHAPES = {
    "get": "KEY",
    "set": "KEY VALUE",
    "unset": "KEY",
    "list": "no arguments",
    "path": "no arguments",
}


def _root_or_none() -> str | None:
    try:
        return find_project_root()
    except ProjectNotFoundError:
        return None


def run(argv: list[str]) -> int:
    """Run ``karni config``."""
    flags, positionals = parse(argv, "karni config", FLAGS, USAGE)
    if flags["help"]:
        write_help(HELP)
        return 0
    action, arguments = _action(positionals)
    global_only = flags["global"]
    if flags["json"] and action != "list":
        raise UsageError(f"--json goes with `karni config list`, not `{action}`; {USAGE}")
    if action == "list":
        return print_list(_root_or_none(), global_only=global_only, as_json=flags["json"])
    if action == "get":
        return _get(arguments[0], global_only=global_only)
    if action == "path":
        sys.stdout.write(_target(None, global_only=global_only)[0] + "\n")
        return 0
    return _change(action, arguments, global_only=global_only)


def _action(positionals: list[str]) -> tuple[str, list[str]]:
    """The action and its arguments, checked against what each action takes."""
    if not positionals:
        raise UsageError(f"`karni config` needs an action: get, set, unset, list or path; {USAGE}")
    action, arguments = positionals[0], positionals[1:]
    expected = _ARGUMENTS.get(action)
    if expected is None:
        hint = did_you_mean(action, list(_ARGUMENTS))
        raise UsageError(f"unknown action `{action}` for `karni config`{hint}; {USAGE}")
    if len(arguments) != expected:
        raise UsageError(f"`karni config {action}` takes {_SHAPES[action]}; {USAGE}")
    return action, arguments


def _get(key: str, *, global_only: bool) -> int:
    """``karni config get KEY``: the value in effect, as TOML writes it."""
    root = None if global_only else _root_or_none()
    value, _, _ = settings.resolve(key, root, global_only=global_only)
    if value is None:
        sys.stdout.write("\n")  # no default and not set: an empty line, exit 0
        return 0
    sys.stdout.write(_plain(value, toml_literal) + "\n")
    return 0


def _plain(value: object, literal: object) -> str:
    """A string as itself (``get`` output is for scripts); anything else as TOML."""
    return value if isinstance(value, str) else literal(value)  # type: ignore[operator]


def _target(key: str | None, *, global_only: bool) -> tuple[str, str | None]:
    """The file ``set``/``unset``/``path`` acts on, and the project root it must stay in."""
    if global_only:
        return settings.global_config_path(), None
    root = _root_or_none()
    if root is None:
        what = f"to change `{key}` in" if key else "for"
        raise settings.ConfigError(
            f"no Karni project at or above {os.getcwd()} (looked for manage.py or "
            f"karni.rules.py), so there is no .karni/config.toml {what}; "
            f"run it inside a project, or pass --global"
        )
    return settings.project_config_path(root), root


def _check_scope(setting: Setting, key: str, *, global_only: bool) -> None:
    if setting.scope == USER and not global_only:
        raise ConfigError(
            f"`{key}` can be set only in your own settings, never a project's; "
            f"pass --global: `karni config set --global {key} ...`"
        )
    if setting.scope == PROJECT and global_only:
        raise ConfigError(
            f"`{key}` can be set only in a project's .karni/config.toml; drop --global"
        )


def _check_field_scope(setting: Setting, setting_key: str, key: str, value: object) -> None:
    """Refuse a project file a key only the user may set inside a table (a model's ``base_url``)."""
    inner_names = key[len(setting_key) + 1 :].split(".") if key != setting_key else []
    whole = value
    for name in reversed(inner_names):  # historian.pi.model.base_url: {"base_url": value}
        whole = {name: whole}
    inner = setting.kind.user_only(whole, setting_key)
    if inner:
        raise ConfigError(
            f"`{inner[0]}` can be set only in your own settings, never a project's; "
            f"pass --global (or set the whole entry in a profile); nothing was changed"
        )


def _change(action: str, arguments: list[str], *, global_only: bool) -> int:
    """``set KEY VALUE`` or ``unset KEY`` in the project's file, or the global one."""
    key = arguments[0]
    setting, kind, setting_key = settings.kind_of(key)
    _check_scope(setting, key, global_only=global_only)
    path, root = _target(key, global_only=global_only)
    if action == "unset":
        removed = unset_value(path, key, within=root)
        sys.stdout.write(f"unset {key} ({path})\n" if removed else f"{key} is not set in {path}\n")
        return 0

    value = _value(key, kind, arguments[1], path)
    if not global_only:
        _check_field_scope(setting, setting_key, key, value)
    if setting_key != key:
        _check_whole(setting, setting_key, key, value, path)
    set_value(path, key, value, within=root)
    sys.stdout.write(f"{key} = {toml_literal(value)} ({path})\n")
    return 0


def _value(key: str, kind: Kind, text: str, path: str) -> object:
    """``text`` as a value of ``kind``, checked; one line naming the file and the key when not."""
    try:
        value = kind.parse(text)
    except ValueTextError as error:
        raise ConfigError(
            f"{path}: `{key}` {error}; nothing was changed (every key's values: "
            f"docs/reference/configuration.md)"
        ) from None
    problems = kind.problems(value, key)
    if problems:
        at, message = problems[0]
        raise ConfigError(f"{path}: `{at}` {message}; nothing was changed")
    return value


def _check_whole(setting: Setting, setting_key: str, key: str, value: object, path: str) -> None:
    """A key inside a table-valued setting: the table, once changed, must still be valid."""
    current = value_at(settings.parse(path, settings.read_text(path) or ""), setting_key)
    if current is MISSING:
        current = {}
    if not isinstance(current, dict):
        raise ConfigError(
            f"{path}: `{setting_key}` is {current!r}, not a table; set `{setting_key}` as an "
            f"inline table, e.g. `karni config set {setting_key} '{{model = \"...\"}}'`"
        )
    changed = dict(current)
    inner = key[len(setting_key) + 1 :].split(".")
    target = changed
    for name in inner[:-1]:
        target = target.setdefault(name, {})
    target[inner[-1]] = value
    problems = setting.kind.problems(changed, setting_key)
    if problems:
        at, message = problems[0]
        raise ConfigError(f"{path}: `{at}` {message}; nothing was changed")
