"""Merging Karni's hooks into a JSON hook file, and taking them out again.

Claude Code's settings, Codex's ``hooks.json`` and Gemini CLI's
``settings.json`` share one shape: ``{"hooks": {EVENT: [{"matcher": ...,
"hooks": [{"type": "command", "command": ...}]}]}}``. Karni's entries are the
``command`` hooks whose command starts with ``karni hook AGENT``; every other
key, event, matcher group and hook is left as it was, in its order. Removing
Karni's entries also removes a matcher group, an event list or the ``hooks``
object that is empty afterwards. The text keeps the file's indentation and
final newline. Each harness has its own events (:data:`EVENTS`): Codex and
Gemini CLI add no context before a call, so in context mode their edit hook
runs after the edit, and in block-first mode before it.
"""

from __future__ import annotations

from karni.agent.common.jsontext import loads

__all__ = [
    "COMMAND_PREFIX",
    "EDIT_MATCHER",
    "EVENTS",
    "SettingsError",
    "add_hooks",
    "command_prefix",
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

EVENTS: dict[str, dict[str, tuple[tuple[str, str | None], ...]]] = {
    # agent: {before-edit mode: ((event, matcher), ...)}
    "claude-code": {
        mode: (
            ("PreToolUse", EDIT_MATCHER),
            ("SessionStart", None),
            ("Stop", None),
            ("SessionEnd", None),
        )
        for mode in ("context", "block-first")
    },
    "codex": {
        "context": (("PostToolUse", "apply_patch"), ("SessionStart", None), ("Stop", None)),
        "block-first": (("PreToolUse", "apply_patch"), ("SessionStart", None), ("Stop", None)),
    },
    "gemini": {
        "context": (
            ("AfterTool", "write_file|replace"),
            ("SessionStart", None),
            ("AfterAgent", None),
            ("SessionEnd", None),
        ),
        "block-first": (
            ("BeforeTool", "write_file|replace"),
            ("SessionStart", None),
            ("AfterAgent", None),
            ("SessionEnd", None),
        ),
    },
}
"""The events each harness's hooks are installed for, by before-edit mode."""

_TIMEOUTS = {"claude-code": HOOK_TIMEOUT, "codex": HOOK_TIMEOUT, "gemini": HOOK_TIMEOUT * 1000}
"""Claude Code and Codex count a hook's timeout in seconds, Gemini CLI in milliseconds."""

_EDIT_EVENTS = frozenset({"PreToolUse", "PostToolUse", "BeforeTool", "AfterTool"})
_END_EVENTS = frozenset({"Stop", "SessionEnd", "AfterAgent"})
"""The events after which the historian runs (and, with ``--share``, shares)."""


class SettingsError(ValueError):
    """The settings text is not a JSON object with the harness's hook shape."""


def command_prefix(agent: str) -> str:
    """Every hook command Karni installs for ``agent`` starts with this; nothing else does."""
    return f"karni hook {agent} "


def karni_hooks(
    before_edit: str, agent: str = "claude-code", share: bool = False
) -> dict[str, dict[str, Any]]:
    """Event → the matcher group Karni adds for it (``share``: the end events add ``--share``)."""
    mode = "" if before_edit == "context" else f" --before-edit {before_edit}"
    groups: dict[str, dict[str, Any]] = {}
    for event, matcher in EVENTS[agent][before_edit]:
        hook: dict[str, Any] = {"type": "command"}
        if agent == "gemini":
            hook["name"] = "karni-history"
        hook["command"] = f"{command_prefix(agent)}{event}{mode if event in _EDIT_EVENTS else ''}"
        if share and event in _END_EVENTS:
            hook["command"] += " --share"
        hook["timeout"] = _TIMEOUTS[agent]
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [hook]
        groups[event] = group
    return groups


def load(text: str, *, strict: bool = True) -> dict[str, Any]:
    """The settings object in ``text`` (empty text: an empty object).

    With ``strict``, every value of ``hooks`` must be an event list (Claude
    Code, Codex); otherwise other values are left alone (Gemini CLI keeps
    switches such as ``enabled`` there in some versions).

    Raises:
        SettingsError: Not JSON, not an object, or ``hooks`` of the wrong shape.
    """
    if not text.strip():
        return {}
    # `karni doctor` reads these files on every run; `json` would cost more than the rest of it.

    try:
        settings = loads(text)
    except (ValueError, RecursionError) as error:
        if "//" in text or "/*" in text:
            raise SettingsError(
                "it holds comments, which Karni would lose by rewriting it; add the hooks by "
                "hand (docs/hooks.md shows them) or take the comments out"
            ) from None
        raise SettingsError(f"not valid JSON ({error})") from None
    if not isinstance(settings, dict):
        raise SettingsError("not a JSON object")
    hooks = settings.get("hooks", {})
    lists = isinstance(hooks, dict) and all(isinstance(v, list) for v in hooks.values())
    if not isinstance(hooks, dict) or (strict and not lists):
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


def _is_karni(hook: object, prefix: str) -> bool:
    return (
        isinstance(hook, dict)
        and hook.get("type") == "command"
        and isinstance(hook.get("command"), str)
        and hook["command"].startswith(prefix)
    )


def _without_karni(groups: list[Any], prefix: str) -> list[Any]:
    """``groups`` without Karni's hooks, and without the groups that held only those."""
    kept = []
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(inner, list) and any(_is_karni(hook, prefix) for hook in inner):
            group["hooks"] = [hook for hook in inner if not _is_karni(hook, prefix)]
            if not group["hooks"]:
                continue
        kept.append(group)
    return kept


def remove_hooks(settings: dict[str, Any], agent: str = "claude-code") -> dict[str, Any]:
    """A copy of ``settings`` without Karni's hooks (and the containers they leave empty)."""
    # bench row "karni doctor" runs without it
    import copy

    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    prefix = command_prefix(agent)
    for event in list(hooks):
        if not isinstance(hooks[event], list):
            continue  # a switch of the harness's own, not an event
        groups = _without_karni(hooks[event], prefix)
        if groups or not hooks[event]:
            hooks[event] = groups
        else:
            del hooks[event]
    if not hooks and settings.get("hooks"):
        del result["hooks"]
    return result


def add_hooks(
    settings: dict[str, Any], before_edit: str, agent: str = "claude-code", share: bool = False
) -> dict[str, Any]:
    """A copy of ``settings`` with Karni's hooks (replacing any older Karni entries)."""
    result = remove_hooks(settings, agent)
    hooks = result.setdefault("hooks", {})
    for event, group in karni_hooks(before_edit, agent, share).items():
        if not isinstance(hooks.setdefault(event, []), list):
            raise SettingsError(f'"hooks.{event}" is not a list of hook groups')
        hooks[event].append(group)
    return result


def installed_events(settings: dict[str, Any], agent: str = "claude-code") -> dict[str, str]:
    """Event → Karni's command installed for it."""
    found: dict[str, str] = {}
    hooks = settings.get("hooks")
    prefix = command_prefix(agent)
    for event, groups in (hooks if isinstance(hooks, dict) else {}).items():
        for group in groups if isinstance(groups, list) else ():
            inner = group.get("hooks") if isinstance(group, dict) else None
            for hook in inner if isinstance(inner, list) else ():
                if _is_karni(hook, prefix):
                    found[event] = hook["command"]
    return found
