"""Merging Karni's hooks into a Claude Code settings file, and taking them out again.

The settings are JSON: ``{"hooks": {EVENT: [{"matcher": ..., "hooks":
[{"type": "command", "command": ...}]}]}}``. Karni's entries are the
``command`` hooks whose command starts with ``karni hook claude-code``; every
other key, event, matcher group and hook is left as it was, in its order.
Removing Karni's entries also removes a matcher group, an event list or the
``hooks`` object that is empty afterwards. The text keeps the file's
indentation and final newline.
"""

from __future__ import annotations

from karni.agent.common.jsontext import loads

__all__ = [
    "COMMAND_PREFIX",
    "EDIT_MATCHER",
    "SettingsError",
    "add_hooks",
    "dump",
    "installed_events",
    "karni_hooks",
    "load",
    "remove_hooks",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

COMMAND_PREFIX = "karni hook claude-code "
"""Every hook command Karni installs starts with this; nothing else does."""

EDIT_MATCHER = "Edit|MultiEdit|Write|NotebookEdit"
"""The PreToolUse matcher: Claude Code's tools that change a file."""

HOOK_TIMEOUT = 30
"""Seconds Claude Code waits for a Karni hook before it carries on without it."""


class SettingsError(ValueError):
    """The settings text is not a JSON object with Claude Code's hook shape."""


def karni_hooks(before_edit: str) -> dict[str, dict[str, Any]]:
    """Event → the matcher group Karni adds for it."""
    mode = "" if before_edit == "context" else f" --before-edit {before_edit}"
    groups: dict[str, dict[str, Any]] = {}
    for event in ("PreToolUse", "SessionStart", "Stop", "SessionEnd"):
        hook = {
            "type": "command",
            "command": f"{COMMAND_PREFIX}{event}{mode if event == 'PreToolUse' else ''}",
            "timeout": HOOK_TIMEOUT,
        }
        group: dict[str, Any] = {"matcher": EDIT_MATCHER} if event == "PreToolUse" else {}
        group["hooks"] = [hook]
        groups[event] = group
    return groups


def load(text: str) -> dict[str, Any]:
    """The settings object in ``text`` (empty text: an empty object).

    Raises:
        SettingsError: Not JSON, not an object, or ``hooks`` of the wrong shape.
    """
    if not text.strip():
        return {}
    # `karni doctor` reads these files on every run; `json` would cost more than the rest of it.

    try:
        settings = loads(text)
    except (ValueError, RecursionError) as error:
        raise SettingsError(f"not valid JSON ({error})") from None
    if not isinstance(settings, dict):
        raise SettingsError("not a JSON object")
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
        raise SettingsError('"hooks" is not an object of event lists')
    return settings


def _indent(text: str) -> str | int:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            whitespace = line[: len(line) - len(stripped)]
            return "\t" if whitespace.startswith("\t") else len(whitespace)
    return 2


def dump(settings: dict[str, Any], original: str) -> str:
    """``settings`` as text, indented like ``original`` and ending in a newline like it."""
    # bench row "karni doctor" runs without it
    import json

    text = json.dumps(settings, indent=_indent(original), ensure_ascii=False)
    return text + ("\n" if not original or original.endswith("\n") else "")


def _is_karni(hook: object) -> bool:
    return (
        isinstance(hook, dict)
        and hook.get("type") == "command"
        and isinstance(hook.get("command"), str)
        and hook["command"].startswith(COMMAND_PREFIX)
    )


def _without_karni(groups: list[Any]) -> list[Any]:
    """``groups`` without Karni's hooks, and without the groups that held only those."""
    kept = []
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(inner, list) and any(_is_karni(hook) for hook in inner):
            group["hooks"] = [hook for hook in inner if not _is_karni(hook)]
            if not group["hooks"]:
                continue
        kept.append(group)
    return kept


def remove_hooks(settings: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``settings`` without Karni's hooks (and the containers they leave empty)."""
    # bench row "karni doctor" runs without it
    import copy

    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    for event in list(hooks):
        groups = _without_karni(hooks[event])
        if groups or not hooks[event]:
            hooks[event] = groups
        else:
            del hooks[event]
    if not hooks and settings.get("hooks"):
        del result["hooks"]
    return result


def add_hooks(settings: dict[str, Any], before_edit: str) -> dict[str, Any]:
    """A copy of ``settings`` with Karni's hooks (replacing any older Karni entries)."""
    result = remove_hooks(settings)
    hooks = result.setdefault("hooks", {})
    for event, group in karni_hooks(before_edit).items():
        hooks.setdefault(event, []).append(group)
    return result


def installed_events(settings: dict[str, Any]) -> dict[str, str]:
    """Event → Karni's command installed for it."""
    found: dict[str, str] = {}
    hooks = settings.get("hooks")
    for event, groups in (hooks if isinstance(hooks, dict) else {}).items():
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            for hook in inner if isinstance(inner, list) else ():
                if _is_karni(hook):
                    found[event] = hook["command"]
    return found
