"""``karni-historian wrapup``: condense all but each session's newest KEEP messages."""

from __future__ import annotations

import sys

from karni_historian.brief.cache import pending_rebuild
from karni_historian.cli.common import PROG, config_files, positive, progress_stream, settings_of
from karni_historian.cli.condensing import each_session, traced
from karni_historian.cli.render import block_shape
from karni_historian.condense import runner

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from karni_historian.condense.models.session import PreparedSession
    from karni_historian.condense.models.settings import ConfigFiles
    from karni_historian.condense.runner import RunOutcome
    from karni_historian.condense.settings import Settings
    from karni_historian.store import Store

__all__ = ["run"]


def run(args: argparse.Namespace, root: str) -> int:
    """Wrap up every session asked for, saying whether its history is rebuilt; the exit code."""
    keep = 20 if args.keep is None or not args.keep.strip() else positive(args.keep, "KEEP")
    settings, files = settings_of(root), config_files(root)

    def condense(store: Store, session_id: str, prepared: PreparedSession) -> RunOutcome:
        outcome = runner.wrapup(
            store,
            session_id,
            keep,
            prepared.settings,
            historian=traced(args, session_id, prepared.historian),
            progress_stream=progress_stream(args),
        )
        if outcome.compartments and args.verbose:  # cache-safe detail, no step to take
            print(f"{PROG}: {_rebuild_note(store, session_id, settings, files)}", file=sys.stderr)
        return outcome

    return each_session(args, root, condense)


def _rebuild_note(store: Store, session_id: str, settings: Settings, files: ConfigFiles) -> str:
    """After ``wrapup``: whether the next ``render`` rebuilds the history, and how to apply it."""
    if store.last_rebuild(session_id) is None:
        reason: str | None = "first render"  # known without reading every compartment
    else:
        shape = block_shape(store, session_id, settings, files, settings.history_budget)
        reason = pending_rebuild(store, session_id, shape)
    if reason is not None:
        return (
            f"session {session_id}: a history rebuild is pending ({reason}); "
            f"the next `{PROG} render` applies it"
        )
    return (
        f"session {session_id}: no history rebuild pending; new compartments are added after "
        f"the rebuilt block: run `{PROG} render --rebuild` to recalculate the tiers now"
    )
