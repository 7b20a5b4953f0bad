"""Asking git, the same way on every machine: ``git blame --porcelain`` and commit look-ups.

``blame`` runs git once per file (``git blame --porcelain``), and once more
only to look up the commits a session recorded when a rebase may have
replaced them (``git cat-file --batch``). Git runs without a shell, from
the absolute ``PATH`` entries only, with a fixed environment: no system or
user configuration (their pagers, aliases, ``blame.ignoreRevsFile``), no
inherited ``GIT_*`` variables, the C locale, no prompts, no optional locks
and no ``core.fsmonitor`` program. Its failures become one line
(:class:`~karni_historian.errors.BlameError`) naming the file and the fix.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass

from karni.agent.common.processes import find_program

from karni_historian.errors import BlameError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = [
    "UNCOMMITTED",
    "BlameError",
    "BlamedLine",
    "Commit",
    "Porcelain",
    "blame_lines",
    "git_environment",
    "head_revision",
    "look_up_commits",
    "parse_porcelain",
]

UNCOMMITTED = "0" * 40
"""The hash ``git blame`` gives lines not committed yet."""

GIT_TIMEOUT = 60.0
"""Seconds one git command may take."""

_HEADER = re.compile(r"^([0-9a-f]{40}) (\d+) (\d+)(?: (\d+))?$")
_CONFIG = (
    "-c", "core.quotepath=off",
    "-c", "core.fsmonitor=false",
    "-c", "blame.ignoreRevsFile=",
    "-c", "blame.markIgnoredLines=false",
    "-c", "blame.markUnblamableLines=false",
)  # fmt: skip


@dataclass(frozen=True)
class Commit:
    """A commit as ``git blame`` describes it.

    Attributes:
        sha: The full hash (:data:`UNCOMMITTED` for lines not committed yet).
        author: The author's name.
        mail: The author's address, without ``<>``.
        time: The author date, in seconds since the epoch.
        summary: The first line of the message.
        path: The file's path in the repository in that commit.
    """

    sha: str
    author: str
    mail: str
    time: int
    summary: str
    path: str

    @property
    def committed(self) -> bool:
        """False for the lines git shows as not committed yet."""
        return self.sha != UNCOMMITTED


@dataclass(frozen=True)
class BlamedLine:
    """One line of the file today, and the commit that last changed it."""

    number: int
    sha: str
    text: str


@dataclass(frozen=True)
class Porcelain:
    """What ``git blame --porcelain`` said: the lines in order, and their commits by hash."""

    lines: list[BlamedLine]
    commits: dict[str, Commit]


def git_environment() -> dict[str, str]:
    """The environment git runs in: the caller's without ``GIT_*``, plus fixed settings."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        {
            "LC_ALL": "C",
            "LANG": "C",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_PAGER": "cat",
            "PAGER": "cat",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_ATTR_NOSYSTEM": "1",
        }
    )
    return env


