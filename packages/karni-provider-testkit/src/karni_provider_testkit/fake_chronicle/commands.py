"""Running one ``chronicle`` command line: Chronicle's checks, in Chronicle's order.

Usage errors come first (exit 2, even outside a project), then the project
lookup (exit 3), then the path and the limit or type (exit 2), then the
work; anything unexpected, such as a ``.chronicle`` that is a plain file, is
exit 1 with the error on one line. The result is an :class:`Outcome`, not
output: the program decides what reaches stdout and stderr.
"""

from __future__ import annotations

from karni_provider_testkit.fake_chronicle.arguments import (
    Invocation,
    UsageError,
    command_help,
    js_number,
    parse_arguments,
    program_help,
)
from karni_provider_testkit.fake_chronicle.formats import VERSION, dumps
from karni_provider_testkit.fake_chronicle.markdown import knowledge_listing
from karni_provider_testkit.fake_chronicle.packs import context_pack, knowledge_items
from karni_provider_testkit.fake_chronicle.workspace import (
    find_repo_root,
    load_fixture,
    open_workspace,
    repo_relative,
)

__all__ = ["NOT_A_PROJECT", "Outcome", "run"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

NOT_A_PROJECT = "not a chronicle project (no .chronicle directory found)"
"""Chronicle's stderr line when no ``.chronicle`` is found (exit 3)."""

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_NOT_A_PROJECT = 0, 1, 2, 3
DEFAULT_CONTEXT_LIMIT = "8"


class Outcome:
    """What one run prints and returns."""

    def __init__(
        self,
        code: int = EXIT_OK,
        stdout: str = "",
        stderr: str = "",
        payload: dict[str, Any] | None = None,
    ) -> None:
        """Hold the exit status, the output and, for ``--json``, the payload printed."""
        self.code = code
        self.stdout = stdout
        self.stderr = stderr
        self.payload = payload
        self.command: str | None = None
        """The subcommand that ran (``context``, ``knowledge``), once known."""


def _fail(code: int, message: str) -> Outcome:
    return Outcome(code, "", message + "\n")


def run(argv: Sequence[str], cwd: str) -> Outcome:
    """Run the double's ``chronicle`` for ``argv`` in ``cwd``."""
    try:
        invocation = parse_arguments(argv)
    except UsageError as error:
        return _fail(EXIT_USAGE, str(error))
    outcome = _dispatch(invocation, cwd)
    outcome.command = invocation.command
    return outcome


def _dispatch(invocation: Invocation, cwd: str) -> Outcome:
    if invocation.version:
        return Outcome(stdout=VERSION + "\n")
    if invocation.help:
        command = invocation.command
        return Outcome(stdout=command_help(command) if command else program_help())
    repo_root = find_repo_root(cwd)
    if repo_root is None:
        return _fail(EXIT_NOT_A_PROJECT, NOT_A_PROJECT)
    try:
        if invocation.command == "context":
            return _run_context(invocation, cwd, repo_root)
        return _run_knowledge(invocation, repo_root)
    except OSError as error:
        return _fail(EXIT_FAILURE, " ".join(str(error).split()))


def _run_context(invocation: Invocation, cwd: str, repo_root: str) -> Outcome:
    typed = invocation.operands[0]
    file = repo_relative(typed, cwd, repo_root)
    if file is None:
        return _fail(EXIT_USAGE, f'context: "{typed}" is outside this repository')
    raw_limit = str(invocation.options.get("--limit", DEFAULT_CONTEXT_LIMIT))
    limit = js_number(raw_limit)
    if not (limit == limit and limit != float("inf") and limit.is_integer() and limit >= 1):
        return _fail(EXIT_USAGE, f'context: --limit must be a positive integer, got "{raw_limit}"')
    warnings = open_workspace(repo_root)
    pack = context_pack(load_fixture(repo_root), file, int(limit))
    stderr = "".join(line + "\n" for line in warnings)
    if invocation.json:
        return Outcome(stdout=dumps(pack) + "\n", stderr=stderr, payload=pack)
    if invocation.options.get("--copy"):
        stderr += "note: fake-chronicle has no clipboard; nothing was copied\n"
    return Outcome(stdout=pack["markdown"], stderr=stderr)


def _run_knowledge(invocation: Invocation, repo_root: str) -> Outcome:
    kind = invocation.options.get("--type")
    if kind is not None and kind not in ("decision", "todo"):
        return _fail(EXIT_USAGE, f'knowledge: --type must be "decision" or "todo", got "{kind}"')
    warnings = open_workspace(repo_root)
    session = invocation.options.get("--session")
    items = knowledge_items(
        load_fixture(repo_root),
        sessions=None if session is None else {str(session)},
        kind=None if kind is None else str(kind),
    )
    stderr = "".join(line + "\n" for line in warnings)
    if invocation.json:
        payload = {"apiVersion": 1, "command": "knowledge", "count": len(items), "items": items}
        return Outcome(stdout=dumps(payload) + "\n", stderr=stderr, payload=payload)
    kinds = ("decision", "todo") if kind is None else (str(kind),)
    return Outcome(stdout=knowledge_listing(items, kinds), stderr=stderr)
