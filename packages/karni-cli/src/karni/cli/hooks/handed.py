"""What a session was handed at its start, so a resumed session is handed only what is new.

Claude Code keeps a SessionStart hook's ``additionalContext`` in the
conversation, and a resumed session still holds what it was handed before.
Handing the whole project brief again on ``resume`` would put a second copy
in the prompt; so the text handed is recorded per session in
``.karni/local/hooks-handed.json`` (:mod:`karni.cli.hooks.records`), and a
resumed session gets only what was added after it, nothing when nothing was.
A start that begins a new conversation (``startup``, ``clear``, ``compact``)
is handed the whole brief. See ``docs/hooks.md``.
"""

from __future__ import annotations

from karni.cli.hooks.records import session_key, update_record

__all__ = ["HANDED_FILE", "to_hand"]

HANDED_FILE = "hooks-handed.json"


def _new_part(before: object, text: str) -> str:
    """What to hand a session that was handed ``before``: all of ``text``, its tail, or nothing."""
    if not isinstance(before, str):
        return text
    if text == before:
        return ""
    head = before.rstrip("\n") + "\n"
    if text.startswith(head):
        return text[len(head) :]
    return text  # rebuilt: the session gets the new brief whole


def to_hand(root: str, agent: str, session: str | None, text: str, *, resumed: bool) -> str:
    """What to hand ``session`` at its start, given the project brief ``text``; records ``text``.

    Raises:
        OSError: The record cannot be written (the caller then hands nothing).
    """
    if session is None:
        return text

    def hand(before: object) -> tuple[str, str]:
        return text, _new_part(before, text) if resumed else text

    handed: str = update_record(root, HANDED_FILE, session_key(agent, session), hand)
    return handed
