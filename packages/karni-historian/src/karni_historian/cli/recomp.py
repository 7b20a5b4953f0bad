"""``karni-historian recomp``: rebuild a session's compartments from its raw messages."""

from __future__ import annotations

import sys

from karni_historian.cli.common import (
    PROG,
    CliError,
    condensable,
    config_files,
    open_store,
    positive,
    progress_stream,
    session_of,
    settings_of,
)
from karni_historian.cli.condensing import prepared, tell_notes, traced
from karni_historian.condense.recomp import recomp
from karni_historian.errors import RecompError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

__all__ = ["run"]


def run(args: argparse.Namespace, root: str) -> int:
    """Rebuild the range asked for (or resume the pending one) and publish it; the exit code."""
    wanted = _recomp_range(args.range)
    settings = settings_of(root)
    files = config_files(root)
    with open_store(root) as store:
        session_id = condensable(store, session_of(store, args.session))
        session = prepared(store, session_id, settings, files)
        if session is None:
            return 0
        try:
            outcome = recomp(
                store,
                session_id,
                wanted,
                session.settings,
                historian=traced(args, session_id, session.historian),
                progress_stream=progress_stream(args),
            )
        except RecompError as error:
            raise CliError(str(error)) from None
        tell_notes(session_id, session)
    if outcome.failed:
        print(f"{PROG}: session {session_id}: recomp failed: {outcome.error}", file=sys.stderr)
        return 1
    print(f"session {session_id}: {outcome.note}; {outcome.compartments} compartment(s) published")
    return 0


def _recomp_range(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    start, dash, end = text.partition("-")
    usage = f"the range must be START-END, positive integers with START <= END (got {text!r})"
    if not dash:
        raise CliError(usage, 2)
    first, last = positive(start, "START"), positive(end, "END")
    if last < first:
        raise CliError(usage, 2)
    return first, last
