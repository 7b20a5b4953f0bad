"""What a shell command in a session was, and what came of it.

A file's notes say which tests or builds ran after an edit and how they
ended (``12 passed``, ``FAILED test_refund``, ``error TS2307: …``), which
commit landed the work, and which commands undid it (``git checkout --
FILE``, ``git restore``, ``git stash``). This module reads one shell call:
its command line, what kind of command it is, whether it failed, the one
line of its output worth quoting, and the files that output names.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from karni_historian.cut import shorten

__all__ = ["SHELL_TOOLS", "Run", "command_of", "commit_of", "read_run", "shell_writes"]

SHELL_TOOLS = frozenset(
    {"bash", "shell", "exec_command", "run_shell_command", "execute", "terminal", "local_shell",
     "run_terminal_cmd", "sh", "powershell", "run_command"}
)  # fmt: skip
"""Tool names (lower case) that run a shell command."""

_KINDS = (
    ("commit", r"\bgit\b[^|;&]*\bcommit\b"),
    ("undo", r"\bgit\s+(?:checkout\s+(?:--\s+)?\S|restore\b|revert\b|reset\s+--hard|stash\b(?!\s+"
             r"(?:list|show)))"),
    ("test", r"\b(?:pytest|py\.test|jest|vitest|mocha|go test|cargo test|rspec|phpunit|tox|nox|"
             r"(?:npm|pnpm|yarn|bun)(?: run)? test|manage\.py test|unittest|ctest|dotnet test|"
             r"mvn (?:-\S+ )*test|gradle\w* test|make (?:test|check))\b|\bscripts/test\b"),
    ("typecheck", r"\b(?:tsc|tsgo|mypy|pyright|flow check|cargo check)\b|(?:npm|pnpm|yarn)(?: run)?"
                  r" (?:check|typecheck|type-check)\b"),
    ("lint", r"\b(?:ruff|eslint|flake8|pylint|biome|clippy|golangci-lint|prettier --check|"
             r"(?:npm|pnpm|yarn)(?: run)? lint)\b"),
    ("build", r"\b(?:(?:npm|pnpm|yarn|bun)(?: run)? build|next build|vite build|cargo build|"
              r"go build|(?:^|[;&|]\s*)make\b|webpack|gradle\w* build|mvn (?:-\S+ )*package|"
              r"uv build|hatch build)"),
)  # fmt: skip
_KIND_PATTERNS = [(kind, re.compile(pattern)) for kind, pattern in _KINDS]
_GIT_COMMIT = dict(_KIND_PATTERNS)["commit"]
_MAKES_COMMIT = re.compile(r"\bgit\b[^|;&]*\b(?:revert|cherry-pick|merge|am)\b")
"""Commands besides ``git commit`` that print the commit they make (``[main 1a2b3c4] …``)."""
_COMMIT_LINE = re.compile(r"^\[[^\]\s]+(?: \([^)]*\))? ([0-9a-f]{7,40})\] (.+)$", re.M)
_TEST_COUNTS = re.compile(
    r"\b(\d+) (passed|failed|errors?|skipped|failing|passing)\b|\btest result: (ok|FAILED)\b"
)
_FAILED_TEST = re.compile(r"^(?:FAILED|FAIL|✗|×|✕)\s+(\S.*)$", re.M)
_ERROR_LINE = re.compile(
    r"(?:\berror\b|\bError\b|\bERROR\b|\bFAILED\b|\bfailed\b|\bTraceback\b|\bpanic\b|"
    r"\bException\b|not found|No such file|cannot|Cannot|fatal:)"
)
_NAMED_ERROR = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception)\b:|\berror TS\d+|^E\s{2,}|^FAILED\b|\bfatal:|\bpanic:|"
    r"\bAssertionError\b"
)
_NOISE = re.compile(
    r"^\s*(?:npm warn|warning:|\(node:\d+\)|Debugger attached|Waiting for the debugger)", re.I
)
_FILE_NAME = re.compile(r"[\w.-]+\.[A-Za-z]{1,5}\b")
_EXIT = re.compile(r"(?:exit(?:ed)? (?:with )?(?:code|status) |Exit code:? )(\d+)", re.I)


@dataclass
class Run:
    """One shell call and its result, as a file's notes read it.

    Attributes:
        command: The command line, whitespace collapsed.
        kind: ``test``, ``typecheck``, ``lint``, ``build``, ``commit``, ``undo`` or ``other``.
        failed: True when the call or the command failed, False when it ended well,
            None when the session does not say (no result).
        summary: The line worth quoting: test counts, the first error, the commit.
        names: The file names its output mentions.
        commit: ``(short hash, subject)`` of the commit it made (a ``git commit``, or a
            ``revert``, ``cherry-pick`` or ``merge`` that printed one).
        targets: The files a ``git checkout``/``restore`` named.
    """

    command: str
    kind: str
    failed: bool | None
    summary: str
    names: frozenset[str]
    commit: tuple[str, str] | None = None
    targets: tuple[str, ...] = ()


def command_of(name: str, data: object) -> str | None:
    """The command line of a shell tool call, or None for any other call."""
    if name.lower() not in SHELL_TOOLS or not isinstance(data, dict):
        return None
    command = data.get("command", data.get("cmd", data.get("script")))
    if isinstance(command, list) and all(isinstance(word, str) for word in command):
        words: list[str] = command
        if words[:2] in (["bash", "-lc"], ["bash", "-c"], ["sh", "-c"]) and len(words) == 3:
            return words[2]
        return shlex.join(words)
    return command if isinstance(command, str) else None


_WRITE = re.compile(
    r"(?<![\d&>])>>?\s*(?!&)['\"]?([\w./@+-]+)['\"]?|\btee\s+(?:-a\s+)?['\"]?([\w./@+-]+)"
)
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
_SED_IN_PLACE = re.compile(
    r"\bsed\s+-i\S*\s+(?:(?:-e\s+)?(?:'[^']*'|\"[^\"]*\"|\S+)\s+)+([\w./@+-]+)\s*$"
)


def shell_writes(command: str) -> list[tuple[str, str | None]]:
    """The files a shell command writes (a redirection, ``tee``, ``sed -i``), with their text.

    The text is what a here-document gives the file, None when the command
    does not show it.
    """
    lines = command.split("\n")
    head = lines[0]
    found: list[tuple[str, str | None]] = []
    body = None
    heredoc = _HEREDOC.search(head)
    if heredoc:
        end = next(
            (i for i, line in enumerate(lines[1:], 1) if line.strip() == heredoc.group(1)),
            len(lines),
        )
        body = "\n".join(lines[1:end])
    for match in _WRITE.finditer(head):
        target = match.group(1) or match.group(2)
        if (
            target
            and target not in ("/dev/null", "/dev/stderr", "/dev/stdout")
            and not target.isdigit()
        ):
            found.append((target, body))
    sed = _SED_IN_PLACE.search(head)
    if sed:
        found.append((sed.group(1), None))
    return found


def commit_of(command: str, output: str | None, is_error: bool) -> tuple[str, str] | None:
    """``(short hash, subject)`` of the commit a shell call printed it made, None when none.

    Cheap when it made none (most calls): the output is looked at first.
    """
    if is_error or not output or "] " not in output:
        return None
    command = " ".join(command.split())
    if not (_GIT_COMMIT.search(command) or _MAKES_COMMIT.search(command)):
        return None
    found = _COMMIT_LINE.search(output)
    return (found.group(1)[:8], found.group(2).strip()) if found else None


def _kind(command: str) -> str:
    for kind, pattern in _KIND_PATTERNS:
        if pattern.search(command):
            return kind
    return "other"


def _error_line(output: str) -> str:
    """The output's most telling error line: a named error first, then any error, then any line."""
    lines = [
        line.strip() for line in output.splitlines() if line.strip() and not _NOISE.match(line)
    ]
    for pattern in (_NAMED_ERROR, _ERROR_LINE):
        found = next((line for line in lines if pattern.search(line)), None)
        if found is not None:
            return found
    return lines[0] if lines else ""


