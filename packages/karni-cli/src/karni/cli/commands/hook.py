"""``karni hook AGENT EVENT``: what a harness runs at its hook points, event JSON on stdin.

This runs before every edit an agent makes, so it stays on the hot path of
``karni context --with-history`` (hand-parsed options, lazy imports) and it
never fails the agent: any error exits 0 with nothing printed and appends one
line to ``.karni/local/hooks.log``. Before an edit it prints the file's brief
(once per file per session); at session start the project-level brief; after
a session it starts the historian in the background. See ``docs/hooks.md``.
"""

from __future__ import annotations

import os
import sys

from karni.cli.commands.context import history_text, resolve_path
from karni.cli.errors import KarniError, ProjectNotFoundError
from karni.cli.hooks import seen
from karni.cli.hooks.events import EDIT, EVENTS, SESSION_START, read_event
from karni.cli.hooks.respond import BEFORE_EDIT_MODES, CONTEXT, before_edit, session_start
from karni.cli.project import find_project_root

__all__ = ["SUMMARY", "USAGE", "run"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni.cli.hooks.events import HookEvent

SUMMARY = "run a harness hook (AGENT EVENT, the event as JSON on stdin); see `karni hooks`"

USAGE = "usage: karni hook AGENT EVENT [--before-edit context|block-first] [--share]"

HELP = f"""{USAGE}

Run by a coding agent's harness at one of its hook points, with the event as
JSON on stdin; `karni hooks install` sets this up. Never fails the agent: any
error exits 0, prints nothing, and appends a line to .karni/local/hooks.log.

agents and events:
  claude-code  PreToolUse, SessionStart, Stop, SessionEnd
  opencode     tool.execute.before, experimental.chat.system.transform, session.idle
  pi           tool_call, before_agent_start, agent_end, session_shutdown
  codex        PreToolUse, PostToolUse, SessionStart, Stop
  gemini       BeforeTool, AfterTool, SessionStart, AfterAgent, SessionEnd

options:
  --before-edit context      before the first edit of a file with history, add
                             its brief to what the model reads (the default)
  --before-edit block-first  deny that first edit instead, the brief as the reason
  --share                    after a session, also run `karni-historian share --auto`
  -h, --help                 show this help and exit
"""


def _parse(argv: list[str]) -> tuple[str, str, str, bool]:
    mode = CONTEXT
    share = False
    positionals: list[str] = []
    arguments = iter(argv)
    for argument in arguments:
        if argument == "--before-edit":
            mode = next(arguments, "")
        elif argument.startswith("--before-edit="):
            mode = argument.partition("=")[2]
        elif argument == "--share":
            share = True
        elif argument.startswith("-"):
            raise ValueError(f"unknown option `{argument}`; {USAGE}")
        else:
            positionals.append(argument)
    if mode not in BEFORE_EDIT_MODES:
        raise ValueError(f"--before-edit takes context or block-first, not `{mode}`")
    if len(positionals) != 2:
        raise ValueError(f"expected AGENT EVENT, got {' '.join(positionals) or 'nothing'}")
    agent, event = positionals
    if event not in EVENTS.get(agent, {}):
        raise ValueError(f"unknown agent or event `{agent} {event}`; run `karni hook --help`")
    return agent, event, mode, share


def _project_path(root: str, event: HookEvent, path: str) -> str | None:
    """An edited file as a project-relative path, or None when it lies outside."""
    if not os.path.isabs(path) and event.cwd:
        path = os.path.join(event.cwd, path)
    try:
        return resolve_path(root, path)
    except KarniError:
        return None


def _delivers(event: HookEvent, mode: str) -> bool:
    """Whether this event hands the brief over in ``mode``.

    Codex and Gemini CLI take no context before a call: in context mode the
    brief comes after the edit (PostToolUse, AfterTool), in block-first mode
    the call before it is refused.
    """
    from karni.cli.hooks.events import AFTER_EDIT_EVENTS
    from karni.cli.hooks.respond import CONTEXT

    if event.agent not in ("codex", "gemini"):
        return True
    return ((event.agent, event.name) in AFTER_EDIT_EVENTS) == (mode == CONTEXT)


def _before_edit(root: str, event: HookEvent, mode: str) -> str:
    if not event.paths or not _delivers(event, mode):
        return ""

    briefs = []
    for path in event.paths:
        relative = _project_path(root, event, path)
        if relative is None or seen.already_briefed(root, event.agent, event.session, relative):
            continue
        brief = history_text(root, relative)
        if brief and seen.claim(root, event.agent, event.session, relative):
            briefs.append(brief)
    if not briefs:
        return ""

    return before_edit(event.agent, "\n".join(briefs), mode)


def _session_start(root: str, event: HookEvent) -> str:
    """The project brief; a resumed Claude Code session gets only what it was not handed."""
    brief = history_text(root, None)
    if event.agent in ("claude-code", "codex", "gemini") and brief:
        from karni.cli.hooks.handed import to_hand

        resumed = event.source == "resume"
        try:
            brief = to_hand(root, event.agent, event.session, brief, resumed=resumed)
        except OSError:
            if resumed:
                raise  # it may hold the brief already: one copy is enough
    return session_start(event.agent, brief) if brief else ""


def _answer(root: str, event: HookEvent, mode: str, share: bool = False) -> str:
    if event.kind == EDIT:
        return _before_edit(root, event, mode)
    if event.kind == SESSION_START:
        return _session_start(root, event)
    # bench row "karni hook PreToolUse (brief printed)" runs without it
    from karni.cli.hooks.historian import start
    from karni.cli.hooks.local import append_log

    append_log(root, f"{event.agent} {event.name}: {start(root, event.transcript, share=share)}")
    return ""


def _root(start: str | None) -> str | None:
    try:
        return find_project_root(start)
    except ProjectNotFoundError:
        return None


def run(argv: list[str]) -> int:
    """Run ``karni hook``: always exit 0; errors go to the project's hook log."""
    if any(argument in ("-h", "--help") for argument in argv):
        # bench row "karni hook PreToolUse (brief printed)" runs without it
        from karni.cli.helptext import write_help

        write_help(HELP)
        return 0
    root: str | None = None
    where = " ".join(argv[:2])
    try:
        data = sys.stdin.buffer.read()
        agent, name, mode, share = _parse(argv)
        event = read_event(agent, name, data)
        root = _root(event.cwd)
        if root is None:
            return 0  # not a Karni project: nothing to say, nowhere to log
        output = _answer(root, event, mode, share)
    except Exception as error:  # a hook never fails the agent
        root = root or _root(None)
        if root is not None:
            # bench row "karni hook PreToolUse (brief printed)" runs without it
            from karni.cli.hooks.local import append_log

            append_log(root, f"{where}: {type(error).__name__}: {error}")
        return 0
    if output:
        try:
            sys.stdout.write(output)
            sys.stdout.flush()
        except OSError:
            pass  # the harness stopped listening: nothing left to tell it
    return 0
