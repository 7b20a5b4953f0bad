"""The ``claude-code/`` backend: the user's ``claude`` command in print mode.

Claude Code users summarise with the login they already have, no API key.
The prompt goes to ``claude -p`` on standard input, with our system prompt,
no tools (``--tools ""``), one turn, hooks off, no session saved, and JSON
output; the process runs in an empty temporary folder and is killed when the
entry's ``timeout`` passes (``docs/historian-models.md``).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile

from karni.agent.common.processes import find_program

from karni_historian.condense.models.calling import Reply, connection_error
from karni_historian.errors import ModelCallError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from karni_historian.condense.models.calling import Reply
    from karni_historian.condense.models.entries import ModelEntry
    from karni_historian.condense.models.prompt import Prompt

__all__ = ["COMMAND", "arguments", "complete"]

COMMAND = "claude"
"""The program looked up on ``PATH``."""

_TRANSIENT_WORDS = ("rate limit", "overloaded", "429", "500", "502", "503", "529", "timeout")
_EFFORTS = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}


def arguments(entry: ModelEntry, prompt: Prompt) -> list[str]:
    """The command line after the program name (the user prompt goes to standard input)."""
    args = ["-p", "--output-format", "json", "--model", entry.model]
    args += ["--system-prompt", prompt.system, "--tools", "", "--max-turns", "1"]
    args += ["--no-session-persistence", "--settings", '{"disableAllHooks": true}']
    if entry.reasoning and entry.reasoning != "off":
        args += ["--effort", _EFFORTS.get(entry.reasoning, entry.reasoning)]
    return args


def complete(entry: ModelEntry, prompt: Prompt) -> Reply:
    """One print-mode run; see :func:`karni_historian.condense.models.backends.complete`."""
    program = find_program(COMMAND)  # absolute PATH entries only: never the project's folder
    if program is None:
        raise ModelCallError(
            f"{entry.model_id}: the `{COMMAND}` command is not on PATH; install Claude Code "
            f"or choose another historian model",
            transient=False,
        )
    with tempfile.TemporaryDirectory(prefix="karni-historian-") as folder:
        try:
            done = subprocess.run(
                [program, *arguments(entry, prompt)],
                input=prompt.user,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                cwd=folder,
                timeout=entry.timeout,
                env={**os.environ, "NO_COLOR": "1"},
                check=False,
            )
        except subprocess.TimeoutExpired as error:
            raise connection_error(entry, error, timed_out=True) from None
        except OSError as error:
            raise ModelCallError(
                f"{entry.model_id}: cannot run {program} ({error})", transient=False
            ) from None
    return _reply(entry, done.returncode, done.stdout, done.stderr)


def _reply(entry: ModelEntry, code: int, stdout: str, stderr: str) -> Reply:
    raw = stdout if not stderr.strip() else f"{stdout}\n[stderr]\n{stderr}"
    try:
        envelope = json.loads(stdout)
    except ValueError:
        envelope = None
    if not isinstance(envelope, dict) or code != 0 or envelope.get("is_error"):
        result = envelope.get("result") if isinstance(envelope, dict) else None
        detail = " ".join(str(result or stderr or stdout).split())[:300] or "no output"
        transient = any(word in detail.lower() for word in _TRANSIENT_WORDS)
        raise ModelCallError(
            f"{entry.model_id}: `{COMMAND} -p` failed (exit {code}): {detail}",
            transient=transient,
            raw=raw,
            status=code,
        )
    text = envelope.get("result")
    truncated = envelope.get("stop_reason") == "max_tokens"
    return Reply(text if isinstance(text, str) else "", raw, truncated=truncated)
