"""``karni-historian expand``: recover raw messages, a range or one in full."""

from __future__ import annotations

from karni_historian.brief.expand import expand_range, full_message, shared_episodes
from karni_historian.cli.common import PROG, CliError, open_store, positive, session_of, settings_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

__all__ = ["run"]


def run(args: argparse.Namespace, root: str) -> int:
    """Print ``--message N`` in full, or the messages START to END; the exit code."""
    usage = (
        "provide either --message N, or START and END (positive integers, START <= END); "
        f"run `{PROG} expand --help` for usage"
    )
    if args.message is not None:
        if args.range:
            raise CliError(usage, 2)
        ordinal = positive(args.message, "--message")
    else:
        if len(args.range) != 2:
            raise CliError(usage, 2)
        start = positive(args.range[0], "START")
        end = positive(args.range[1], "END")
        if end < start:
            raise CliError(usage, 2)
    settings = settings_of(root)
    verbose = args.verbose or args.expand_verbose
    with open_store(root) as store:
        session_id = session_of(store, args.session)
        if session_id in store.imported_sessions():
            around = (ordinal, ordinal) if args.message is not None else (start, end)
            print(shared_episodes(store, session_id, *around))
            return 0
        if args.message is not None:
            text = full_message(store, session_id, ordinal, verbose=verbose)
            if text is None:
                raise CliError(
                    f"No message at ordinal {ordinal} in this session's stored history — the "
                    f"ordinal is wrong (run `{PROG} sessions` to see each session's message count)."
                )
            print(text)
        else:
            print(expand_range(store, session_id, start, end, settings, verbose=verbose))
    return 0
