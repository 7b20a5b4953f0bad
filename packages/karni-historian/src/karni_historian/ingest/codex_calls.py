"""What a Codex rollout's calls hold: commands, patches and outputs, as the store keeps them.

Shell calls (``shell``, ``shell_command``, ``exec_command``,
``local_shell_call``) become ``shell`` calls holding the command as one
string, patches (``apply_patch`` as a free-form or JSON call, or through the
shell) ``apply_patch`` calls holding the patch; outputs lose Codex's envelope
(exit code, wall time), and a non-zero exit code marks a call as failed
(:mod:`karni_historian.ingest.codex`, ``docs/historian/harnesses.md``).
"""

from __future__ import annotations

import json
import shlex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "PATCH_BEGIN",
    "PATCH_END",
    "convert_call",
    "listed_files",
    "shell_result",
    "texts_of",
]

_SHELL_NAMES = frozenset(
    {"shell", "container.exec", "local_shell", "shell_command", "exec_command"}
)
PATCH_BEGIN = "*** Begin Patch"
PATCH_END = "*** End Patch"
_FAILURES = (
    "aborted by user",
    "execution error",
    "apply_patch verification failed",
    "failed to apply patch",
    "patch rejected",
)
_ENVELOPE_LINES = ("Chunk ID:", "Wall time:", "Original token count:", "Total output lines:")
_LISTED_ACTIONS = {"A": "create", "M": "edit", "D": "edit"}


def texts_of(content: Any) -> list[str]:
    """The texts of a response message's content items (or of a plain string)."""
    if isinstance(content, str):
        return [content]
    texts = []
    for item in content if isinstance(content, list) else ():
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            texts.append(item["text"])
    return texts


def shell_result(output: Any) -> tuple[str, int | None, bool]:
    """``(body, exit code, failed)`` of a call's output, without Codex's envelope.

    Outputs come as a JSON text ``{"output", "metadata": {"exit_code"}}``, as
    text headed by ``Exit code:`` / ``Process exited with code`` and ``Output:``
    lines, as a list of content items, or as ``{"content", "success"}``.
    """
    success: bool | None = None
    if isinstance(output, dict):
        success = output.get("success") if isinstance(output.get("success"), bool) else None
        output = output.get("content", "")
    if isinstance(output, list):
        output = "\n".join(texts_of(output))
    if not isinstance(output, str):
        return "", None, success is False
    text, code = output, None
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("output"), str):
            metadata = data.get("metadata")
            raw = metadata.get("exit_code") if isinstance(metadata, dict) else data.get("exit_code")
            code = raw if isinstance(raw, int) and not isinstance(raw, bool) else None
            text = data["output"]
    if code is None:
        text, code = _envelope(text)
    failed = (code is not None and code != 0) or success is False
    lowered = text.lstrip().lower()
    failed = failed or lowered.startswith(_FAILURES)
    return text, code, failed


def _envelope(text: str) -> tuple[str, int | None]:
    """The body after an ``Output:`` line and the exit code its header names."""
    lines = text.split("\n")
    code: int | None = None
    for index, line in enumerate(lines[:8]):
        stripped = line.strip()
        for prefix in ("Exit code:", "Process exited with code"):
            if stripped.startswith(prefix):
                digits = stripped[len(prefix) :].strip()
                if digits.lstrip("-").isdigit():
                    code = int(digits)
        if stripped == "Output:":
            return "\n".join(lines[index + 1 :]), code
        if not (
            stripped.startswith(("Exit code:", "Process exited", "Process running", "Command:"))
            or stripped.startswith(_ENVELOPE_LINES)
        ):
            break
    return text, code


def _command_text(command: Any) -> str | None:
    """A shell call's command as one string (``bash -lc SCRIPT`` gives the script)."""
    if isinstance(command, str):
        return command
    if not isinstance(command, list) or not all(isinstance(c, str) for c in command):
        return None
    if len(command) == 3 and command[1] in ("-lc", "-c") and command[0].endswith("sh"):
        return str(command[2])

    return shlex.join(command)


def _patch_in(text: str) -> str | None:
    """The ``*** Begin Patch`` … ``*** End Patch`` text inside a shell command, if any."""
    start = text.find(PATCH_BEGIN)
    if start < 0:
        return None
    end = text.find(PATCH_END, start)
    return text[start : end + len(PATCH_END)] if end >= 0 else text[start:]


def convert_call(name: str, arguments: Any) -> tuple[str, Any]:
    """``(stored name, stored input)`` of a Codex tool call (see the module doc)."""
    if isinstance(arguments, str) and name != "apply_patch":
        try:
            parsed = json.loads(arguments)
        except ValueError:
            parsed = None
        arguments = parsed if isinstance(parsed, dict) else {"arguments": arguments}
    if name == "apply_patch":
        if isinstance(arguments, str):
            try:
                parsed = json.loads(arguments)
            except ValueError:
                parsed = None
            arguments = parsed if isinstance(parsed, dict) else {"input": arguments}
        patch = arguments.get("input") if isinstance(arguments, dict) else None
        return "apply_patch", {"patch": patch if isinstance(patch, str) else ""}
    if name in _SHELL_NAMES and isinstance(arguments, dict):
        raw = arguments.get("cmd") if name == "exec_command" else arguments.get("command")
        command = _command_text(raw)
        if command is not None:
            if isinstance(raw, list) and raw and raw[0] == "apply_patch" and len(raw) > 1:
                return "apply_patch", {"patch": raw[1], "command": command}
            patch = _patch_in(command) if "apply_patch" in command else None
            if patch is not None:
                return "apply_patch", {"patch": patch, "command": command}
            stored: dict[str, Any] = {"command": command}
            workdir = arguments.get("workdir") or arguments.get("working_directory")
            if isinstance(workdir, str) and workdir:
                stored["workdir"] = workdir
            return "shell", stored
    return name, arguments


def listed_files(text: str) -> list[tuple[str, str]]:
    """``(path, action)`` of apply_patch's "Success. Updated the following files:" list."""
    found = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.strip().startswith("Success. Updated the following files"):
            for entry in lines[index + 1 :]:
                letter, _, path = entry.strip().partition(" ")
                if letter not in _LISTED_ACTIONS or not path.strip():
                    break
                found.append((path.strip(), _LISTED_ACTIONS[letter]))
    return found