def _git(root: str, args: Sequence[str], stdin: bytes | None = None) -> tuple[int, bytes, str]:
    """Run git in ``root``; ``(exit code, stdout, first line of stderr)``."""
    program = find_program("git")
    if program is None:
        raise BlameError("git is not on PATH; install git, blame reads its history")
    try:
        done = subprocess.run(
            [program, *_CONFIG, *args],
            cwd=root,
            env=git_environment(),
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BlameError(f"git took over {GIT_TIMEOUT:.0f} s in {root}; try a smaller -L") from None
    except OSError as error:
        raise BlameError(
            f"git could not run ({error.strerror or error}); check the install"
        ) from None
    stderr = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return done.returncode, done.stdout, stderr[0] if stderr else ""


def blame_lines(root: str, path: str, lines: tuple[int, int] | None = None) -> Porcelain:
    """``git blame --porcelain`` of ``path`` (relative to ``root``) as it is in the working tree.

    Raises:
        BlameError: git is missing, ``root`` is not in a repository, the file
            is not tracked, or ``lines`` lie beyond its end.
    """
    args = ["blame", "--porcelain"]
    if lines is not None:
        args += ["-L", f"{lines[0]},{lines[1]}"]
    code, out, error = _git(root, [*args, "--", path])
    if code != 0:
        raise BlameError(_failure(root, path, error))
    return parse_porcelain(out)


def _failure(root: str, path: str, error: str) -> str:
    lowered = error.lower()
    if "not a git repository" in lowered:
        return f"{root} is not in a git repository; blame reads git's history of {path}"
    if "no such path" in lowered or "no such file" in lowered:
        return f"{path} is not tracked by git; commit it first (git add {path})"
    if "has only" in lowered:
        return f"-L goes beyond the end of {path} ({error.removeprefix('fatal: ')})"
    if "no such ref" in lowered or "bad revision" in lowered:
        return f"the repository at {root} has no commit yet; commit {path} first"
    if "dubious ownership" in lowered:
        return (
            f"git refuses the repository at {root} (another user owns it); see git's safe.directory"
        )
    return f"git blame {path} failed: {error or 'no message'}"


def parse_porcelain(output: bytes) -> Porcelain:
    """The lines and commits of ``git blame --porcelain`` output."""
    lines: list[BlamedLine] = []
    commits: dict[str, Commit] = {}
    fields: dict[str, dict[str, str]] = {}
    sha = ""
    number = 0
    for raw in output.split(b"\n"):
        if raw.startswith(b"\t"):
            text = raw[1:].decode("utf-8", "replace")
            lines.append(BlamedLine(number, sha, text))
            continue
        line = raw.decode("utf-8", "replace")
        header = _HEADER.match(line)
        if header:
            sha, number = header.group(1), int(header.group(3))
            fields.setdefault(sha, {})
            continue
        key, _, value = line.partition(" ")
        if sha and key:
            fields[sha].setdefault(key, value)
    for sha, known in fields.items():
        commits[sha] = Commit(
            sha,
            known.get("author", ""),
            known.get("author-mail", "").strip("<>"),
            _int(known.get("author-time", "0")),
            known.get("summary", ""),
            known.get("filename", ""),
        )
    return Porcelain(lines, commits)


def _int(text: str) -> int:
    return int(text) if text.isdigit() else 0


def look_up_commits(root: str, hashes: Iterable[str]) -> dict[str, tuple[str, str, int, str]]:
    """``short hash -> (author, mail, author time, subject)`` of the commits git still has.

    One ``git cat-file --batch`` for all of them; a hash git does not know (a
    commit rebased away and collected, or made in another clone) is left out.
    """
    wanted = sorted({h for h in hashes if re.fullmatch(r"[0-9a-f]{7,40}", h)})
    if not wanted:
        return {}
    code, out, _error = _git(root, ["cat-file", "--batch"], "\n".join(wanted).encode() + b"\n")
    if code != 0:
        return {}
    found: dict[str, tuple[str, str, int, str]] = {}
    position = 0
    for short in wanted:
        end = out.find(b"\n", position)
        if end < 0:
            break
        header = out[position:end].decode("ascii", "replace").split()
        position = end + 1
        if len(header) != 3 or not header[2].isdigit():
            continue
        size = int(header[2])
        body = out[position : position + size]
        position += size + 1
        if header[1] == "commit":
            found[short] = _commit_fields(body.decode("utf-8", "replace"))
    return found


def _commit_fields(body: str) -> tuple[str, str, int, str]:
    head, _, message = body.partition("\n\n")
    author = ("", "", 0)
    for line in head.splitlines():
        if line.startswith("author "):
            match = re.match(r"author (.*) <([^>]*)> (\d+) ", line)
            if match:
                author = (match.group(1), match.group(2), int(match.group(3)))
    subject = message.splitlines()[0] if message.strip() else ""
    return (*author, subject)


def head_revision(root: str) -> tuple[str | None, str]:
    """The full hash of ``HEAD`` (None when git cannot say) and ``root``'s path in the repository.

    The path is ``""`` at the repository's top, else ends with ``/``.
    """
    code, out, _error = _git(root, ["rev-parse", "--show-prefix", "HEAD"])
    lines = out.decode("utf-8", "replace").split("\n")
    if code != 0 or len(lines) < 2:
        return None, ""
    prefix, sha = lines[0].strip(), lines[1].strip()
    return (sha if re.fullmatch(r"[0-9a-f]{40}", sha) else None), prefix
