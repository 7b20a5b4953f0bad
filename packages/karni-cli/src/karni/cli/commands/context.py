"""``karni context [--with-history [PATH]]``: what the project contains, for an agent.

This is the hot path: an agent runs it before every edit. Its few options are
parsed by hand (``argparse`` costs more than the whole inventory), and the
history layer is imported only when ``--with-history`` asks for it. Nothing
here writes to the project: no state, no tip.
"""

from __future__ import annotations

import sys

from karni.cli.errors import KarniError, UsageError, unknown_option
from karni.cli.project import find_project_root

__all__ = ["SUMMARY", "history_text", "parse_args", "resolve_path", "run", "unusable_path"]

SUMMARY = "print the project inventory; --with-history adds history briefs"

USAGE = "usage: karni context [--with-history [PATH]]"

_NAME_MAX = 255
_PATH_MAX = 4096


def _help() -> str:
    # bench row "karni context" runs without it
    from karni.agent.history.cap import CHARS_PER_TOKEN, HISTORY_TOKEN_CAP

    cap = HISTORY_TOKEN_CAP
    chars = f"{cap * CHARS_PER_TOKEN:,}"
    return f"""{USAGE}

Print a compact, machine-readable inventory of the project (APPS, MODELS,
VIEWSETS, PAGES, MODULES, BASES), read statically: the project's code is never
imported or run.

options:
  --with-history [PATH]  also print what history providers recorded about PATH, a
                         file relative to the working directory (or absolute) inside
                         the project; it need not exist yet. Without PATH, providers
                         that offer a project-level brief add one. With no store, or
                         nothing recorded, the output is exactly the plain inventory.
  -h, --help             show this help and exit

The cap: everything --with-history appends, headings included, is capped at
~{cap} tokens (~{chars} characters; tokens are estimated as characters / {CHARS_PER_TOKEN}).
A longer brief is cut at a line boundary and its last line says so, naming the
command that prints the full brief:
  … truncated at ~{cap} tokens; full brief: COMMAND
"""


def parse_args(argv: list[str]) -> tuple[bool, str | None, bool]:
    """Parse ``karni context``'s arguments by hand.

    Returns:
        ``(with_history, path, show_help)``.

    Raises:
        UsageError: An unknown option, a second PATH, or PATH without ``--with-history``.
    """
    with_history = False
    path: str | None = None
    options_done = False
    for argument in argv:
        if options_done or argument == "-" or not argument.startswith("-"):
            path = _one_path(path, argument)
        elif argument in ("-h", "--help"):
            return False, None, True
        elif argument == "--":
            options_done = True
        elif argument == "--with-history":
            with_history = True
        elif argument.startswith("--with-history="):
            with_history = True
            path = _one_path(path, argument.partition("=")[2])
        else:
            raise unknown_option(argument, "karni context", ("--with-history", "--help"), USAGE)
    if path is not None and not with_history:
        import shlex

        ending = ["--", path] if path.startswith("-") else [path]
        command = shlex.join(["karni", "context", "--with-history", *ending])
        raise UsageError(f"PATH `{path}` needs --with-history; run `{command}`")
    if path == "":
        raise UsageError("PATH is empty; name a file inside the project")
    return with_history, path, False


def _one_path(path: str | None, value: str) -> str:
    """``value`` as the PATH, unless one was already given."""
    if path is not None:
        raise UsageError(f"`karni context` takes one PATH, got `{path}` and `{value}`")
    return value


def resolve_path(root: str, path: str) -> str:
    """``path`` (relative to the working directory, or absolute) as project-relative POSIX.

    Symlinks follow karni-core's one rule (:mod:`karni.agent.common.paths`).

    Raises:
        KarniError: The path lies outside the project or is the project root itself.
    """
    # bench row "karni context" runs without it
    from karni.agent.common.paths import project_relative

    relative = project_relative(root, path)
    if relative == ".":
        raise KarniError(
            f"PATH `{path}` is the project root {root}; name a file inside it, "
            f"or omit PATH for the project-level brief"
        )
    if relative is None:
        raise KarniError(f"PATH `{path}` is outside the project {root}; name a file inside it")
    return relative


def _build_inventory(root: str) -> tuple[str, list[tuple[str, ...]]]:
    # bench row "karni context" runs without it
    # Imported only when the cache misses: parsing is the expensive part.
    from karni.cli.inventory.report import build

    return build(root)


def history_text(root: str, relative: str | None) -> str:
    """What ``--with-history`` appends for ``relative`` (None: the project), or "".

    The one composition both ``karni context`` and the harness hooks use.
    """
    # bench row "karni context" runs without it
    from karni.agent.history import compose

    block = compose(root, relative)
    return block + "\n" if block else ""


def run(argv: list[str]) -> int:
    """Run ``karni context``."""
    with_history, path, show_help = parse_args(argv)
    if show_help:
        # bench row "karni context" runs without it
        from karni.cli.helptext import write_help

        write_help(_help())
        return 0

    root = find_project_root()
    unusable = unusable_path(path) if path is not None else None
    relative = resolve_path(root, path) if path is not None and unusable is None else None

    # bench row "karni hook PreToolUse (brief printed)" runs without it
    from karni.cli.inventory.cache import cached

    # The inventory is out before any provider runs: even a provider that ends
    # the process cannot take it (docs/how-to/write-a-provider.md).
    sys.stdout.write(cached(root, _build_inventory))
    sys.stdout.flush()
    if unusable is not None:
        sys.stderr.write(f"karni: {unusable}\n")
    elif with_history:
        sys.stdout.write(history_text(root, relative))
        sys.stdout.flush()
    return 0


def unusable_path(path: str) -> str | None:
    """Why no provider can be asked about ``path`` (one line), or None when it is usable.

    A PATH that is not valid UTF-8 or too long for a file name is reported
    as clean text; the inventory is still printed, without history.
    """
    raw = path.encode("utf-8", "surrogateescape")
    if raw.decode("utf-8", "replace") != path:
        problem = "is not valid UTF-8; rename the file or name it in UTF-8"
    elif len(raw) >= _PATH_MAX or any(len(part) > _NAME_MAX for part in raw.split(b"/")):
        problem = (
            f"is too long for a file name (over {_NAME_MAX} bytes a part or {_PATH_MAX} "
            f"in all); name a file with a shorter path"
        )
    else:
        return None
    # bench row "karni context" runs without it
    from karni.agent.common.sanitize import clean_line

    shown = clean_line(raw.decode("utf-8", "replace"))
    if len(shown) > 60:
        shown = shown[:60] + "…"
    return f"PATH `{shown}` {problem}; no history is shown"
