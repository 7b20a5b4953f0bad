"""Installing Karni's hooks into a harness, removing them, and reporting where they are.

Where each harness keeps its hooks, by scope (see ``docs/hooks.md``):

- Claude Code: ``local`` ``.claude/settings.local.json`` (personal, the
  default), ``project`` ``.claude/settings.json`` (the team's), ``user``
  ``~/.claude/settings.json`` (or ``$CLAUDE_CONFIG_DIR``).
- OpenCode: ``project`` ``.opencode/plugins/`` (the default), ``user``
  ``~/.config/opencode/plugins/`` (or ``$XDG_CONFIG_HOME``).
- Pi: ``project`` ``.pi/extensions/`` (the default), ``user``
  ``~/.pi/agent/extensions/`` (or ``$PI_CODING_AGENT_DIR``).
- Codex: ``project`` ``.codex/hooks.json`` (the default), ``user``
  ``~/.codex/hooks.json`` (or ``$CODEX_HOME``).
- Gemini CLI: ``project`` ``.gemini/settings.json`` (the default), ``user``
  ``~/.gemini/settings.json`` (``$GEMINI_CLI_HOME/.gemini``).
- Aider has no hooks (:data:`HOOKLESS`): ``status`` says so, ``install`` refuses.

Nothing is ever written through a symbolic link; a settings file that cannot
be parsed is left alone.
"""

from __future__ import annotations

import os

from karni.agent.common.files import read_regular_file, write_atomic
from karni.cli.errors import KarniError
from karni.cli.hooks.claude_settings import (
    SettingsError,
    add_hooks,
    dump,
    installed_events,
    karni_hooks,
    load,
    remove_hooks,
)
from karni.cli.hooks.events import AGENTS
from karni.cli.hooks.scripts import FILE_NAME, is_generated, script

