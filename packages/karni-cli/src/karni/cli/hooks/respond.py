"""Answering a harness: the brief, in the shape each harness documents.

Claude Code reads ``hookSpecificOutput`` from the hook's stdout: a
PreToolUse or SessionStart hook adds ``additionalContext`` for the model, and
a PreToolUse hook denies the call with ``permissionDecision: "deny"`` and a
``permissionDecisionReason`` the model reads. The generated OpenCode plugin
and Pi extension read ``{"brief": TEXT, "block": BOOL}`` and pass the brief
on through their host's own API (see ``docs/hooks.md``).
"""

from __future__ import annotations

from karni.agent.common.jsontext import dumps  # `json` would bring in `re`

__all__ = ["BEFORE_EDIT_MODES", "BLOCK_FIRST", "CONTEXT", "before_edit", "session_start"]

CONTEXT = "context"
"""Before an edit, add the brief to what the model reads; the edit goes ahead."""
BLOCK_FIRST = "block-first"
"""Deny the first edit of a file with history, the brief as the reason."""
BEFORE_EDIT_MODES = (CONTEXT, BLOCK_FIRST)


def before_edit(agent: str, brief: str, mode: str) -> str:
    """The hook's stdout before an edit of a file whose brief is ``brief``."""
    block = mode == BLOCK_FIRST
    if agent != "claude-code":
        return dumps({"brief": brief, "block": block}) + "\n"
    output: dict[str, str] = {"hookEventName": "PreToolUse"}
    if block:
        output["permissionDecision"] = "deny"
        output["permissionDecisionReason"] = brief
    else:
        output["additionalContext"] = brief
    return dumps({"hookSpecificOutput": output}) + "\n"


def session_start(agent: str, brief: str) -> str:
    """The hook's stdout at the start of a session with the project-level ``brief``."""
    if agent != "claude-code":
        return dumps({"brief": brief, "block": False}) + "\n"
    output = {"hookEventName": "SessionStart", "additionalContext": brief}
    return dumps({"hookSpecificOutput": output}) + "\n"