def _test_summary(output: str) -> tuple[bool | None, str]:
    counts = {}
    for number, word, verdict in _TEST_COUNTS.findall(output):
        if verdict:
            counts["failed" if verdict == "FAILED" else "ok"] = 1
        else:
            counts[word.rstrip("s") if word.startswith("error") else word] = int(number)
    failed_tests = _FAILED_TEST.findall(output)
    if not counts and not failed_tests:
        return None, ""
    bad = counts.get("failed", 0) + counts.get("failing", 0) + counts.get("error", 0)
    parts = [f"{counts[k]} {k}" for k in ("failed", "error", "passed", "passing") if counts.get(k)]
    text = ", ".join(parts)
    if failed_tests:
        text = f"{text}; FAILED {failed_tests[0].split(' - ')[0].strip()}".lstrip("; ")
    return bool(bad or failed_tests), text


def _targets(command: str) -> tuple[str, ...]:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if len(words) < 3 or words[0] != "git" or words[1] not in ("checkout", "restore"):
        return ()
    return tuple(
        word for word in words[2:] if not word.startswith("-") and word not in ("HEAD", ".")
    )


def read_run(command: str, output: str | None, is_error: bool) -> Run:
    """What a shell call with this command line, output and error flag was and came to."""
    command = " ".join(command.split())
    kind = _kind(command)
    failed: bool | None = bool(is_error) if output is not None or is_error else None
    output = output or ""
    exit_code = _EXIT.search(output[-300:])
    if exit_code:
        failed = exit_code.group(1) != "0"
    summary = ""
    if kind in ("test", "typecheck", "lint", "build", "other"):
        verdict, counts = _test_summary(output)
        if verdict is not None:
            failed, summary = verdict or bool(failed and not counts), counts
    if failed and not summary:
        summary = _error_line(output)
    commit = commit_of(command, output, is_error)
    names = frozenset(_FILE_NAME.findall(output)) if failed else frozenset()
    return Run(command, kind, failed, shorten(summary, 160), names, commit, _targets(command))