__all__ = [
    "DEFAULT_SCOPES",
    "HOOKLESS",
    "SCOPES",
    "HooksError",
    "install",
    "status",
    "target",
    "uninstall",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SCOPES = ("local", "project", "user")
DEFAULT_SCOPES = {
    "claude-code": "local",
    "opencode": "project",
    "pi": "project",
    "codex": "project",
    "gemini": "project",
}
"""The scope ``karni hooks install`` uses without ``--scope``."""

HOOKLESS = {
    "aider": (
        "Aider runs no hooks (its one notifications-command is the user's): "
        "`karni-historian ingest` reads its .aider.chat.history.md"
    ),
}
"""Harnesses the historian reads that offer no hook Karni could install, and why."""

_USER_FOLDERS = {
    # agent: (environment variable, its default under HOME, sub-folder)
    "claude-code": ("CLAUDE_CONFIG_DIR", ".claude", ""),
    "opencode": ("XDG_CONFIG_HOME", ".config", "opencode/plugins"),
    "pi": ("PI_CODING_AGENT_DIR", ".pi/agent", "extensions"),
    "codex": ("CODEX_HOME", ".codex", ""),
    "gemini": ("GEMINI_CLI_HOME", "", ".gemini"),
}
_MAX_BYTES = 4 << 20
_PROJECT_FOLDERS = {
    "claude-code": ".claude",
    "opencode": ".opencode/plugins",
    "pi": ".pi/extensions",
    "codex": ".codex",
    "gemini": ".gemini",
}
_JSON_FILES = {"codex": "hooks.json", "gemini": "settings.json"}
"""The JSON file each harness with Claude Code's hook shape keeps its hooks in."""


class HooksError(KarniError):
    """Hooks cannot be installed or removed here (a link, a foreign file, bad settings)."""


def target(root: str, agent: str, scope: str) -> str:
    """The file Karni's hooks for ``agent`` live in at ``scope``.

    Raises:
        HooksError: The harness has no such scope.
    """
    if agent in HOOKLESS:
        raise HooksError(f"{agent} has no hooks to install: {HOOKLESS[agent]}")
    if scope == "user":
        variable, default, sub = _USER_FOLDERS[agent]
        configured = os.environ.get(variable)
        base = configured or os.path.join(os.path.expanduser("~"), default)
        folder = os.path.join(base, *sub.split("/")) if sub else base
    elif scope == "local" and agent != "claude-code":
        raise HooksError(
            f"{agent} has no personal per-project hook file; "
            f"use `--scope project` or `--scope user`"
        )
    else:
        folder = os.path.join(root, *_PROJECT_FOLDERS[agent].split("/"))
    if agent in _JSON_FILES:
        return os.path.join(folder, _JSON_FILES[agent])
    if agent != "claude-code":
        return os.path.join(folder, FILE_NAME)
    name = "settings.local.json" if scope == "local" else "settings.json"
    return os.path.join(folder, name)


def _within(folder: str, path: str) -> bool:
    try:
        return os.path.commonpath([folder, path]) == folder
    except ValueError:  # different drives on Windows
        return False


def _shown(root: str, path: str) -> str:
    if _within(root, path):
        return os.path.relpath(path, root).replace(os.sep, "/")
    home = os.path.expanduser("~")
    if _within(home, path):
        return "~/" + os.path.relpath(path, home).replace(os.sep, "/")
    return path


def _refuse_links(root: str, path: str) -> None:
    """Refuse ``path`` if it, or (inside the project) a folder on the way to it, is a link."""
    inside = _within(root, path)
    current = path
    while True:
        if os.path.islink(current):
            raise HooksError(
                f"{_shown(root, current)} is a symbolic link; Karni never writes through one: "
                f"replace it with a real {'folder' if current != path else 'file'}"
            )
        parent = os.path.dirname(current)
        if not inside or parent in (root, current):
            return
        current = parent


def _read(path: str) -> str | None:
    try:
        return read_regular_file(path, _MAX_BYTES).decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise HooksError(f"cannot read {path}: {error}") from None


def _write(root: str, path: str, text: str) -> None:
    _refuse_links(root, path)
    inside = _within(root, path)
    try:
        if not inside:
            os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomic(path, text, within=root if inside else None)
    except OSError as error:
        raise HooksError(f"cannot write {_shown(root, path)}: {error}") from None


def _settings(root: str, path: str, agent: str = "claude-code") -> tuple[str, dict[str, Any]]:
    _refuse_links(root, path)
    text = _read(path) or ""
    try:
        return text, load(text, strict=agent != "gemini")
    except SettingsError as error:
        raise HooksError(
            f"cannot parse {_shown(root, path)}: {error}; fix it (or move it away) and run again"
        ) from None


def _install_claude(
    root: str, path: str, before_edit: str, agent: str = "claude-code", share: bool = False
) -> bool:
    text, settings = _settings(root, path, agent)
    try:
        updated = add_hooks(settings, before_edit, agent, share)
    except SettingsError as error:
        raise HooksError(
            f"cannot add to {_shown(root, path)}: {error}; fix it and run again"
        ) from None
    if updated == settings:
        return False
    _write(root, path, dump(updated, text))
    return True


def _uninstall_claude(root: str, path: str, agent: str = "claude-code") -> bool:
    text, settings = _settings(root, path, agent)
    updated = remove_hooks(settings, agent)
    if updated == settings:
        return False
    if updated:
        _write(root, path, dump(updated, text))
    else:
        _remove(root, path)  # the file held nothing but Karni's hooks
    return True


def _script(root: str, path: str) -> str | None:
    _refuse_links(root, path)
    text = _read(path)
    if text is not None and not is_generated(text):
        raise HooksError(
            f"{_shown(root, path)} exists and was not written by Karni; move it away and run again"
        )
    return text


def _remove(root: str, path: str) -> None:
    try:
        os.unlink(path)
    except OSError as error:
        raise HooksError(f"cannot remove {_shown(root, path)}: {error}") from None


def install(root: str, agent: str, scope: str, before_edit: str, share: bool = False) -> str:
    """Install Karni's hooks for ``agent`` at ``scope``; returns the line to print.

    With ``share``, the end-of-session hook also runs ``karni-historian share
    --auto``, which shares only when the user's own settings opt the project in.

    Raises:
        HooksError: A link on the way, a file that is not Karni's, or bad settings.
    """
    path = target(root, agent, scope)
    if agent == "claude-code" or agent in _JSON_FILES:
        changed = _install_claude(root, path, before_edit, agent, share)
    else:
        text = script(agent, before_edit, share)
        changed = _script(root, path) != text
        if changed:
            _write(root, path, text)
    verb = "installed" if changed else "already installed"
    sharing = "; at the end: share, when your settings opt in" if share else ""
    return f"{agent} hooks {verb} in {_shown(root, path)} (before an edit: {before_edit}{sharing})"


def uninstall(root: str, agent: str, scope: str) -> str:
    """Remove exactly what :func:`install` added; returns the line to print.

    Raises:
        HooksError: A link on the way, a file that is not Karni's, or bad settings.
    """
    path = target(root, agent, scope)
    if agent == "claude-code" or agent in _JSON_FILES:
        changed = _uninstall_claude(root, path, agent)
    else:
        changed = _script(root, path) is not None
        if changed:
            _remove(root, path)
    if not changed:
        return f"no {agent} hooks in {_shown(root, path)}: nothing to remove"
    return f"{agent} hooks removed from {_shown(root, path)}"


def _state(root: str, agent: str, path: str) -> tuple[str, str | None]:
    """(state, before-edit mode) of one hook file; state is installed, partial or absent."""
    if agent != "claude-code" and agent not in _JSON_FILES:
        text = _script(root, path)
        if text is None:
            return "absent", None
        return "installed", "block-first" if 'BEFORE_EDIT = "block-first"' in text else "context"
    events = installed_events(_settings(root, path, agent)[1], agent)
    if not events:
        return "absent", None
    blocking = any("--before-edit block-first" in command for command in events.values())
    mode = "block-first" if blocking else "context"
    return ("installed" if set(events) >= set(karni_hooks(mode, agent)) else "partial"), mode


def status(root: str) -> list[dict[str, Any]]:
    """One row per agent and scope: where its hooks would live and what is there.

    A harness without hooks (:data:`HOOKLESS`) has one row, ``unsupported``,
    whose ``error`` says how its sessions are read instead.
    """
    rows = []
    for agent in AGENTS:
        for scope in SCOPES:
            if scope == "local" and agent != "claude-code":
                continue
            path = target(root, agent, scope)
            row: dict[str, Any] = {"agent": agent, "scope": scope, "path": _shown(root, path)}
            try:
                row["state"], row["before_edit"] = _state(root, agent, path)
                row["error"] = None
            except HooksError as error:
                row.update(state="error", before_edit=None, error=str(error))
            rows.append(row)
    for agent, why in HOOKLESS.items():
        row = {"agent": agent, "scope": None, "path": None, "state": "unsupported"}
        rows.append({**row, "before_edit": None, "error": why})
    return rows
