"""``karni-historian timeline``: the project's history as one self-contained HTML page.

The page (``docs/historian/timeline.md``) needs no network and opens from a
``file://`` URL. It is written atomically (a temporary file beside ``OUT``,
then renamed), never through a symlink; ``--file`` names a path inside the
project the page's file filter starts on, by the rule ``karni context``
follows for its ``PATH``.
"""

from __future__ import annotations

import getpass
import os
import subprocess
import sys
import time

from karni.agent.common.errors import UnsafePathError
from karni.agent.common.files import check_writable, write_atomic
from karni.agent.common.paths import project_relative

from karni_historian.brief.timeline import timeline_data
from karni_historian.brief.timeline_page import timeline_html
from karni_historian.cli.common import PROG, CliError, open_store

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

__all__ = ["local_author", "run"]


def run(args: argparse.Namespace, root: str) -> int:
    """Write the page to ``--html OUT``; print one line saying what it holds."""
    out = _checked_out(args.html)
    selected = None if args.file is None else _project_file(root, args.file)
    with open_store(root) as store:
        data = timeline_data(
            store,
            project=os.path.basename(os.path.realpath(root)),
            author=local_author(root),
            selected=selected,
            generated=int(time.time() * 1000),
        )
    try:
        write_atomic(out, timeline_html(data))
    except UnsafePathError:
        raise CliError(_symlink_line(args.html)) from None
    sessions = data["sessions"]
    episodes = sum(len(session["episodes"]) for session in sessions)
    if not sessions:
        print(f"{PROG}: the store has no session yet; run `{PROG} ingest`", file=sys.stderr)
    elif selected is not None and not _touched(data, selected):
        print(f"{PROG}: no history recorded for {selected}", file=sys.stderr)
    if not args.quiet:
        print(f"wrote {args.html}: {len(sessions)} session(s), {episodes} episode(s)")
    return 0


def _checked_out(path: str) -> str:
    """``--html OUT`` as an absolute path, once its folder is known to take a new file there."""
    out = os.path.abspath(path)
    folder = os.path.dirname(out)
    if not os.path.isdir(folder):
        raise CliError(f"--html {path}: the folder {folder} does not exist; create it first", 2)
    if os.path.isdir(out) and not os.path.islink(out):
        raise CliError(f"--html {path} is a folder; name the HTML file to write", 2)
    try:
        check_writable(out)
    except UnsafePathError:
        raise CliError(_symlink_line(path), 2) from None
    return out


def _symlink_line(path: str) -> str:
    return f"--html {path} is a symlink; Karni does not write through symlinks: name another file"


def _project_file(root: str, path: str) -> str:
    """``--file PATH`` as a project-relative path; a usage error outside the project."""
    relative = project_relative(root, path)
    if relative == ".":
        raise CliError(
            f"--file {path} is the project root {root}; name a file or folder inside it, "
            "or omit --file for the whole history",
            2,
        )
    if relative is None:
        raise CliError(f"--file {path} lies outside the project {root}; name a path inside it", 2)
    return relative


def _touched(data: dict[str, object], selected: str) -> bool:
    """Whether some session touched ``selected`` or a file under it."""
    under = selected.rstrip("/") + "/"
    files = data["files"]
    assert isinstance(files, list)
    return any(path == selected or path.startswith(under) for path in files)


def local_author(root: str) -> str:
    """Who ran the project's local sessions: git's ``user.name`` there, else the login name."""
    try:
        done = subprocess.run(
            ["git", "config", "--get", "user.name"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        name = " ".join(done.stdout.split())
    except (OSError, subprocess.SubprocessError, UnicodeDecodeError):
        name = ""
    if not name:
        try:
            name = getpass.getuser()
        except (OSError, KeyError, ImportError):
            name = ""
    return name or "you"
