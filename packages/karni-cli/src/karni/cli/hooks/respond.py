"""Answering a harness: the brief, in the shape each harness documents.

Claude Code reads ``hookSpecificOutput`` from the hook's stdout: a
PreToolUse or SessionStart hook adds ``additionalContext`` for the model, and
a PreToolUse hook denies the call with ``permissionDecision: "deny"`` and a
``permissionDecisionReason`` the model reads. Codex reads the same shape but
takes no context before a call, so the brief comes with PostToolUse's
``additionalContext``; Gemini CLI denies a call with ``{"decision": "deny",
"reason"}`` and adds AfterTool's and SessionStart's ``additionalContext``. The
generated OpenCode plugin and Pi extension read ``{"brief": TEXT, "block":
BOOL}`` and pass the brief on through their host's own API (see
``docs/hooks.md``).
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
    """The hook's stdout at the first edit of a file whose brief is ``brief``."""
    block = mode == BLOCK_FIRST
    if agent == "gemini":
        if block:
            return dumps({"decision": "deny", "reason": brief}) + "\n"
        output = {"hookEventName": "AfterTool", "additionalContext": brief}
        return dumps({"hookSpecificOutput": output}) + "\n"
    if agent == "codex" and not block:
        output = {"hookEventName": "PostToolUse", "additionalContext": brief}
        return dumps({"hookSpecificOutput": output}) + "\n"
    if agent not in ("claude-code", "codex"):
        return dumps({"brief": brief, "block": block}) + "\n"
    output = {"hookEventName": "PreToolUse"}
    if block:
        output["permissionDecision"] = "deny"
        output["permissionDecisionReason"] = brief
    else:
        output["additionalContext"] = brief
    return dumps({"hookSpecificOutput": output}) + "\n"


def session_start(agent: str, brief: str) -> str:
    """The hook's stdout at the start of a session with the project-level ``brief``."""
    if agent not in ("claude-code", "codex", "gemini"):
        return dumps({"brief": brief, "block": False}) + "\n"
    output = {"hookEventName": "SessionStart", "additionalContext": brief}
    return dumps({"hookSpecificOutput": output}) + "\n"
